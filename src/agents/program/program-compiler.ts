/**
 * Program mode's compiler: turns the trace of a successful, schema-valid agent run into a program — the ordered
 * tool calls with their arguments bound to input slots and earlier outputs (ReWOO-style `$ref`s), plus how the
 * final response is assembled — so a later request can replay it with no model call.
 *
 * Binding is by value: an argument string equal to an input's source becomes `inputs.<slot>.source`; a value equal
 * to something an earlier step returned becomes `steps.<id>.output.<path>`; the response (or each of its leaves)
 * is bound the same way. What matches nothing stays a literal.
 */
import type { ProgramDefinition, ProgramValue } from '../../domain/execution';
import type { PlannerInput } from '../sdk';

export interface CompiledStepInput {
  tool: string;
  arguments: Record<string, unknown>;
  output: Record<string, unknown>;
  goal: string | null;
}

export function compileProgram(
  inputs: PlannerInput[],
  steps: CompiledStepInput[],
  response: Record<string, unknown>,
): ProgramDefinition {
  const known: { path: string; value: unknown }[] = [];
  for (const input of inputs) {
    if (input.kind === 'media') known.push({ path: `inputs.${input.slot}.source`, value: input.source });
    else if (input.kind === 'text') known.push({ path: `inputs.${input.slot}.text`, value: input.text });
  }
  const compiled: ProgramDefinition['steps'] = [];
  steps.forEach((step, i) => {
    const id = `s${i + 1}`;
    compiled.push({ id, tool: step.tool, args: bind(step.arguments, known, false), goal: step.goal });
    for (const leaf of leaves(step.output, `steps.${id}.output`)) known.push(leaf);
  });
  return { version: 1, steps: compiled, response: bind(response, known, true) };
}

/** The input signature a program is stored under: slot names and what they hold, order-independent. */
export function inputSignature(inputs: PlannerInput[]): string {
  return inputs
    .map((i) => `${i.slot}:${i.kind === 'media' ? i.family : i.kind}`)
    .sort()
    .join('|');
}

function bind(value: unknown, known: { path: string; value: unknown }[], wholeObjects: boolean): ProgramValue {
  // Later outputs first: a value produced by the last step is the most specific source.
  const match = [...known].reverse().find((k) => sameValue(k.value, value) && (wholeObjects || isScalar(value)));
  if (match && !(isScalar(value) && (value === null || typeof value === 'boolean' || value === ''))) {
    return { $ref: match.path };
  }
  if (Array.isArray(value)) return { $array: value.map((v) => bind(v, known, wholeObjects)) };
  if (value && typeof value === 'object') {
    return {
      $object: Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, bind(v, known, wholeObjects)]),
      ),
    };
  }
  return { $literal: value };
}

/** Every sub-value of `value` with its dotted path (objects and arrays too, so whole objects can be bound). */
function leaves(value: unknown, path: string): { path: string; value: unknown }[] {
  const out = [{ path, value }];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...leaves(v, `${path}.${i}`)));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out.push(...leaves(v, `${path}.${k}`));
  }
  return out;
}

const isScalar = (v: unknown): boolean => v === null || typeof v !== 'object';

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Resolves a program value against the replay's inputs and step outputs. @throws when a `$ref` is missing. */
export function resolveValue(value: ProgramValue, scope: Record<string, unknown>): unknown {
  if ('$literal' in value) return value.$literal;
  if ('$array' in value) return value.$array.map((v) => resolveValue(v, scope));
  if ('$object' in value) {
    return Object.fromEntries(Object.entries(value.$object).map(([k, v]) => [k, resolveValue(v, scope)]));
  }
  let current: unknown = scope;
  for (const key of value.$ref.split('.')) {
    if (current === null || typeof current !== 'object' || !(key in current)) {
      throw new Error(`The program refers to ${value.$ref}, which this run does not have`);
    }
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}
