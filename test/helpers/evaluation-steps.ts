/**
 * Shared steps of the evaluation tests: create a skill from a prompt and a schema, make a prediction from bytes
 * (upload, generate, wait), and poll an evaluation until it leaves `running`.
 */
import { call, uploadFile, type TestApp } from './test-app';

export type Json = Record<string, unknown>;

export interface Run {
  id: string;
  status: string;
  kind: string;
  parent_id: string | null;
  source_label: string;
  accuracy: number | null;
  api_completion_rate: number | null;
  total_items: number;
  total_with_feedback: number;
  skill: { id: string } | null;
  results: RunResults;
}

export interface EvaluatorFigures {
  accuracy: number | null;
  items_scored: number;
  fields: Record<string, { compared: number; matched: number; accuracy: number }>;
}

export interface RunResults {
  evaluators: Record<string, EvaluatorFigures>;
  corrections: Record<string, number>;
  notes: string[];
  items_reprocessed?: number;
  comparison?: Record<string, { before: number | null; after: number | null; delta: number | null }>;
  fields?: Array<{ path: string; before: number | null; after: number | null }>;
}

/** Polls until `done` says yes; throws after `ms` so a broken server fails the test instead of hanging it. */
async function until<T>(what: string, ms: number, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still not done after ${ms} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function createSkill(app: TestApp, key: string, name: string, schema: Json): Promise<{ id: string }> {
  const response = await call(`${app.url}/v1/skills/create`, {
    key,
    json: { prompt: 'Read payment status and shipping from invoices.', json_schema: schema, name },
  });
  expect(response.status).toBe(201);
  return (await response.json()) as { id: string };
}

export async function makePrediction(app: TestApp, key: string, pdf: Buffer, config: Json): Promise<string> {
  const file = (await (await uploadFile(app.url, key, pdf, { filename: 'invoice.pdf' })).json()) as { id: string };
  const created = await call(`${app.url}/v1/document/generate`, {
    key,
    json: { file_id: file.id, model: 'prism-1', config },
  });
  expect(created.status).toBe(201);
  const { id } = (await created.json()) as { id: string };
  const p = await until(
    `prediction ${id}`,
    120_000,
    async () => (await (await call(`${app.url}/v1/predictions/${id}`, { key })).json()) as { status?: string },
    (v) => v.status === 'completed' || v.status === 'failed' || v.status === undefined,
  );
  if (p.status !== 'completed') throw new Error(`prediction ${id} did not complete: ${JSON.stringify(p)}`);
  return id;
}

export async function waitFor(app: TestApp, key: string, id: string): Promise<Run> {
  return until(
    `evaluation ${id}`,
    120_000,
    async () => (await (await call(`${app.url}/v1/evaluations/${id}`, { key })).json()) as Run,
    (run) => run.status !== 'running' && run.status !== 'pending',
  );
}
