/**
 * Makes the extractor's answer pass the schema it was asked to fill, without inventing values. The walk leaves
 * `null` wherever nothing was found, which a schema refuses where a property is required and not nullable, so the
 * built-in domains' own answers failed their own schemas (the receipt's `currency`, an item without a description).
 * This pass repairs only what can be repaired honestly:
 * - an array row missing a required value it cannot have is dropped (a row without its description is not a row);
 * - a nullable object whose required values are missing becomes `null`.
 * - a found scalar that breaks its own node (a `uri` that is not one, a rating past `maximum`) counts as not found.
 * A required value that was not found stays `null` at the top level and in objects that cannot be null (the
 * extractor's contract: null for what the page does not print, never a guess; an empty string was tried and broke
 * that contract for callers' own schemas): there is no honest filler for it.
 *
 * The scalar checks are Prism checking its own answer against a schema the request already paid for (its work
 * budget was charged when the schema was compiled), so they run on a budget of their own: a receipt has more
 * scalar fields than an anonymous request may send schemas. A node that says no more than its type is checked
 * here without ajv; only nodes with constraints (format, pattern, bounds, enum) are compiled, once each by content.
 */
import { checkAgainstSchema } from '../../lib/json-schema';
import { WorkBudgetExceeded, withOwnWorkBudget } from '../../lib/work-budget';

type Schema = Record<string, unknown>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `{anyOf: [X, {type: 'null'}]}` → X and nullable; anything else → itself, nullable when its type allows null. */
function unwrap(schema: unknown): { node: Schema; nullable: boolean } {
  if (!isObject(schema)) return { node: {}, nullable: true };
  const anyOf = schema['anyOf'];
  if (Array.isArray(anyOf)) {
    const rest = anyOf.filter((s) => !(isObject(s) && s['type'] === 'null'));
    if (rest.length === 1 && rest.length < anyOf.length) return { node: unwrap(rest[0]).node, nullable: true };
    return { node: schema, nullable: rest.length < anyOf.length };
  }
  const type = schema['type'];
  return { node: schema, nullable: type === 'null' || (Array.isArray(type) && type.includes('null')) };
}

const UNFIT = Symbol('unfit');

/** Keywords that say nothing a scalar could break beyond its `type`. */
const ANNOTATIONS = new Set(['type', 'description', 'title', 'examples', 'default', '$comment', 'deprecated']);

/** Whether a found (non-null) scalar `value` breaks `node`, whose `type` is a single name. */
function scalarBreaks(node: Schema, type: string, value: unknown): boolean {
  if (Object.keys(node).every((key) => ANNOTATIONS.has(key))) {
    if (type === 'string') return typeof value !== 'string';
    if (type === 'number') return typeof value !== 'number' || !Number.isFinite(value);
    if (type === 'integer') return !Number.isInteger(value);
    if (type === 'boolean') return typeof value !== 'boolean';
    return type === 'null';
  }
  try {
    return !checkAgainstSchema(node, value).valid;
  } catch (error) {
    // The pass's own budget is spent (a schema of thousands of constrained fields): keep what was found.
    if (error instanceof WorkBudgetExceeded) return false;
    throw error;
  }
}

/** The value fitted to `schema`, or UNFIT when it is required, missing and cannot honestly be filled. */
function fit(schema: unknown, value: unknown, required: boolean, row = false): unknown {
  const { node, nullable } = unwrap(schema);
  const type = node['type'];
  const scalar = value !== null && value !== undefined && typeof value !== 'object';
  if (scalar && typeof type === 'string' && scalarBreaks(node, type, value)) value = null;
  if (value === null || value === undefined) {
    if (!required || nullable) return null;
    if (type === 'array') return [];
    return UNFIT;
  }
  if (type === 'object' && isObject(value) && isObject(node['properties'])) {
    const properties = node['properties'];
    const requiredNames = Array.isArray(node['required']) ? (node['required'] as unknown[]) : [];
    const out: Record<string, unknown> = { ...value };
    for (const [name, child] of Object.entries(properties)) {
      if (!(name in value) && !requiredNames.includes(name)) continue;
      const fitted = fit(child, value[name], requiredNames.includes(name));
      if (fitted === UNFIT) {
        if (nullable) return null;
        if (!required || row) return UNFIT;
        out[name] = null;
      } else out[name] = fitted;
    }
    return out;
  }
  if (type === 'array' && Array.isArray(value)) {
    return value.map((item) => fit(node['items'], item, false, true)).filter((item) => item !== UNFIT);
  }
  return value;
}

/** `data` with the repairs above applied against `schema` (a new value; `data` is not changed). */
export function fitToSchema(schema: unknown, data: unknown): unknown {
  const fitted = withOwnWorkBudget(() => fit(schema, data, true));
  return fitted === UNFIT ? data : fitted;
}
