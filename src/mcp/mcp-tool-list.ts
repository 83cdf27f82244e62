/**
 * Makes the `tools/list` answer small without changing what it says: every client puts the whole list into its
 * model's context, so each byte is paid in every conversation. The SDK's zod-to-JSON-Schema output carries parts
 * that add nothing: `$schema` on every schema, `propertyNames: {type: string}` and `additionalProperties: {}` on
 * records (JSON keys are strings; any value is the default), the ±2^53 bounds zod writes for `.int()`, the
 * annotation title repeating the tool title, and `execution.taskSupport: "forbidden"` (the default). A nullable
 * field's `anyOf: [X, {type: null}]` becomes X with `null` added to its `type` (and to its `enum`), which validates
 * the same values in a third of the bytes. Output schemas drop `additionalProperties: false`: a record may gain
 * fields in a later version (as the REST bodies do); `required` still says which are always there. A boolean's
 * `default: false` goes too: an absent flag is off, as every client assumes.
 */
import type { ListToolsResult } from '@modelcontextprotocol/sdk/types.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const SAFE_BOUND = Number.MAX_SAFE_INTEGER;

function compactSchema(value: Json, open = false): Json {
  if (Array.isArray(value)) return value.map((item) => compactSchema(item, open));
  if (value === null || typeof value !== 'object') return value;
  const nullable = nullableAsType(value);
  if (nullable) return compactSchema(nullable, open);
  const out: Record<string, Json> = {};
  for (const [key, child] of Object.entries(value)) {
    if (key === '$schema') continue;
    if (key === 'propertyNames' && isStringType(child)) continue;
    if (key === 'additionalProperties' && isEmptyObject(child)) continue;
    if ((key === 'maximum' && child === SAFE_BOUND) || (key === 'minimum' && child === -SAFE_BOUND)) continue;
    if (open && key === 'additionalProperties' && child === false) continue;
    if (key === 'default' && child === false && value.type === 'boolean') continue;
    out[key] = compactSchema(child, open);
  }
  return out;
}

/**
 * `{anyOf: [X, {type: "null"}]}` (X with one `type` and no other combinator) as X admitting null: same values. A
 * nested `anyOf` in X is widened by one `{type: "null"}` branch instead.
 */
function nullableAsType(value: { [key: string]: Json }): { [key: string]: Json } | null {
  const branches = value.anyOf;
  if (
    !Array.isArray(branches) ||
    branches.length !== 2 ||
    Object.keys(value).some((k) => k !== 'anyOf' && k !== 'description')
  ) {
    return null;
  }
  const [inner, nullBranch] = branches;
  if (!isNullType(nullBranch) || typeof inner !== 'object' || inner === null || Array.isArray(inner)) return null;
  const extra = value.description === undefined ? {} : { description: value.description };
  if (Array.isArray(inner.anyOf) && Object.keys(inner).length === 1) {
    return { anyOf: [...inner.anyOf, { type: 'null' }], ...extra };
  }
  if (typeof inner.type !== 'string' || 'anyOf' in inner || 'oneOf' in inner || 'const' in inner) return null;
  const widened: { [key: string]: Json } = { ...inner, type: [inner.type, 'null'], ...extra };
  if (Array.isArray(inner.enum)) widened.enum = [...inner.enum, null];
  return widened;
}

const isNullType = (v: Json | undefined): boolean =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 1 && v.type === 'null';

const isEmptyObject = (v: Json | undefined): boolean =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;

const isStringType = (v: Json | undefined): boolean =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 1 && v.type === 'string';

export function compactToolList(list: ListToolsResult): ListToolsResult {
  return {
    ...list,
    tools: list.tools.map((tool) => {
      const { execution, annotations, inputSchema, outputSchema, ...rest } = tool;
      const { title: annotationTitle, ...hints } = annotations ?? {};
      const keepExecution = execution !== undefined && execution.taskSupport !== 'forbidden';
      return {
        ...rest,
        inputSchema: compactSchema(inputSchema as Json) as typeof inputSchema,
        ...(outputSchema ? { outputSchema: compactSchema(outputSchema as Json, true) as typeof outputSchema } : {}),
        ...(annotations
          ? { annotations: annotationTitle !== undefined && annotationTitle !== tool.title ? annotations : hints }
          : {}),
        ...(keepExecution ? { execution } : {}),
      };
    }),
  };
}
