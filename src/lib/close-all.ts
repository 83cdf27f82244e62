/**
 * Shutdown that cannot skip a step.
 *
 * A composition root releases many things in order (running work, engines, queued writes, the database). Written as
 * plain sequential awaits, one step that throws skips every later one — queued wallet debits are lost and the
 * database stays open. `closeAll` runs every step in order whatever the earlier ones did, then reports the failures.
 */

/** One named shutdown step; the name says in the error which step failed. */
export interface CloseStep {
  name: string;
  run: () => unknown;
}

/**
 * Runs each step in order, each awaited and each guarded, so a failing step never skips the ones after it.
 * @throws AggregateError naming every failed step, after all steps ran.
 */
export async function closeAll(steps: readonly CloseStep[]): Promise<void> {
  const failures: Error[] = [];
  for (const step of steps) {
    try {
      await step.run();
    } catch (error) {
      failures.push(
        new Error(`${step.name}: ${error instanceof Error ? error.message : String(error)}`, { cause: error }),
      );
    }
  }
  if (failures.length > 0) {
    throw new AggregateError(failures, `shutdown: ${failures.map((f) => f.message).join('; ')}`);
  }
}
