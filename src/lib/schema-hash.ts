/**
 * The schema hash clients use to notice a changed schema: the first 8 hex characters of the sha256 of the schema
 * serialised with sorted keys, exactly as Python's `json.dumps(schema, sort_keys=True)` writes it.
 */
import { createHash } from 'node:crypto';

/** Canonical JSON with object keys sorted at every level and Python's default separators. */
export function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(', ')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}: ${sortedJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(', ')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export const schemaHash = (schema: unknown): string =>
  createHash('sha256').update(sortedJson(schema)).digest('hex').slice(0, 8);
