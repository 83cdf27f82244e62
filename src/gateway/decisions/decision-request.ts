/**
 * The typed question set of a decision session or call, as zod schemas shared by the WebSocket stream and
 * `POST /v1/compat/decisions`, so both accept and refuse exactly the same sets.
 *
 * Questions are validated once, at session creation: ids unique and short, `enum` with at least two distinct
 * `options`, `options` only on `enum`, `min`/`max` only on numbers and `min <= max`. Each refinement reports the
 * path of the offending question (`questions.<index>.<field>`), so the error names it.
 */
import { z } from 'zod';
import { QUESTION_TYPES } from '../../engines/decision/decision.engine';

export { QUESTION_TYPES };

/** Where the decision stream upgrades (the WebSocket adapter listens there; the HTTP listing names it). */
export const DECISION_STREAM_PATHS = ['/v1/compat/decisions/stream', '/v1/openai/decisions/stream'] as const;

/** Most questions per session: every frame answers all of them. */
export const MAX_QUESTIONS = 32;

export const decisionQuestionSchema = z
  .object({
    id: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9_.-]+$/),
    question: z.string().min(1).max(500),
    type: z.enum(QUESTION_TYPES),
    options: z.array(z.string().min(1).max(100)).min(2).max(32).optional(),
    min: z.number().finite().optional(),
    max: z.number().finite().optional(),
  })
  .strict()
  .superRefine((q, ctx) => {
    if (q.type === 'enum' && q.options === undefined) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: 'An enum question needs options', input: q });
    }
    if (q.type !== 'enum' && q.options !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: 'Only enum questions take options', input: q });
    }
    if (q.options && new Set(q.options).size !== q.options.length) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: 'Options must be distinct', input: q.options });
    }
    const numeric = q.type === 'integer' || q.type === 'number';
    for (const bound of ['min', 'max'] as const) {
      if (q[bound] !== undefined && !numeric) {
        ctx.addIssue({
          code: 'custom',
          path: [bound],
          message: `Only integer and number questions take ${bound}`,
          input: q[bound],
        });
      }
    }
    if (q.min !== undefined && q.max !== undefined && q.min > q.max) {
      ctx.addIssue({ code: 'custom', path: ['min'], message: 'min must not exceed max', input: q.min });
    }
  });

export const decisionQuestionsSchema = z
  .array(decisionQuestionSchema)
  .min(1)
  .max(MAX_QUESTIONS)
  .superRefine((questions, ctx) => {
    const seen = new Set<string>();
    questions.forEach((q, index) => {
      if (seen.has(q.id)) {
        ctx.addIssue({ code: 'custom', path: [index, 'id'], message: `Duplicate question id '${q.id}'`, input: q.id });
      }
      seen.add(q.id);
    });
  });

/** What a session (or one HTTP call) asks for: a model, optional `steps`, and the questions. */
export const decisionSettingsSchema = z.object({
  model: z.string().min(1).max(200).optional(),
  steps: z.number().int().min(1).max(8).optional(),
  questions: decisionQuestionsSchema,
});
export type DecisionSettings = z.output<typeof decisionSettingsSchema>;
