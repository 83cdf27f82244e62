/**
 * Scores one item with the chosen evaluators and folds items into per-evaluator, per-field and overall figures.
 *
 * Fields are the dotted leaf paths of the expected values (see flatten.ts); a null expected value is skipped unless
 * `skip_null_expected` is false. Per evaluator, an item's score is:
 * - `field_accuracy`: the share of fields whose predicted leaf equals the expected one exactly (strings trimmed,
 *   objects with keys in any order, lists whole);
 * - `fuzzy_field_match`: the share of fields whose normalised similarity reaches the threshold (default 0.85);
 * - `equals_expected`: 1 when every field matches exactly, else 0;
 * - `llm_judge`: the judge model's score in [0, 1].
 * An evaluator's accuracy is the mean of its item scores over the items it could score.
 */
import type { EvaluatorName } from '../../domain/evaluation';
import { flattenLeaves } from './flatten';
import type { JudgeVerdict } from './judge';
import { exactMatch, fuzzySimilarity } from './similarity';

export interface ScoreOptions {
  evaluators: EvaluatorName[];
  skipNullExpected: boolean;
  fuzzyThreshold: number;
  judge: ((expected: Record<string, unknown>, predicted: unknown) => Promise<JudgeVerdict>) | null;
}

export interface FieldVerdict {
  path: string;
  expected: unknown;
  predicted: unknown;
  exact: boolean;
  similarity: number;
  /** llm_judge's verdict on this path, when it gave one. */
  judged?: boolean;
}

export interface ItemScore {
  scores: Partial<Record<EvaluatorName, number | null>>;
  fields: FieldVerdict[];
  judge: { reason: string } | { error: string } | null;
}

const round = (n: number): number => Math.round(n * 10_000) / 10_000;

export async function scoreItem(
  expected: Record<string, unknown>,
  predicted: unknown,
  options: ScoreOptions,
): Promise<ItemScore> {
  const got = flattenLeaves(predicted);
  const fields: FieldVerdict[] = [];
  for (const [path, want] of flattenLeaves(expected)) {
    if (want === null && options.skipNullExpected) continue;
    const value = got.has(path) ? got.get(path) : null;
    fields.push({
      path,
      expected: want,
      predicted: value,
      exact: exactMatch(want, value),
      similarity: round(fuzzySimilarity(want, value)),
    });
  }
  const scores: ItemScore['scores'] = {};
  let judge: ItemScore['judge'] = null;
  const share = (ok: (f: FieldVerdict) => boolean): number | null =>
    fields.length === 0 ? null : round(fields.filter(ok).length / fields.length);
  for (const evaluator of options.evaluators) {
    switch (evaluator) {
      case 'field_accuracy':
        scores.field_accuracy = share((f) => f.exact);
        break;
      case 'fuzzy_field_match':
        scores.fuzzy_field_match = share((f) => f.similarity >= options.fuzzyThreshold);
        break;
      case 'equals_expected':
        scores.equals_expected = fields.length === 0 ? null : fields.every((f) => f.exact) ? 1 : 0;
        break;
      case 'llm_judge':
        if (!options.judge) throw new Error('llm_judge needs a judge model');
        try {
          const verdict = await options.judge(expected, predicted);
          scores.llm_judge = round(verdict.score);
          judge = { reason: verdict.reason };
          for (const f of fields) if (f.path in verdict.fields) f.judged = verdict.fields[f.path] as boolean;
        } catch (error) {
          scores.llm_judge = null;
          judge = { error: (error as Error).message };
        }
        break;
    }
  }
  return { scores, fields, judge };
}

export interface EvaluatorSummary {
  accuracy: number | null;
  items_scored: number;
  fields: Record<string, { compared: number; matched: number; accuracy: number }>;
}

/** Per-evaluator accuracy (mean of item scores) and per-field match counts. */
export function summarise(
  items: ItemScore[],
  evaluators: EvaluatorName[],
  fuzzyThreshold: number,
): Record<string, EvaluatorSummary> {
  const out: Record<string, EvaluatorSummary> = {};
  for (const evaluator of evaluators) {
    let sum = 0;
    let scored = 0;
    const fields: EvaluatorSummary['fields'] = {};
    for (const item of items) {
      const score = item.scores[evaluator];
      if (score === null || score === undefined) continue;
      sum += score;
      scored += 1;
      for (const f of item.fields) {
        const matched = fieldMatched(evaluator, f, fuzzyThreshold);
        if (matched === undefined) continue;
        const entry = (fields[f.path] ??= { compared: 0, matched: 0, accuracy: 0 });
        entry.compared += 1;
        if (matched) entry.matched += 1;
      }
    }
    for (const entry of Object.values(fields)) entry.accuracy = round(entry.matched / entry.compared);
    out[evaluator] = { accuracy: scored === 0 ? null : round(sum / scored), items_scored: scored, fields };
  }
  return out;
}

function fieldMatched(evaluator: EvaluatorName, f: FieldVerdict, threshold: number): boolean | undefined {
  if (evaluator === 'fuzzy_field_match') return f.similarity >= threshold;
  if (evaluator === 'llm_judge') return f.judged;
  return f.exact;
}
