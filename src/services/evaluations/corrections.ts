/**
 * The expected values of one item, from its feedback: the corrected `response` JSON when the reviewer gave one;
 * otherwise, with `infer_corrections`, inferred from the notes — by the upstream model when one is configured, else
 * by deterministic rules that only read explicit statements (`total should be 120`, `status: PAID`,
 * `currency = EUR`) about fields the response has. Inferred corrections overlay the response, so the fields the
 * notes do not mention count as confirmed.
 */
import { flattenLeaves, isPlainObject, withLeaf } from './flatten';
import { firstJsonObject, type EvaluationModel } from './model';

export type CorrectionSource = 'response' | 'inferred_model' | 'inferred_rules';

export interface Expected {
  expected: Record<string, unknown> | null;
  source: CorrectionSource | null;
  /** Why nothing could be inferred, or why the rules were used instead of the model. */
  note: string | null;
}

const NONE: Expected = { expected: null, source: null, note: null };

export async function expectedFor(
  feedback: { response: Record<string, unknown> | null; notes: string | null } | null,
  predicted: unknown,
  options: { infer: boolean; model: EvaluationModel | null },
): Promise<Expected> {
  if (!feedback) return NONE;
  if (feedback.response !== null) return { expected: feedback.response, source: 'response', note: null };
  const notes = feedback.notes?.trim() ?? '';
  if (!options.infer || notes === '') return NONE;
  if (options.model) {
    try {
      const corrected = await inferWithModel(options.model, predicted, notes);
      if (corrected) return { expected: corrected, source: 'inferred_model', note: null };
    } catch (error) {
      const fallback = inferByRules(predicted, notes);
      return { ...fallback, note: `model ${options.model.id} failed (${(error as Error).message}); rules used` };
    }
    return { ...inferByRules(predicted, notes), note: `model ${options.model.id} gave no JSON object; rules used` };
  }
  return inferByRules(predicted, notes);
}

async function inferWithModel(
  model: EvaluationModel,
  predicted: unknown,
  notes: string,
): Promise<Record<string, unknown> | undefined> {
  const reply = await model.complete([
    {
      role: 'system',
      content:
        'A reviewer wrote notes about a structured extraction. Apply the notes and answer with the full ' +
        'corrected JSON object only; keep every value the notes do not correct.',
    },
    { role: 'user', content: `Extraction:\n${JSON.stringify(predicted)}\n\nReviewer notes:\n${notes}` },
  ]);
  return firstJsonObject(reply);
}

const STATEMENT =
  /^\s*(?:the\s+)?["'`]?([\p{L}\p{N}_.\- ]{1,80}?)["'`]?\s*(?:should\s+(?:be|read|say)|must\s+be|is\s+actually|is|=|:|->|→)\s*(.+?)\s*$/iu;
const WAS_SHOULD =
  /^\s*(?:the\s+)?["'`]?([\p{L}\p{N}_.\- ]{1,80}?)["'`]?\s+(?:was|is|reads|says)\s+.*?,?\s*(?:but\s+)?should\s+(?:be|read|say)\s+(.+?)\s*$/iu;
const NOT_VALUES = new Set(['wrong', 'incorrect', 'missing', 'bad', 'off', 'right', 'correct', 'fine', 'ok', 'good']);

/** Deterministic inference: explicit `<field> <verb> <value>` statements about known leaf paths. */
export function inferByRules(predicted: unknown, notes: string): Expected {
  const base = isPlainObject(predicted) ? predicted : {};
  const leaves = flattenLeaves(base);
  const byKey = new Map<string, string[]>();
  for (const path of leaves.keys()) {
    for (const key of [path, path.split('.').pop() as string]) {
      const k = keyOf(key);
      byKey.set(k, [...(byKey.get(k) ?? []), path]);
    }
  }
  let corrected: Record<string, unknown> = base;
  let applied = 0;
  for (const clause of notes.split(/\n|;|(?<=[^\d])\.(?=\s|$)/)) {
    const m = WAS_SHOULD.exec(clause) ?? STATEMENT.exec(clause);
    if (!m) continue;
    const paths = [...new Set(byKey.get(keyOf(m[1] as string)) ?? [])];
    if (paths.length !== 1) continue;
    const path = paths[0] as string;
    const value = parseValue((m[2] as string).trim(), leaves.get(path));
    if (value === undefined) continue;
    corrected = withLeaf(corrected, path, value);
    applied += 1;
  }
  if (applied === 0) {
    return { expected: null, source: null, note: 'no correction could be read from the notes without a model' };
  }
  return { expected: corrected, source: 'inferred_rules', note: null };
}

const keyOf = (text: string): string =>
  text
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');

function parseValue(raw: string, previous: unknown): unknown {
  const unquoted = raw.replace(/^["'`](.*)["'`]$/s, '$1').trim();
  const word = unquoted.toLowerCase();
  if (unquoted === '' || NOT_VALUES.has(word)) return undefined;
  if (word === 'null' || word === 'none' || word === 'empty') return null;
  if (word === 'true' || word === 'false') return word === 'true';
  if (typeof previous === 'number' || (previous === null && /^[+-]?\d+(\.\d+)?$/.test(unquoted))) {
    const n = Number(unquoted.replace(/,/g, ''));
    if (Number.isFinite(n)) return n;
  }
  return unquoted;
}
