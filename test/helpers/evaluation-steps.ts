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
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- results are checked field by field in the tests
  results: any;
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
  for (;;) {
    const p = (await (await call(`${app.url}/v1/predictions/${id}`, { key })).json()) as { status: string };
    if (p.status === 'completed') return id;
    if (p.status === 'failed') throw new Error(`prediction ${id} failed`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function waitFor(app: TestApp, key: string, id: string): Promise<Run> {
  for (;;) {
    const run = (await (await call(`${app.url}/v1/evaluations/${id}`, { key })).json()) as Run;
    if (run.status !== 'running' && run.status !== 'pending') return run;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
