/**
 * Turns a caller's JSON schema into a small tree the extractor can walk: `$ref`s resolved against the root
 * (`#/$defs/...`, `#/definitions/...`), nullable forms (`type: ['string','null']`, `anyOf` with null, OpenAPI
 * `nullable`) folded into one flag, `allOf` merged, and types inferred where the schema leaves them implicit. The
 * finders then only ever see objects, arrays and scalars.
 *
 * The tree is bounded whatever the schema: a `$ref` to a schema it is already inside of is not followed again (the
 * field reads as a string), and past {@link MAX_TREE_NODES} nodes further fields are left out. Routes refuse such
 * schemas before they get here (lib/json-schema.ts); this keeps the extractor's cost bounded for any other caller.
 */
import type { JsonSchema } from '../types';

export type ScalarType = 'string' | 'number' | 'integer' | 'boolean';

/** What a field says about itself: its key, and the title and description the schema gives it. */
export interface FieldMeta {
  key: string;
  title?: string;
  description?: string;
}

interface NodeBase {
  meta: FieldMeta;
  nullable: boolean;
}

export interface ObjectNode extends NodeBase {
  kind: 'object';
  properties: { key: string; node: FieldNode }[];
}

export interface ArrayNode extends NodeBase {
  kind: 'array';
  items: FieldNode;
}

export interface ScalarNode extends NodeBase {
  kind: 'scalar';
  type: ScalarType;
  format?: string;
  enumValues?: unknown[];
}

/** One node of a compiled schema. */
export type FieldNode = ObjectNode | ArrayNode | ScalarNode;

const MAX_DEPTH = 12;
/** Nodes one compiled tree may hold (the routes' budget, lib/json-schema.ts, is 4000 expanded schema objects). */
export const MAX_TREE_NODES = 4000;

/** The walk's state: nodes left to build and the `$ref`s being expanded on the current path. */
interface Budget {
  left: number;
  refs: Set<string>;
}
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);

function resolvePointer(root: JsonSchema, ref: string): Record<string, unknown> | undefined {
  if (!ref.startsWith('#')) return undefined;
  let at: unknown = root;
  for (const raw of ref.slice(1).split('/').filter(Boolean)) {
    const part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    at = isRecord(at) ? at[part] : undefined;
  }
  return isRecord(at) ? at : undefined;
}

/** Follows `$ref`s and flattens `allOf`/`anyOf`/`oneOf` into one schema plus a nullable flag. */
function flatten(
  root: JsonSchema,
  schema: Record<string, unknown>,
  depth: number,
  budget: Budget,
): [Record<string, unknown>, boolean] {
  budget.left -= 1;
  let nullable = schema['nullable'] === true;
  let out: Record<string, unknown> = { ...schema };
  const ref = str(schema['$ref']);
  if (ref && depth < MAX_DEPTH && budget.left > 0 && !budget.refs.has(ref)) {
    const target = resolvePointer(root, ref);
    if (target) {
      budget.refs.add(ref);
      const [resolved, n] = flatten(root, target, depth + 1, budget);
      budget.refs.delete(ref);
      nullable ||= n;
      out = { ...resolved, ...Object.fromEntries(Object.entries(schema).filter(([k]) => k !== '$ref')) };
    }
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = out[key];
    if (!Array.isArray(branches)) continue;
    const options = branches
      .filter(isRecord)
      .slice(0, Math.max(0, budget.left))
      .map((b) => flatten(root, b, depth + 1, budget));
    nullable ||= options.some(([b, n]) => n || b['type'] === 'null');
    const chosen = options.map(([b]) => b).find((b) => b['type'] !== 'null');
    delete out[key];
    if (chosen) out = { ...chosen, ...out };
  }
  if (Array.isArray(out['allOf'])) {
    const parts = out['allOf']
      .filter(isRecord)
      .slice(0, Math.max(0, budget.left))
      .map((b) => flatten(root, b, depth + 1, budget)[0]);
    const properties: Record<string, unknown> = {};
    const merged: Record<string, unknown> = {};
    for (const p of parts) {
      Object.assign(merged, p);
      if (isRecord(p['properties'])) Object.assign(properties, p['properties']);
    }
    if (isRecord(out['properties'])) Object.assign(properties, out['properties']);
    delete out['allOf'];
    out = { ...merged, ...out, ...(Object.keys(properties).length > 0 ? { properties } : {}) };
  }
  const type = out['type'];
  if (Array.isArray(type)) {
    nullable ||= type.includes('null');
    out['type'] = type.find((t) => t !== 'null');
  } else if (type === 'null') nullable = true;
  return [out, nullable];
}

function inferType(s: Record<string, unknown>): string {
  const type = str(s['type']);
  if (type) return type;
  if (isRecord(s['properties'])) return 'object';
  if (s['items'] !== undefined) return 'array';
  const sample = Array.isArray(s['enum']) ? (s['enum'] as unknown[]).find((v) => v !== null) : s['const'];
  if (typeof sample === 'number') return 'number';
  if (typeof sample === 'boolean') return 'boolean';
  return 'string';
}

function compileNode(
  root: JsonSchema,
  raw: Record<string, unknown>,
  key: string,
  depth: number,
  budget: Budget,
): FieldNode {
  const [s, nullable] = flatten(root, raw, depth, budget);
  const meta: FieldMeta = { key };
  const title = str(s['title']);
  const description = str(s['description']);
  if (title) meta.title = title;
  if (description) meta.description = description;
  const type = depth >= MAX_DEPTH || budget.left <= 0 ? 'string' : inferType(s);
  if (type === 'object') {
    const props = isRecord(s['properties']) ? s['properties'] : {};
    const properties: ObjectNode['properties'] = [];
    for (const [k, v] of Object.entries(props)) {
      if (budget.left <= 0) break;
      if (isRecord(v)) properties.push({ key: k, node: compileNode(root, v, k, depth + 1, budget) });
    }
    return { kind: 'object', meta, nullable, properties };
  }
  if (type === 'array') {
    const items = isRecord(s['items']) ? s['items'] : {};
    return { kind: 'array', meta, nullable, items: compileNode(root, items, key, depth + 1, budget) };
  }
  const scalar: ScalarNode = {
    kind: 'scalar',
    meta,
    nullable,
    type: type === 'number' || type === 'integer' || type === 'boolean' ? type : 'string',
  };
  const format = str(s['format']);
  if (format) scalar.format = format;
  const values = Array.isArray(s['enum']) ? (s['enum'] as unknown[]) : 'const' in s ? [s['const']] : undefined;
  if (values) {
    if (values.includes(null)) scalar.nullable = true;
    scalar.enumValues = values.filter((v) => v !== null);
  }
  return scalar;
}

/** Compiles a JSON schema (root usually an object schema) into a {@link FieldNode} tree. */
export function compileSchema(schema: JsonSchema): FieldNode {
  return compileNode(schema, schema, '', 0, { left: MAX_TREE_NODES, refs: new Set() });
}
