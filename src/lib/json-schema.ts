/**
 * JSON Schema checking with ajv: compile a caller's schema once (cached by content) and validate outputs.
 *
 * Callers send draft-07 and 2020-12-ish schemas with pydantic extras (`title`, `default`, `$defs`); ajv runs in
 * non-strict mode so unknown keywords are ignored rather than fatal, and formats (`date`, `date-time`, `email`)
 * are checked by ajv-formats.
 */
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { createHash } from 'node:crypto';

const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: true, allowUnionTypes: true });
addFormats(ajv);
const cache = new Map<string, ValidateFunction>();
const MAX_CACHED = 256;

export interface SchemaCheck {
  valid: boolean;
  /** Human-readable problems (`/total must be number`), at most ten. */
  errors: string[];
}

/**
 * Compiles `schema`, throwing an Error with a readable message when it is not a usable JSON schema.
 */
export function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  const key = createHash('sha256').update(JSON.stringify(schema)).digest('hex');
  const cached = cache.get(key);
  if (cached) return cached;
  const validate = ajv.compile(schema);
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value ?? '');
  cache.set(key, validate);
  return validate;
}

export function checkAgainstSchema(schema: Record<string, unknown>, value: unknown): SchemaCheck {
  const validate = compileSchema(schema);
  const valid = validate(value);
  const errors = (validate.errors ?? [])
    .slice(0, 10)
    .map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`.trim());
  return { valid: Boolean(valid), errors };
}
