/**
 * One model serves all: a models file with one upstream chat model (as a new user writes it, Ollama-style, no
 * `prism-orion-*` entry) is what plans agent chat turns and agent executions, and `planned_by` names it; an
 * explicit `prism-orion-1` entry still wins over the first chat model (and the file, having named a planner, leaves
 * `prism-orion-2` deterministic); a chat model whose `supported_parameters` leave out `tools` does not plan. Real clients: the openai SDK and plain HTTP
 * against the real app, the model a scripted upstream on loopback.
 */
import OpenAI from 'openai';
import type { ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, type TestApp } from '../helpers/test-app';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

const LLAMA = {
  id: 'llama3.1',
  upstreamModel: 'llama3.1:8b',
  parameters: ['tools', 'tool_choice', 'temperature', 'stream', 'stream_options'],
  pricing: { prompt: 1.0, completion: 2.0 },
};

describe('one upstream chat model serves every part of Prism', () => {
  let lab: UpstreamApp;
  let upstream: ScriptedUpstream;
  let app: TestApp;
  let key: string;

  beforeAll(async () => {
    lab = await startUpstreamApp([LLAMA], { provider: 'Ollama' });
    ({ app, upstream } = lab);
    key = await app.createKey('one-model-org');
    await app.container.services.accounts.addCredits('one-model-org', 5);
  });
  afterAll(() => lab.close());

  it('an agent chat turn on prism-orion-1 is planned by the only chat model, named in planned_by', async () => {
    const seen = upstream.requests.length;
    upstream.next({
      kind: 'reply',
      content: 'Hello from llama.',
      usage: { prompt_tokens: 1000, completion_tokens: 500 },
    });
    const client = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1/compat`, maxRetries: 0 });
    const data = await client.chat.completions.create({
      model: 'prism-orion-1',
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    expect(data.choices[0]?.message.content).toBe('Hello from llama.');
    // 1,000 prompt tokens at $1/M + 500 completion tokens at $2/M = $0.002, at the planning model's price.
    expect(data.usage).toMatchObject({ planned_by: 'llama3.1', cost: 0.002, message: null });
    const calls = upstream.requests.slice(seen);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.body.model).toBe('llama3.1:8b');
    expect(Array.isArray(calls[0]?.body.tools)).toBe(true);
  });

  it('the vlmrun name of the agent model and a variant are planned by it too', async () => {
    upstream.next({ kind: 'reply', content: 'Variant answer.' });
    const res = await call(`${app.url}/v1/compat/chat/completions`, {
      key,
      json: { model: 'vlmrun-orion-1:fast', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { usage: { planned_by: string } };
    expect(body.usage.planned_by).toBe('llama3.1');
  });

  it('an agent execution is planned by it: its tool call runs and its answer is the response', async () => {
    const seen = upstream.requests.length;
    upstream.next(
      { kind: 'reply', toolCalls: [{ id: 'c1', name: 'list_skills', arguments: '{}' }] },
      { kind: 'reply', content: JSON.stringify({ answer: 'done' }) },
    );
    const res = await call(`${app.url}/v1/agent/execute`, {
      key,
      json: {
        model: 'prism-orion-1:auto',
        prompt: 'Answer done.',
        json_schema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] },
      },
    });
    expect(res.status).toBeLessThan(300);
    let execution = (await res.json()) as {
      id: string;
      status: string;
      response: unknown;
      usage: { message?: string };
    };
    for (let i = 0; i < 200 && !['completed', 'failed'].includes(execution.status); i += 1) {
      await new Promise((r) => setTimeout(r, 50));
      execution = (await (
        await call(`${app.url}/v1/agent/executions/${execution.id}`, { key })
      ).json()) as typeof execution;
    }
    expect(execution.status).toBe('completed');
    expect(execution.response).toEqual({ answer: 'done' });
    const calls = upstream.requests.slice(seen);
    expect(calls.map((c) => c.body.model)).toEqual(['llama3.1:8b', 'llama3.1:8b']);
    expect(JSON.stringify(calls[1]?.body.messages)).toContain('c1');
  });
});

describe('an explicit prism-orion-1 entry wins over the first chat model', () => {
  let lab: UpstreamApp;
  let key: string;

  beforeAll(async () => {
    lab = await startUpstreamApp([LLAMA, { ...LLAMA, id: 'prism-orion-1', upstreamModel: 'planner-llm' }]);
    key = await lab.app.createKey('explicit-org');
    await lab.app.container.services.accounts.addCredits('explicit-org', 5);
  });
  afterAll(() => lab.close());

  it('plans with the entry named prism-orion-1', async () => {
    const seen = lab.upstream.requests.length;
    lab.upstream.next({ kind: 'reply', content: 'From the planner.' });
    const res = await call(`${lab.app.url}/v1/compat/chat/completions`, {
      key,
      json: { model: 'prism-orion-1', messages: [{ role: 'user', content: 'hi' }] },
    });
    const body = (await res.json()) as { usage: { planned_by: string } };
    expect(body.usage.planned_by).toBe('prism-orion-1');
    expect(lab.upstream.requests.slice(seen).map((c) => c.body.model)).toEqual(['planner-llm']);
  });

  it('leaves prism-orion-2 to the deterministic planner: the file has said which model plans', async () => {
    const seen = lab.upstream.requests.length;
    const res = await call(`${lab.app.url}/v1/compat/chat/completions`, {
      key,
      json: { model: 'prism-orion-2', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { usage: { planned_by: string } };
    expect(body.usage.planned_by).toBe('deterministic-planner');
    expect(lab.upstream.requests.length).toBe(seen);
  });
});

describe('a chat model that takes no tools does not plan agents', () => {
  let lab: UpstreamApp;
  let key: string;

  beforeAll(async () => {
    lab = await startUpstreamApp([{ ...LLAMA, parameters: ['temperature', 'stream', 'stream_options'] }]);
    key = await lab.app.createKey('no-tools-org');
    await lab.app.container.services.accounts.addCredits('no-tools-org', 5);
  });
  afterAll(() => lab.close());

  it('prism-orion-1 keeps the deterministic planner; the model still answers chat by its own id', async () => {
    const seen = lab.upstream.requests.length;
    const agent = await call(`${lab.app.url}/v1/compat/chat/completions`, {
      key,
      json: { model: 'prism-orion-1', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(((await agent.json()) as { usage: { planned_by: string } }).usage.planned_by).toBe('deterministic-planner');
    expect(lab.upstream.requests.length).toBe(seen);
    lab.upstream.next({ kind: 'reply', content: 'Plain chat.' });
    const chat = await call(`${lab.app.url}/v1/compat/chat/completions`, {
      key,
      json: { model: 'llama3.1', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(((await chat.json()) as OpenAI.ChatCompletion).choices[0]?.message.content).toBe('Plain chat.');
  });
});
