/**
 * Schema-guided field extraction, the local engine's answer to "fill this JSON schema from this document": it walks
 * the schema, asks the finders for each leaf (labels, value patterns, positions on the page), converts what they
 * found to the schema's types and reports a confidence and a page box per leaf. Deterministic, offline, no model.
 * Honest by construction: a leaf nothing on the page supports is `null` (an array with no rows is `[]`).
 */
import type { DocumentLayout, ExtractionResult, FieldGrounding, JsonSchema } from '../types';
import { coerceValue } from './coerce';
import { createDocumentContext, type DocumentContext } from './document-context';
import { resolveList, resolveScalar } from './field-resolver';
import { describeField, type FieldSemantics } from './field-semantics';
import { confidenceOf, type FoundValue } from './found-value';
import { compileSchema, type ArrayNode, type FieldMeta, type FieldNode, type ObjectNode } from './schema-model';
import { proposeSchema } from './schema-proposer';
import { findTableItems } from './table.finder';
import type { NameWeights } from './issuer-weights';
import { withRulesOff } from './rule-switches';
import { fitToSchema } from './schema-fit';

/** Options of one extraction. */
export interface ExtractOptions {
  /** Report a 0..1 confidence per found leaf (keyed by dotted path). */
  confidence?: boolean;
  /** Report the page and box of each found leaf (keyed by dotted path). */
  grounding?: boolean;
  /**
   * Accepted for parity with model engines (the request's domain and prompt). The local extractor reads the schema's
   * own names, titles and descriptions; hints do not change its output.
   */
  hints?: { domain?: string; prompt?: string };
  /**
   * The weights of the business-name choice (default: the shipped ones). Only the receipts bench sets them, to score
   * weights fitted on other merchants.
   */
  nameWeights?: NameWeights;
  /** Rules of `rule-switches.ts` to switch off. Only the receipts bench sets them, to see what each rule earns. */
  rulesOff?: readonly string[];
}

/** The local schema-guided extractor. */
export interface FieldExtractor {
  extract(layout: DocumentLayout, schema: JsonSchema, options?: ExtractOptions): ExtractionResult;
  /** A JSON schema proposed from the document's own labels and tables. */
  propose(layout: DocumentLayout): JsonSchema;
}

interface Walk {
  ctx: DocumentContext;
  result: ExtractionResult;
  options: ExtractOptions;
}

function record(walk: Walk, path: string, found: FoundValue): void {
  if (walk.options.confidence) walk.result.confidence[path] = confidenceOf(found);
  if (walk.options.grounding) {
    const grounding: FieldGrounding = { page: found.page, box: { ...found.box } };
    walk.result.grounding[path] = grounding;
  }
}

const join = (path: string, key: string): string => (path ? `${path}.${key}` : key);

function extractObject(walk: Walk, node: ObjectNode, path: string, ancestors: FieldMeta[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const inner = node.meta.key ? [...ancestors, node.meta] : ancestors;
  for (const { key, node: child } of node.properties) out[key] = extractNode(walk, child, join(path, key), inner);
  return out;
}

function extractArray(walk: Walk, node: ArrayNode, path: string, ancestors: FieldMeta[]): unknown[] {
  const items = node.items;
  if (items.kind === 'object') {
    const columns = items.properties
      .filter((p) => p.node.kind === 'scalar')
      .map((p) => ({
        key: p.key,
        node: p.node,
        field: describeField(p.node.meta, [...ancestors, node.meta], { inTable: true }),
      }));
    return findTableItems(walk.ctx.index, columns).map((row, i) => {
      const out: Record<string, unknown> = {};
      for (const { key, node: child } of items.properties) {
        const found = row[key];
        const value = found && child.kind === 'scalar' ? coerceValue(child, found) : undefined;
        out[key] = value ?? (child.kind === 'array' ? [] : null);
        if (found && value !== undefined) record(walk, join(join(path, String(i)), key), found);
      }
      return out;
    });
  }
  if (items.kind !== 'scalar') return [];
  const values: unknown[] = [];
  for (const found of resolveList(walk.ctx, describeField(node.meta, ancestors, { inTable: false }))) {
    const value = coerceValue(items, found);
    if (value === undefined || values.includes(value)) continue;
    record(walk, join(path, String(values.length)), found);
    values.push(value);
  }
  return values;
}

function extractNode(walk: Walk, node: FieldNode, path: string, ancestors: FieldMeta[]): unknown {
  if (node.kind === 'object') return extractObject(walk, node, path, ancestors);
  if (node.kind === 'array') return extractArray(walk, node, path, ancestors);
  const field: FieldSemantics = describeField(
    node.meta,
    ancestors,
    node.format ? { format: node.format, inTable: false } : { inTable: false },
  );
  const found = resolveScalar(walk.ctx, node, field);
  const value = found ? coerceValue(node, found) : undefined;
  if (found && value !== undefined) {
    record(walk, path, found);
    return value;
  }
  return null;
}

/**
 * Fills `schema` from `layout`. `data` mirrors the schema (objects always present, leaves `null` when not found,
 * arrays `[]` when no rows); `confidence` and `grounding` are filled only when asked, for found leaves only.
 */
export function extractFromLayout(
  layout: DocumentLayout,
  schema: JsonSchema,
  options: ExtractOptions = {},
): ExtractionResult {
  if (options.rulesOff && options.rulesOff.length > 0) {
    const { rulesOff, ...rest } = options;
    return withRulesOff(rulesOff, () => extractFromLayout(layout, schema, rest));
  }
  const root = compileSchema(schema);
  const walk: Walk = {
    ctx: createDocumentContext(layout, options.nameWeights),
    result: { data: {}, confidence: {}, grounding: {} },
    options,
  };
  const data = root.kind === 'object' ? extractObject(walk, root, '', []) : undefined;
  walk.result.data =
    data !== undefined
      ? (fitToSchema(schema, data) as Record<string, unknown>)
      : { value: extractNode(walk, root, 'value', []) };
  return walk.result;
}

/** Creates the extractor (stateless; one instance can serve concurrent requests). */
export function createFieldExtractor(): FieldExtractor {
  return {
    extract: (layout, schema, options) => extractFromLayout(layout, schema, options),
    propose: (layout) => proposeSchema(layout),
  };
}
