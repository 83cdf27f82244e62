/**
 * Evaluation reruns over agent executions, through HTTP against the real app: executions of a skill over uploaded
 * invoices (deterministic planner: read_document, then fill_json_schema with the skill's schema), feedback on them,
 * a run over the skill, optimize (the reviewed choices become enums), then rerun with that version — the same
 * inputs run again on the executions runtime and score higher, with nothing stored as an execution. An execution
 * whose file was deleted is skipped with the reason; nothing is billed; another organisation gets 404.
 */
import { makeTextPdf } from '../helpers/media-fixtures';
import { call, startTestApp, uploadFile, type TestApp } from '../helpers/test-app';
import { createSkill, waitFor, type Json, type Run } from '../helpers/evaluation-steps';
import { rawSql } from '../helpers/raw-sql';

const SCHEMA = {
  type: 'object',
  properties: {
    invoice_number: { type: 'string' },
    payment_status: { type: 'string', description: 'Whether the invoice is settled' },
    shipping: { type: 'string' },
  },
};

/** Four invoices whose labelled rows print the choice followed by free text; the last one's file is deleted later. */
const DOCUMENTS: Array<{ lines: string[]; expected: Json }> = [
  {
    lines: ['ACME Supplies', 'Invoice Number: INV-2001', 'Payment Status: PAID by card', 'Shipping: EXPRESS courier'],
    expected: { invoice_number: 'INV-2001', payment_status: 'PAID', shipping: 'EXPRESS' },
  },
  {
    lines: ['ACME Supplies', 'Invoice Number: INV-2002', 'Payment Status: UNPAID as of May', 'Shipping: STANDARD post'],
    expected: { invoice_number: 'INV-2002', payment_status: 'UNPAID', shipping: 'STANDARD' },
  },
  {
    lines: ['ACME Supplies', 'Invoice Number: INV-2003', 'Payment Status: PAID by transfer', 'Shipping: EXPRESS van'],
    expected: { invoice_number: 'INV-2003', payment_status: 'PAID', shipping: 'EXPRESS' },
  },
  {
    lines: ['ACME Supplies', 'Invoice Number: INV-2004', 'Payment Status: UNPAID reminder', 'Shipping: STANDARD mail'],
    expected: { invoice_number: 'INV-2004', payment_status: 'UNPAID', shipping: 'STANDARD' },
  },
];

interface ExecutionWire {
  id: string;
  status: string;
  response: Json | null;
}

interface RerunItem {
  entity_type: string;
  entity_id: string;
  before: { predicted: Json | null };
  after: { predicted: Json | null; scores: Record<string, number> };
}

describe('evaluation reruns over agent executions', () => {
  let app: TestApp;
  let key: string;
  let otherKey: string;
  const executionIds: string[] = [];
  const fileIds: string[] = [];
  let run: Run;
  let optimizedSkillId: string;

  beforeAll(async () => {
    app = await startTestApp();
    key = await app.createKey('exec-evaluators', 'pro');
    otherKey = await app.createKey('exec-strangers', 'pro');
    await app.container.services.accounts.addCredits('exec-evaluators', 5);
    await createSkill(app, key, 'exec-payment-notes', SCHEMA);
    for (const doc of DOCUMENTS) {
      const pdf = await makeTextPdf([doc.lines]);
      const file = (await (await uploadFile(app.url, key, pdf, { filename: 'invoice.pdf' })).json()) as { id: string };
      fileIds.push(file.id);
      const executed = await call(`${app.url}/v1/agent/execute`, {
        key,
        json: {
          inputs: { invoice: { type: 'input_file', file_id: file.id } },
          config: { skills: [{ skill_name: 'exec-payment-notes' }] },
        },
      });
      expect(executed.status).toBe(200);
      const execution = (await executed.json()) as ExecutionWire;
      expect(execution.status).toBe('completed');
      executionIds.push(execution.id);
      const feedback = await call(`${app.url}/v1/feedback/submit`, {
        key,
        json: { agent_execution_id: execution.id, response: doc.expected },
      });
      expect(feedback.status).toBe(200);
    }
    const started = await call(`${app.url}/v1/evaluations/run`, {
      key,
      json: {
        source_type: 'skill',
        source_id: 'exec-payment-notes',
        evaluators: ['field_accuracy', 'equals_expected'],
      },
    });
    expect(started.status).toBe(200);
    run = await waitFor(app, key, ((await started.json()) as Run).id);
    expect(run.status).toBe('completed');
  }, 600_000);
  afterAll(async () => {
    await app.close();
  });

  const post = (path: string, json: unknown, k = key) => call(`${app.url}/v1/evaluations${path}`, { key: k, json });
  const get = (path: string, k = key) => call(`${app.url}/v1/evaluations${path}`, { key: k });
  // On SQLite an execution's steps.json waits for a quiet moment (docs/configuration.md): the writes still held are
  // let out first, so the count is of what the executions stored, not of how far their writes have got.
  const artifactCount = async (): Promise<number> => {
    await app.container.services.artifacts.drain();
    return rawSql(app.container).count('artifacts');
  };
  const executionCount = async (): Promise<number> => {
    const listed = (await (await call(`${app.url}/v1/agent/executions?limit=100`, { key })).json()) as unknown[];
    return listed.length;
  };

  it('re-runs execution items with the new skill version, reports them and skips one whose file was deleted', async () => {
    expect(run.results.evaluators['field_accuracy']?.items_scored).toBe(4);
    expect(run.accuracy).toBeLessThan(1);

    const optimized = await post('/optimize', { evaluation_id: run.id });
    expect(optimized.status).toBe(200);
    const { skill } = (await optimized.json()) as { skill: { id: string } };
    optimizedSkillId = skill.id;

    // The last invoice's file is deleted: its execution can no longer be re-run.
    const deleted = await call(`${app.url}/v1/files/${fileIds[3]}`, { key, method: 'DELETE' });
    expect(deleted.status).toBe(200);
    const executionsBefore = await executionCount();
    const balanceMicros = async (): Promise<number> =>
      Math.round((await app.container.services.accounts.addCredits('exec-evaluators', 0.000001)).balanceUsd * 1e6) - 1;
    const walletBefore = await balanceMicros();
    const artifactsBefore = await artifactCount();
    expect(artifactsBefore).toBeGreaterThan(0); // the stored executions' read_document layouts

    const started = await post('/rerun', { evaluation_id: run.id, skill_id: skill.id });
    expect(started.status).toBe(200);
    const done = await waitFor(app, key, ((await started.json()) as Run).id);
    expect(done.status).toBe('completed');
    const results = done.results as Run['results'] & {
      skipped: Array<{ entity_type: string; entity_id: string; reason: string }>;
    };
    expect(results.items_reprocessed).toBe(3);
    expect(results.skipped).toHaveLength(1);
    expect(results.skipped[0]).toMatchObject({ entity_type: 'agent_execution', entity_id: executionIds[3] });
    expect(results.skipped[0]?.reason).toContain(`can no longer be read`);
    expect(results.skipped[0]?.reason).toContain(fileIds[3]);
    expect(results.comparison?.['equals_expected']?.after).toBe(1);
    expect(results.comparison?.['field_accuracy']?.after).toBe(1);
    expect(results.comparison?.['field_accuracy']?.delta).toBeGreaterThan(0);
    expect(done.accuracy).toBe(1);

    const items = (await (await get(`/${done.id}/results`)).json()) as { items: RerunItem[] };
    expect(items.items.map((i) => i.entity_id).sort()).toEqual(executionIds.slice(0, 3).sort());
    const first = items.items.find((i) => i.entity_id === executionIds[0]);
    expect(first?.entity_type).toBe('agent_execution');
    expect(first?.before.predicted?.['payment_status']).not.toBe('PAID');
    expect(first?.after.predicted).toMatchObject({ payment_status: 'PAID', shipping: 'EXPRESS' });
    expect(first?.after.scores['equals_expected']).toBe(1);

    // Nothing new was stored as an execution or an artifact, nothing was billed, and the stored executions kept their responses.
    expect(await executionCount()).toBe(executionsBefore);
    expect(await balanceMicros()).toBe(walletBefore + 1);
    expect(await artifactCount()).toBe(artifactsBefore);
    const stored = (await (await call(`${app.url}/v1/agent/executions/${executionIds[0]}`, { key })).json()) as {
      response: Json;
    };
    expect(stored.response['payment_status']).toBe(first?.before.predicted?.['payment_status']);
  }, 120_000);

  it("re-runs a named agent's executions with the skill's schema in place of the agent's", async () => {
    const created = await call(`${app.url}/v1/agent/create`, {
      key,
      json: { name: 'invoice-reader', version: '1', config: { prompt: 'Read the invoice.', json_schema: SCHEMA } },
    });
    expect(created.status).toBe(200);
    const ids: string[] = [];
    for (const doc of DOCUMENTS.slice(0, 2)) {
      const pdf = await makeTextPdf([doc.lines]);
      const file = (await (await uploadFile(app.url, key, pdf, { filename: 'invoice.pdf' })).json()) as { id: string };
      const executed = await call(`${app.url}/v1/agent/execute`, {
        key,
        json: { name: 'invoice-reader:1', inputs: { invoice: { type: 'input_file', file_id: file.id } } },
      });
      const execution = (await executed.json()) as ExecutionWire;
      expect(execution.status).toBe('completed');
      ids.push(execution.id);
      const feedback = await call(`${app.url}/v1/feedback/submit`, {
        key,
        json: { agent_execution_id: execution.id, response: doc.expected },
      });
      expect(feedback.status).toBe(200);
    }
    const evaluated = await post('/run', { source_type: 'agent', source_id: 'invoice-reader:1' });
    expect(evaluated.status).toBe(200);
    const agentRun = await waitFor(app, key, ((await evaluated.json()) as Run).id);
    expect(agentRun).toMatchObject({ total_items: 2 });
    expect(agentRun.accuracy).toBeLessThan(1);

    // An agent source is not optimized automatically: the skill is named.
    const started = await post('/rerun', { evaluation_id: agentRun.id, skill_id: optimizedSkillId });
    expect(started.status).toBe(200);
    const done = await waitFor(app, key, ((await started.json()) as Run).id);
    expect(done.status).toBe('completed');
    expect(done.results.items_reprocessed).toBe(2);
    expect(done.accuracy).toBe(1);
    const items = (await (await get(`/${done.id}/results`)).json()) as { items: RerunItem[] };
    expect(items.items.map((i) => i.entity_id).sort()).toEqual([...ids].sort());
    expect(items.items.every((i) => i.entity_type === 'agent_execution')).toBe(true);
  }, 120_000);

  it("keeps another organisation out of the run's rerun", async () => {
    const rerun = await post('/rerun', { evaluation_id: run.id }, otherKey);
    expect(rerun.status).toBe(404);
    const body = (await rerun.json()) as { detail: { error: { code: string } } };
    expect(body.detail.error.code).toBe('evaluation_not_found');
    expect((await get(`/${run.id}/results`, otherKey)).status).toBe(404);
  });
});
