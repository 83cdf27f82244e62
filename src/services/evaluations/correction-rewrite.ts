/**
 * Turns reviewed corrections into a better skill, deterministically: the new SKILL.md keeps the old instructions
 * and adds a section citing the corrected cases (item, field, what the response said, what the reviewer wrote);
 * the new schema.json tightens every corrected field:
 * - a short categorical text field gets an `enum` of the reviewed values (when a value repeats across items, or the
 *   response held the right word inside extra text), with "Answer with exactly one of the listed choices.";
 * - a text field answered with extra words gets "Give only the printed token itself, without surrounding words.";
 * - a numeric field answered as text gets "Plain numeric form, without symbols or thousands separators.";
 * - a field the response left empty gets "Reviewed examples show this field is present; fill it when the page
 *   shows it."; any other corrected field points to the cited cases.
 * The added sentences avoid words the local extractor reads as field roles (amount, date, number, name…), so a
 * description never changes what kind of field the extractor looks for; the reviewed values themselves go into
 * `enum` and the instructions, not the description. Nothing here calls a model.
 */
import { flattenLeaves, isPlainObject } from './flatten';
import { exactMatch } from './similarity';

export interface Correction {
  entityId: string;
  expected: Record<string, unknown>;
  predicted: unknown;
}

export interface SchemaChange {
  path: string;
  change: 'enum' | 'description' | 'added';
  enum?: unknown[];
  description?: string;
}

export interface CitedCase {
  entityId: string;
  path: string;
  predicted: unknown;
  expected: unknown;
}

export interface Optimised {
  schema: Record<string, unknown>;
  /** The section appended to the instructions. */
  casesSection: string;
  changes: SchemaChange[];
  cases: CitedCase[];
  correctedItems: number;
}

const ENUM_SENTENCE = 'Answer with exactly one of the listed choices.';
const TOKEN_SENTENCE = 'Give only the printed token itself, without surrounding words.';
const NUMERIC_SENTENCE = 'Plain numeric form, without symbols or thousands separators.';
const PRESENT_SENTENCE = 'Reviewed examples show this field is present; fill it when the page shows it.';
const CASES_SENTENCE = 'Reviewers corrected this field; follow the cases in SKILL.md.';
const MAX_ENUM = 12;
const MAX_CASES_PER_FIELD = 3;
const MAX_CASES = 60;

export function optimiseSkill(baseSchema: Record<string, unknown>, corrections: Correction[]): Optimised {
  const schema = structuredClone(baseSchema);
  const cases: CitedCase[] = [];
  const valuesByPath = new Map<string, unknown[]>();
  const corrected = new Set<string>();
  for (const c of corrections) {
    const got = flattenLeaves(c.predicted);
    for (const [path, want] of flattenLeaves(c.expected)) {
      if (want === null) continue;
      valuesByPath.set(path, [...(valuesByPath.get(path) ?? []), want]);
      const value = got.has(path) ? got.get(path) : null;
      if (!exactMatch(want, value)) {
        cases.push({ entityId: c.entityId, path, predicted: value, expected: want });
        corrected.add(c.entityId);
      }
    }
  }
  const changes: SchemaChange[] = [];
  const byPath = new Map<string, CitedCase[]>();
  for (const c of cases) byPath.set(c.path, [...(byPath.get(c.path) ?? []), c]);
  for (const [path, fieldCases] of [...byPath].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const located = locate(schema, path);
    if (!located) continue;
    const { node, added } = located;
    if (added) changes.push({ path, change: 'added' });
    const values = valuesByPath.get(path) ?? [];
    const enumValues = enumFor(node, values, fieldCases);
    if (enumValues) {
      setEnum(node, enumValues);
      changes.push({ path, change: 'enum', enum: enumValues });
      changes.push({ path, change: 'description', description: addSentence(node, ENUM_SENTENCE) });
      continue;
    }
    changes.push({ path, change: 'description', description: addSentence(node, sentenceFor(fieldCases)) });
  }
  return {
    schema,
    casesSection: casesSection(cases, corrections.length),
    changes,
    cases: cases.slice(0, MAX_CASES),
    correctedItems: corrected.size,
  };
}

function sentenceFor(fieldCases: CitedCase[]): string {
  if (fieldCases.every((c) => c.predicted === null || c.predicted === undefined)) return PRESENT_SENTENCE;
  if (fieldCases.every((c) => typeof c.expected === 'number' && typeof c.predicted === 'string')) {
    return NUMERIC_SENTENCE;
  }
  if (fieldCases.every((c) => containsWord(c.predicted, c.expected))) return TOKEN_SENTENCE;
  return CASES_SENTENCE;
}

const containsWord = (predicted: unknown, expected: unknown): boolean =>
  typeof predicted === 'string' &&
  typeof expected === 'string' &&
  expected.trim() !== '' &&
  predicted.toLowerCase().includes(expected.trim().toLowerCase());

/** The reviewed values as an enum, when the field is short categorical text; else undefined. */
function enumFor(node: Record<string, unknown>, values: unknown[], fieldCases: CitedCase[]): unknown[] | undefined {
  if (!acceptsString(node)) return undefined;
  if (!values.every((v) => typeof v === 'string' && v.trim() !== '' && v.length <= 40 && v.split(/\s+/).length <= 4)) {
    return undefined;
  }
  const existing = (Array.isArray(node.enum) ? (node.enum as unknown[]) : []).filter((v) => v !== null);
  // The schema's own values keep their order; reviewed ones follow in sorted order (independent of item order).
  const added = [...new Set(values as string[])]
    .filter((v) => !existing.includes(v))
    .sort((a, b) => a.localeCompare(b));
  const distinct = [...existing, ...added];
  if (distinct.length > MAX_ENUM) return undefined;
  const counts = new Map<unknown, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  const repeats = [...counts.values()].some((n) => n >= 2);
  const inside = fieldCases.every((c) => containsWord(c.predicted, c.expected));
  return repeats || inside ? distinct : undefined;
}

function acceptsString(node: Record<string, unknown>): boolean {
  const type = node.type;
  if (type === 'string') return node.format === undefined;
  return Array.isArray(type) && type.includes('string') && type.every((t) => t === 'string' || t === 'null');
}

function setEnum(node: Record<string, unknown>, values: unknown[]): void {
  const nullable = Array.isArray(node.type) && node.type.includes('null');
  node.enum = nullable ? [...values, null] : values;
}

function addSentence(node: Record<string, unknown>, sentence: string): string {
  const current = typeof node.description === 'string' ? node.description.trim() : '';
  const joined = current === '' || /[.!?]$/.test(current) ? current : `${current}.`;
  const description = current.includes(sentence) ? current : [joined, sentence].filter(Boolean).join(' ');
  node.description = description;
  return description;
}

/**
 * The schema node of a dotted path: through `properties`, local `$ref`s (`#/$defs/X`, `#/definitions/X`) and the
 * non-null branch of `anyOf`/`oneOf`. A path the schema lacks is added under the nearest object (typed from the
 * reviewed value) so the next version asks for it; null when the path cannot be placed.
 */
function locate(
  schema: Record<string, unknown>,
  path: string,
): { node: Record<string, unknown>; added: boolean } | null {
  let node = deref(schema, schema);
  const keys = path.split('.');
  for (const [i, key] of keys.entries()) {
    const properties = (node.properties ??= {}) as Record<string, unknown>;
    if (!isPlainObject(properties)) return null;
    const child = properties[key];
    if (!isPlainObject(child)) {
      if (i < keys.length - 1) {
        properties[key] = { type: 'object', properties: {} };
        node = properties[key] as Record<string, unknown>;
        continue;
      }
      properties[key] = { type: ['string', 'null'] };
      return { node: properties[key] as Record<string, unknown>, added: true };
    }
    node = deref(schema, child);
  }
  return { node, added: false };
}

function deref(root: Record<string, unknown>, node: Record<string, unknown>): Record<string, unknown> {
  let current = node;
  for (let hops = 0; hops < 8; hops++) {
    const ref = current.$ref;
    if (typeof ref === 'string') {
      const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
      const defs = m ? root[m[1] as string] : undefined;
      const target = isPlainObject(defs) ? defs[m?.[2] as string] : undefined;
      if (!isPlainObject(target)) return current;
      current = target;
      continue;
    }
    const branches = current.anyOf ?? current.oneOf;
    if (Array.isArray(branches)) {
      const real = branches.filter((b) => isPlainObject(b) && b.type !== 'null') as Record<string, unknown>[];
      if (real.length === 1) {
        current = real[0] as Record<string, unknown>;
        continue;
      }
    }
    return current;
  }
  return current;
}

const show = (value: unknown): string => JSON.stringify(value) ?? 'null';

function casesSection(cases: CitedCase[], reviewed: number): string {
  if (cases.length === 0) return '';
  const lines = [
    '## Corrections from reviewed feedback',
    '',
    `Reviewers checked ${reviewed} item(s) and corrected ${cases.length} field value(s). Answer these fields the ` +
      'way the reviewed values show:',
    '',
  ];
  const perField = new Map<string, number>();
  let cited = 0;
  for (const c of cases) {
    const n = perField.get(c.path) ?? 0;
    if (n >= MAX_CASES_PER_FIELD || cited >= MAX_CASES) continue;
    perField.set(c.path, n + 1);
    cited += 1;
    lines.push(
      `- \`${c.path}\` (item ${c.entityId}): the response said ${show(c.predicted)}; reviewed value ${show(c.expected)}.`,
    );
  }
  return lines.join('\n');
}
