/**
 * `llm_judge`: an upstream chat model compares one item's response with its expected values and answers with a
 * score in [0, 1], a short reason and, when it can, a verdict per field path. A reply that is not such an object
 * is an error for that item (the run records it and goes on), never a made-up score.
 */
import { firstJsonObject, type EvaluationModel } from './model';

export interface JudgeVerdict {
  score: number;
  reason: string;
  fields: Record<string, boolean>;
}

const SYSTEM = [
  'You grade a structured extraction against the values a human reviewer confirmed.',
  'Answer with one JSON object only: {"score": number between 0 and 1, "reason": string,',
  '"fields": {"<dotted path>": true or false, ...}} where fields holds a verdict for every expected path.',
].join(' ');

export async function judgeItem(
  model: EvaluationModel,
  expected: Record<string, unknown>,
  predicted: unknown,
): Promise<JudgeVerdict> {
  const reply = await model.complete([
    { role: 'system', content: SYSTEM },
    {
      role: 'user',
      content: `Expected (reviewed) values:\n${JSON.stringify(expected)}\n\nModel response:\n${JSON.stringify(predicted)}`,
    },
  ]);
  const parsed = firstJsonObject(reply);
  const score = parsed?.score;
  if (typeof score !== 'number' || !Number.isFinite(score) || score < 0 || score > 1) {
    throw new Error(`the judge model ${model.id} did not answer with a score between 0 and 1`);
  }
  const fields: Record<string, boolean> = {};
  const rawFields = parsed?.fields;
  if (typeof rawFields === 'object' && rawFields !== null && !Array.isArray(rawFields)) {
    for (const [path, verdict] of Object.entries(rawFields)) if (typeof verdict === 'boolean') fields[path] = verdict;
  }
  return { score, reason: typeof parsed?.reason === 'string' ? parsed.reason : '', fields };
}
