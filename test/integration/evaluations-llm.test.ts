/**
 * Evaluations with an upstream chat model (the scripted OpenAI-compatible server on loopback, named in the models
 * file): llm_judge scores each item with the model's verdict, notes-only feedback is turned into corrections by the
 * model, and optimize lets the model rewrite the instructions above the cited cases.
 */
import { makeTextPdf } from '../helpers/media-fixtures';
import type { ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, type TestApp } from '../helpers/test-app';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';
import { createSkill, makePrediction, waitFor, type Run } from '../helpers/evaluation-steps';

const SCHEMA = {
  type: 'object',
  properties: { invoice_number: { type: 'string' }, payment_status: { type: 'string' } },
};

describe('evaluations with an upstream model', () => {
  let lab: UpstreamApp;
  let upstream: ScriptedUpstream;
  let app: TestApp;
  let key: string;
  const ids: string[] = [];

  beforeAll(async () => {
    lab = await startUpstreamApp(
      [{ id: 'lab-judge', upstreamModel: 'qwen-7b', parameters: ['max_tokens', 'temperature'] }],
      { env: { PRISM_EVAL_MODEL: 'lab-judge' }, provider: 'vLLM' },
    );
    ({ app, upstream } = lab);
    key = await app.createKey('judged', 'pro');
    // The skill author asks the same model for SKILL.md; an answer without JSON keeps the template.
    upstream.next({ kind: 'reply', content: 'no draft' });
    await createSkill(app, key, 'judged-notes', SCHEMA);
    for (const lines of [
      ['Invoice Number: INV-2001', 'Payment Status: PAID by card'],
      ['Invoice Number: INV-2002', 'Payment Status: UNPAID as of today'],
    ]) {
      ids.push(
        await makePrediction(app, key, await makeTextPdf([lines]), { skills: [{ skill_name: 'judged-notes' }] }),
      );
    }
    await call(`${app.url}/v1/feedback/submit`, {
      key,
      json: { request_id: ids[0], response: { invoice_number: 'INV-2001', payment_status: 'PAID' } },
    });
    await call(`${app.url}/v1/feedback/submit`, {
      key,
      json: { request_id: ids[1], notes: 'The status is only the word UNPAID.' },
    });
  }, 600_000);
  afterAll(() => lab.close());

  it('judges items with the model and infers corrections from notes with it', async () => {
    upstream.requests.length = 0;
    // Newest item first: the model infers its corrections, then judges it; then judges the older item.
    upstream.next(
      { kind: 'reply', content: '```json\n{"invoice_number": "INV-2002", "payment_status": "UNPAID"}\n```' },
      {
        kind: 'reply',
        content: '{"score": 0.5, "reason": "status has extra words", "fields": {"payment_status": false}}',
      },
      {
        kind: 'reply',
        content: '{"score": 0.25, "reason": "status has extra words", "fields": {"payment_status": false}}',
      },
    );
    const started = await call(`${app.url}/v1/evaluations/run`, {
      key,
      json: {
        source_type: 'skill',
        source_id: 'judged-notes',
        evaluators: ['llm_judge', 'field_accuracy'],
        infer_corrections: true,
      },
    });
    expect(started.status).toBe(200);
    const run = await waitFor(app, key, ((await started.json()) as Run).id);
    expect(run.status).toBe('completed');
    expect(run.results.corrections).toMatchObject({ response: 1, inferred_model: 1 });
    expect(run.results.evaluators.llm_judge).toMatchObject({
      accuracy: 0.375,
      items_scored: 2,
      fields: { payment_status: { compared: 2, matched: 0, accuracy: 0 } },
    });
    expect(run.accuracy).toBe(0.375);
    expect(run.results.evaluators.field_accuracy?.fields['payment_status']?.matched).toBe(0);
    expect(upstream.requests).toHaveLength(3);
    const prompts = upstream.requests.map((r) => JSON.stringify(r.body.messages));
    expect(prompts[0]).toContain('The status is only the word UNPAID.');
    expect(prompts[1]).toContain('Expected (reviewed) values');
    expect(prompts[1]).toContain('UNPAID');

    const items = (await (await call(`${app.url}/v1/evaluations/${run.id}/results`, { key })).json()) as {
      items: Array<{ entity_id: string; corrections: string; judge: { reason: string } }>;
    };
    const inferred = items.items.find((i) => i.entity_id === ids[1]);
    expect(inferred?.corrections).toBe('inferred_model');
    expect(inferred?.judge.reason).toBe('status has extra words');

    // optimize with the model: it rewrites the instructions, the cited cases stay below them.
    upstream.next({ kind: 'reply', content: '# Invoices\n\nAnswer the payment status with the single printed word.' });
    const optimized = await call(`${app.url}/v1/evaluations/optimize`, { key, json: { evaluation_id: run.id } });
    expect(optimized.status).toBe(200);
    const body = (await optimized.json()) as { mode: string; note: string; changes: unknown[] };
    expect(body.mode).toBe('model');
    expect(body.note).toContain('lab-judge');
    expect(body.changes).toContainEqual({ path: 'payment_status', change: 'enum', enum: ['PAID', 'UNPAID'] });
  });

  it('records a judge answer that is not a score as an error of that item, not a made-up score', async () => {
    upstream.next({ kind: 'reply', content: 'I think it is fine.' });
    const started = await call(`${app.url}/v1/evaluations/run`, {
      key,
      json: { source_type: 'skill', source_id: 'judged-notes', evaluators: ['llm_judge'] },
    });
    const run = await waitFor(app, key, ((await started.json()) as Run).id);
    expect(run.status).toBe('completed');
    // Only the item with corrected JSON is scored (notes are not inferred without infer_corrections).
    expect(run.results.evaluators.llm_judge).toMatchObject({ accuracy: null, items_scored: 0 });
    const items = (await (await call(`${app.url}/v1/evaluations/${run.id}/results`, { key })).json()) as {
      items: Array<{ entity_id: string; judge: { error?: string } | null }>;
    };
    expect(items.items.find((i) => i.entity_id === ids[0])?.judge?.error).toContain('did not answer with a score');
  });
});
