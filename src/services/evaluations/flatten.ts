/**
 * Flattening for evaluations: a response and its expected values become maps of dotted
 * leaf paths (`customer.address.city`). Lists are atomic leaves (compared whole, never element by element), keys
 * containing `_metadata` are skipped, and an empty object is a leaf of its own so `{}` versus a filled object still
 * counts as a difference. A response that is not an object is the single leaf `$`.
 */

export const ROOT_PATH = '$';

export function flattenLeaves(value: unknown): Map<string, unknown> {
  const leaves = new Map<string, unknown>();
  if (!isPlainObject(value)) {
    if (value !== undefined) leaves.set(ROOT_PATH, value);
    return leaves;
  }
  walk(value, '', leaves);
  return leaves;
}

function walk(object: Record<string, unknown>, prefix: string, leaves: Map<string, unknown>): void {
  for (const [key, child] of Object.entries(object)) {
    if (key.includes('_metadata')) continue;
    const path = prefix === '' ? key : `${prefix}.${key}`;
    if (isPlainObject(child) && Object.keys(child).length > 0) walk(child, path, leaves);
    else leaves.set(path, child === undefined ? null : child);
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Sets `path` (dotted) in a copy of `object`, creating objects along the way. */
export function withLeaf(object: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(object);
  const keys = path.split('.');
  let node: Record<string, unknown> = copy;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    if (!isPlainObject(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1] as string] = value;
  return copy;
}
