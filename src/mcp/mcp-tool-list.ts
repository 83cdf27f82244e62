/**
 * Makes the `tools/list` answer small without changing what it says: every client puts the whole list into its
 * model's context, so each byte is paid in every conversation. The SDK's zod-to-JSON-Schema output carries parts
 * that add nothing: `$schema` on every schema, `propertyNames: {type: string}` and `additionalProperties: {}` on
 * records (JSON keys are strings; any value is the default), the ±2^53 bounds zod writes for `.int()`, the
 * annotation title repeating the tool title, and `execution.taskSupport: "forbidden"` (the default).
 */
import type { ListToolsResult } from '@modelcontextprotocol/sdk/types.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const SAFE_BOUND = Number.MAX_SAFE_INTEGER;

function compactSchema(value: Json): Json {
  if (Array.isArray(value)) return value.map(compactSchema);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, Json> = {};
  for (const [key, child] of Object.entries(value)) {
    if (key === '$schema') continue;
    if (key === 'propertyNames' && isStringType(child)) continue;
    if (key === 'additionalProperties' && isEmptyObject(child)) continue;
    if ((key === 'maximum' && child === SAFE_BOUND) || (key === 'minimum' && child === -SAFE_BOUND)) continue;
    out[key] = compactSchema(child);
  }
  return out;
}

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
        ...(outputSchema ? { outputSchema: compactSchema(outputSchema as Json) as typeof outputSchema } : {}),
        ...(annotations
          ? { annotations: annotationTitle !== undefined && annotationTitle !== tool.title ? annotations : hints }
          : {}),
        ...(keepExecution ? { execution } : {}),
      };
    }),
  };
}
