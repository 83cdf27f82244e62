/**
 * Evaluations through HTTP against the real app: a run over a skill's predictions with feedback (corrected JSON and
 * notes inferred without a model), the read routes, optimize (a new version of the same skill whose schema carries
 * the reviewed choices as an enum), and rerun, which re-processes the same documents with that version and scores
 * higher — because the local extractor, given the enum, answers with the printed choice instead of the whole
 * labelled text. Also: llm_judge without an upstream fails clearly, organisation isolation, 404s and 422s.
 * (The vlmrun SDK has no evaluations client, so plain fetch it is.)
 */
import { DEFAULT_BUNDLE_LIMITS, readSkillBundle } from '../../src/services/skills/skill-bundle';
import { makeTextPdf } from '../helpers/media-fixtures';
import { call, startTestApp, type TestApp } from '../helpers/test-app';
import {
  createSkill,
  makePrediction,
  waitFor,
  type EvaluatorFigures,
  type Json,
  type Run,
} from '../helpers/evaluation-steps';

const SCHEMA = {
  type: 'object',
  properties: {
    invoice_number: { type: 'string' },
    payment_status: { type: 'string', description: 'Whether the invoice is settled' },
    shipping: { type: 'string' },
  },
};

/** Five documents; the labelled rows print the choice followed by free text, which the first skill returns whole. */
const DOCUMENTS: Array<{ lines: string[]; feedback: Json | null }> = [
  {
    lines: [
      'ACME Supplies',
      'Invoice Number: INV-1001',
      'Payment Status: PAID by card on 2024-03-01',
      'Shipping: EXPRESS courier, next day',
    ],
    feedback: { response: { invoice_number: 'INV-1001', payment_status: 'PAID', shipping: 'EXPRESS' } },
  },
  {
    lines: [
      'ACME Supplies',
      'Invoice Number: INV-1002',
      'Payment Status: UNPAID as of 2024-03-05',
      'Shipping: STANDARD post, 5 days',
    ],
    feedback: { response: { invoice_number: 'INV-1002', payment_status: 'UNPAID', shipping: 'STANDARD' } },
  },
  {
    lines: [
      'ACME Supplies',
      'Invoice Number: INV-1003',
      'Payment Status: PAID by transfer',
      'Shipping: EXPRESS courier',
    ],
    feedback: { response: { invoice_number: 'INV-1003', payment_status: 'PAID', shipping: 'EXPRESS' } },
  },
  {
    lines: [
      'ACME Supplies',
      'Invoice Number: INV-1004',
      'Payment Status: UNPAID reminder sent',
      'Shipping: STANDARD post',
    ],
    // Notes only: inferred by the deterministic rules (no upstream model in this app).
    feedback: { notes: 'payment_status should be UNPAID; shipping: STANDARD' },
  },
  {
    lines: ['ACME Supplies', 'Invoice Number: INV-1005', 'Payment Status: PAID', 'Shipping: EXPRESS'],
    feedback: null,
  },
];

describe('evaluations', () => {
  let app: TestApp;
  let key: string;
  let otherKey: string;
  const predictionIds: string[] = [];
  let skillId: string;
  let run: Run;

  beforeAll(async () => {
    app = await startTestApp();
    key = await app.createKey('evaluators', 'pro');
    otherKey = await app.createKey('strangers', 'pro');
    skillId = (await createSkill(app, key, 'payment-notes', SCHEMA)).id;
    for (const doc of DOCUMENTS) {
      const pdf = await makeTextPdf([doc.lines]);
      const id = await makePrediction(app, key, pdf, { skills: [{ skill_name: 'payment-notes' }] });
      predictionIds.push(id);
      if (doc.feedback) {
        const r = await call(`${app.url}/v1/feedback/submit`, { key, json: { request_id: id, ...doc.feedback } });
        expect(r.status).toBe(200);
      }
    }
  }, 600_000);
  afterAll(async () => {
    await app.close();
  });

  const post = (path: string, json: unknown, k = key) => call(`${app.url}/v1/evaluations${path}`, { key: k, json });
  const get = (path: string, k = key) => call(`${app.url}/v1/evaluations${path}`, { key: k });
  const poll = (id: string) => waitFor(app, key, id);

  it('runs an evaluation: running at once, then per-field and overall scores', async () => {
    const started = await post('/run', {
      source_type: 'skill',
      source_id: 'payment-notes',
      evaluators: ['field_accuracy', 'fuzzy_field_match', 'equals_expected'],
      infer_corrections: true,
    });
    expect(started.status).toBe(200);
    const body = (await started.json()) as Run;
    expect(body.status).toBe('running');
    expect(body.source_label).toBe('payment-notes');
    run = await poll(body.id);
    expect(run.status).toBe('completed');
    expect(run.total_items).toBe(5);
    expect(run.total_with_feedback).toBe(4);
    expect(run.api_completion_rate).toBe(1);
    const fa = run.results.evaluators.field_accuracy as EvaluatorFigures;
    // invoice_number right everywhere, payment_status and shipping wrong everywhere (the whole labelled text).
    expect(fa.items_scored).toBe(4);
    expect(fa.fields['payment_status']).toEqual({ compared: 4, matched: 0, accuracy: 0 });
    expect(fa.fields['shipping']).toEqual({ compared: 4, matched: 0, accuracy: 0 });
    // The notes-only item compares the two fields the notes correct plus the confirmed invoice number.
    expect(fa.fields['invoice_number']).toEqual({ compared: 4, matched: 4, accuracy: 1 });
    expect(run.accuracy).toBeCloseTo(1 / 3, 3);
    expect(run.results.evaluators.equals_expected?.accuracy).toBe(0);
    expect(run.results.corrections).toMatchObject({ response: 3, inferred_rules: 1 });
    expect(run.results.notes.join(' ')).toContain('PRISM_EVAL_MODEL');
  });

  it('serves per-item results, the list, preview, metrics, summary and sources', async () => {
    const results = (await (await get(`/${run.id}/results?limit=2&offset=0`)).json()) as { items: Json[] };
    expect(results.items).toHaveLength(2);
    const all = (await (await get(`/${run.id}/results`)).json()) as { items: Array<Record<string, unknown>> };
    expect(all.items).toHaveLength(5);
    const inferred = all.items.find((i) => i.entity_id === predictionIds[3]) as Record<string, unknown>;
    expect(inferred.corrections).toBe('inferred_rules');
    expect(inferred.expected).toMatchObject({ payment_status: 'UNPAID', shipping: 'STANDARD' });
    const unreviewed = all.items.find((i) => i.entity_id === predictionIds[4]) as Record<string, unknown>;
    expect(unreviewed.has_feedback).toBe(false);
    expect(unreviewed.scores).toEqual({});
    const first = all.items.find((i) => i.entity_id === predictionIds[0]) as { fields: Json[] };
    expect(first.fields).toContainEqual(
      expect.objectContaining({ path: 'payment_status', expected: 'PAID', predicted: 'PAID by', exact: false }),
    );

    const list = (await (await get('?limit=5')).json()) as { data: Run[]; count: number };
    expect(list.count).toBeGreaterThanOrEqual(1);
    expect(list.data.map((r) => r.id)).toContain(run.id);
    const preview = await (await get('/preview?source_type=skill&source_id=payment-notes')).json();
    expect(preview).toMatchObject({ total_items: 5, total_with_feedback: 4, feedback_with_corrections: 3 });
    const metrics = (await (await get('/metrics?source_type=skill')).json()) as { data: Json[] };
    expect(metrics.data[0]).toMatchObject({ source_label: 'payment-notes', total_items: 5 });
    const stats = await (await get('/summary-stats')).json();
    expect(stats).toMatchObject({ source_type_counts: [{ type: 'skill', label: 'payment-notes' }] });
    expect(await (await get('/unique-sources')).json()).toEqual({
      sources: [{ type: 'skill', label: 'payment-notes' }],
    });
  });

  it('optimize saves a new version of the same skill with the reviewed choices as enums and cited cases', async () => {
    const response = await post('/optimize', { evaluation_id: run.id });
    expect(response.status).toBe(200);
    const optimized = (await response.json()) as {
      skill: { id: string; name: string };
      previous_skill: { id: string };
      mode: string;
      note: string;
      changes: Json[];
      cited_cases: Json[];
    };
    expect(optimized.skill.name).toBe('payment-notes');
    expect(optimized.skill.id).not.toBe(skillId);
    expect(optimized.previous_skill.id).toBe(skillId);
    expect(optimized.mode).toBe('deterministic');
    expect(optimized.note).toContain('no LLM');
    expect(optimized.changes).toContainEqual({ path: 'payment_status', change: 'enum', enum: ['PAID', 'UNPAID'] });
    expect(optimized.changes).toContainEqual({ path: 'shipping', change: 'enum', enum: ['EXPRESS', 'STANDARD'] });
    expect(optimized.cited_cases).toHaveLength(8);

    const { download_url } = (await (
      await call(`${app.url}/v1/skills/${optimized.skill.id}/download`, { key })
    ).json()) as {
      download_url: string;
    };
    const entries = await readSkillBundle(
      Buffer.from(await (await fetch(download_url)).arrayBuffer()),
      DEFAULT_BUNDLE_LIMITS,
    );
    const files = Object.fromEntries(entries.map((e) => [e.path, e.data.toString('utf8')]));
    expect(files['SKILL.md']).toContain('## Corrections from reviewed feedback');
    expect(files['SKILL.md']).toContain(
      `(item ${predictionIds[3]}): the response said "UNPAID reminder sent"; reviewed value "UNPAID".`,
    );
    const schema = JSON.parse(files['schema.json'] as string) as { properties: Record<string, Json> };
    expect(schema.properties['payment_status']).toMatchObject({ enum: ['PAID', 'UNPAID'] });
    expect(schema.properties['invoice_number']).toEqual({ type: 'string' });

    // The latest version by name is the optimised one.
    const latest = (await (
      await call(`${app.url}/v1/skills/lookup`, { key, json: { name: 'payment-notes' } })
    ).json()) as {
      id: string;
    };
    expect(latest.id).toBe(optimized.skill.id);

    // Rerun with that version: the same documents, re-processed, score higher; before and after side by side.
    const started = await post('/rerun', { evaluation_id: run.id, skill_id: optimized.skill.id });
    expect(started.status).toBe(200);
    const rerun = (await started.json()) as Run & { before: { accuracy: number } };
    expect(rerun.status).toBe('running');
    expect(rerun.parent_id).toBe(run.id);
    expect(rerun.before.accuracy).toBeCloseTo(1 / 3, 3);
    const done = await poll(rerun.id);
    expect(done.status).toBe('completed');
    expect(done.results.items_reprocessed).toBe(4);
    expect(done.results.comparison?.field_accuracy).toEqual({ before: 0.3333, after: 1, delta: 0.6667 });
    expect(done.results.comparison?.equals_expected).toEqual({ before: 0, after: 1, delta: 1 });
    expect(done.results.fields).toContainEqual({ path: 'payment_status', before: 0, after: 1 });
    expect(done.accuracy).toBe(1);
    const items = (await (await get(`/${rerun.id}/results`)).json()) as {
      items: Array<{ entity_id: string; before: { predicted: Json }; after: { predicted: Json } }>;
    };
    const firstDocument = items.items.find((i) => i.entity_id === predictionIds[0]);
    expect(firstDocument?.before.predicted.payment_status).toBe('PAID by');
    expect(firstDocument?.after.predicted).toMatchObject({ payment_status: 'PAID', shipping: 'EXPRESS' });
  }, 60_000);

  it('rerun without a skill optimizes the source skill first', async () => {
    const started = await post('/rerun', { evaluation_id: run.id });
    expect(started.status).toBe(200);
    const body = (await started.json()) as Run & { optimized: { skill: { name: string; id: string } } };
    expect(body.optimized.skill.name).toBe('payment-notes');
    expect(body.skill?.id).toBe(body.optimized.skill.id);
    expect((await poll(body.id)).accuracy).toBe(1);
  }, 60_000);

  it('llm_judge without an upstream model fails clearly, naming the setting', async () => {
    const response = await post('/run', {
      source_type: 'skill',
      source_id: 'payment-notes',
      evaluators: ['llm_judge'],
    });
    expect(response.status).toBe(400);
    const { detail } = (await response.json()) as { detail: { error: Record<string, string> } };
    expect(detail.error).toMatchObject({
      code: 'evaluation_model_unavailable',
      param: 'evaluators',
      type: 'invalid_request_error',
    });
    expect(detail.error.message).toContain('PRISM_EVAL_MODEL');
  });

  it('keeps runs to their organisation', async () => {
    for (const path of [`/${run.id}`, `/${run.id}/results`]) {
      const r = await get(path, otherKey);
      expect(r.status).toBe(404);
      expect(((await r.json()) as { detail: { error: { code: string } } }).detail.error.code).toBe(
        'evaluation_not_found',
      );
    }
    expect((await call(`${app.url}/v1/evaluations/${run.id}`, { key: otherKey, method: 'DELETE' })).status).toBe(404);
    expect(await (await get('', otherKey)).json()).toEqual({ data: [], count: 0 });
    expect(await (await get('/unique-sources', otherKey)).json()).toEqual({ sources: [] });
    // Another organisation cannot evaluate, optimize or rerun what is not theirs.
    const foreignSkill = await post('/run', { source_type: 'skill', source_id: 'payment-notes' }, otherKey);
    expect(foreignSkill.status).toBe(404);
    expect((await post('/rerun', { evaluation_id: run.id }, otherKey)).status).toBe(404);
    expect((await post('/optimize', { evaluation_id: run.id }, otherKey)).status).toBe(404);
    // Without a key: 401.
    expect((await call(`${app.url}/v1/evaluations`)).status).toBe(401);
  });

  it('answers 404 for unknown runs and sources', async () => {
    const unknown = await get('/00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(404);
    const domain = await post('/run', { source_type: 'request_domain', source_id: 'document.nope' });
    expect(domain.status).toBe(404);
    expect(((await domain.json()) as { detail: { error: { code: string } } }).detail.error.code).toBe(
      'domain_not_found',
    );
    const agent = await post('/run', { source_type: 'agent', source_id: 'nobody:1' });
    expect(((await agent.json()) as { detail: { error: { code: string } } }).detail.error.code).toBe('agent_not_found');
  });

  it('validates bodies and queries with 422', async () => {
    const cases: Array<[Response, string]> = [
      [await post('/run', { source_type: 'skill', source_id: 'x', evaluators: ['bogus'] }), 'evaluators'],
      [await post('/run', { source_id: 'x' }), 'source_type'],
      [await post('/run', { source_type: 'skill', source_id: 'x', fuzzy_threshold: 2 }), 'fuzzy_threshold'],
      [await post('/run', { source_type: 'skill', source_id: 'x', evaluators: [] }), 'evaluators'],
      [await post('/rerun', {}), 'evaluation_id'],
      [await get('?limit=0'), 'limit'],
      [await get('?limit=101'), 'limit'],
      [await get('?offset=-1'), 'offset'],
      [await get('?created_at__gte=yesterday'), 'created_at__gte'],
      [await get('/metrics?limit=500'), 'limit'],
      [await get(`/${run.id}/results?limit=0`), 'limit'],
      [await get('/preview?source_type=skill'), 'source_id'],
    ];
    for (const [response, field] of cases) {
      expect(response.status).toBe(422);
      const { detail } = (await response.json()) as { detail: Array<{ loc: unknown[] }> };
      expect(detail[0]?.loc).toContain(field);
    }
  });

  it('deletes a run', async () => {
    const started = (await (await post('/run', { source_type: 'skill', source_id: 'payment-notes' })).json()) as Run;
    await poll(started.id);
    const deleted = await call(`${app.url}/v1/evaluations/${started.id}`, { key, method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect((await get(`/${started.id}`)).status).toBe(404);
  });
});
