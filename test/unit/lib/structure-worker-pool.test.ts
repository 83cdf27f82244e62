/**
 * The structure worker pool (src/lib/structure-pool.ts) with real worker threads running the real schema compile:
 * jobs answer in order on a pool of one, a worker that runs out of its heap cap is terminated and replaced (the
 * job rejected with WorkBudgetExceeded `worker_heap_mb`) and the next job runs on a fresh one, and `close()`
 * leaves no thread behind (jest would report the open handle).
 */
import type { compileInWorker } from '../../../src/lib/json-schema';
import { createStructurePool, type StructurePool } from '../../../src/lib/structure-pool';
import { DEFAULT_WORK_LIMITS, WorkBudgetExceeded } from '../../../src/lib/work-budget';

type Answer = ReturnType<typeof compileInWorker>;

function schemaText(count: number, description = ''): string {
  const property = { type: 'string', format: 'date', pattern: '^[0-9-]+$', description };
  return JSON.stringify({
    type: 'object',
    properties: Object.fromEntries(Array.from({ length: count }, (_, i) => [`f${i}`, property])),
  });
}

const job = (count: number) => ({ text: schemaText(count), remaining: DEFAULT_WORK_LIMITS.keyed, caller: 'keyed' });

jest.setTimeout(60_000);

describe('the structure worker pool', () => {
  let pool: StructurePool | null = null;
  afterEach(async () => {
    await pool?.close();
    pool = null;
  });

  it('compiles schemas on one worker, in order, and returns standalone code with the cost', async () => {
    pool = createStructurePool({ size: 1, heapMb: 128, deadlineMs: 30_000 });
    const answers = await Promise.all([
      pool.run<Answer>('compile-schema', job(3), 'keyed'),
      pool.run<Answer>('compile-schema', job(5), 'keyed'),
    ]);
    expect(answers.map((a) => a.kind)).toEqual(['compiled', 'compiled']);
    const [first, second] = answers;
    if (first?.kind !== 'compiled' || second?.kind !== 'compiled') throw new Error('not compiled');
    expect(first.source).toContain('module.exports');
    expect(first.cost.expandedNodes).toBe(3 + 2);
    expect(second.cost.expandedNodes).toBe(5 + 2);
    expect(pool.stats()).toMatchObject({ live: 1, ran: 2, replaced: 0, running: 0, waiting: 0 });
  });

  it('says over_budget when the schema is larger than what the request has left', async () => {
    pool = createStructurePool({ size: 1, heapMb: 128, deadlineMs: 30_000 });
    const answer = await pool.run<Answer>(
      'compile-schema',
      { ...job(50), remaining: { ...DEFAULT_WORK_LIMITS.anonymous, properties: 10 } },
      'anonymous',
    );
    expect(answer).toEqual({ kind: 'over_budget' });
  });

  it('terminates a worker that runs out of its heap, replaces it, and runs the next job on a fresh one', async () => {
    pool = createStructurePool({ size: 1, heapMb: 16, deadlineMs: 60_000 });
    // 1,900 properties with 400-character descriptions: ajv's compile of it needs more than 16 MB of heap.
    const heavy = { text: schemaText(1900, 'x'.repeat(400)), remaining: DEFAULT_WORK_LIMITS.keyed };
    expect(heavy.text.length).toBeLessThan(pool.maxPayloadChars);
    const failed: unknown = await pool
      .run('compile-schema', { ...heavy, caller: 'anonymous' }, 'anonymous')
      .catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(WorkBudgetExceeded);
    expect(failed).toMatchObject({ limit: 'worker_heap_mb', allowed: 16, caller: 'anonymous' });
    expect(pool.stats()).toMatchObject({ replaced: 1, live: 0 });
    const next = await pool.run<Answer>('compile-schema', job(3), 'keyed');
    expect(next.kind).toBe('compiled');
    expect(pool.stats()).toMatchObject({ replaced: 1, live: 1 });
  });

  it('rejects jobs after close', async () => {
    const closing = createStructurePool({ size: 1, heapMb: 64, deadlineMs: 1000 });
    await closing.close();
    await expect(closing.run('compile-schema', job(1), 'keyed')).rejects.toThrow(/closed/);
  });
});
