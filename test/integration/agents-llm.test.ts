/**
 * Agent executions planned by an upstream chat model (the scripted OpenAI-compatible server configured as
 * prism-orion-2 in the models file): the tool calls it returns run against the real tools, the requests it saw
 * carry the tools and the tool results, tiers price its tokens, program mode replays a compiled skill run with no
 * model call and falls back to agent mode when the replay fails, and other organisations see nothing.
 */
import { craftZip, skillMd } from '../helpers/crafted-zip';
import { renderReceiptImage, renderTextImage } from '../helpers/media-fixtures';
import type { ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, uploadFile, type TestApp } from '../helpers/test-app';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

interface ExecutionWire {
  id: string;
  status: string;
  execution_mode: string;
  response: Record<string, unknown> | null;
  usage: Record<string, number | string | null>;
}

const SCHEMA = {
  type: 'object',
  properties: { company: { type: 'string', minLength: 1 }, total: { type: 'string' } },
  required: ['company', 'total'],
};

describe('agent executions planned by an upstream model', () => {
  let lab: UpstreamApp;
  let upstream: ScriptedUpstream;
  let app: TestApp;
  let key: string;
  let otherKey: string;
  let receiptId: string;

  beforeAll(async () => {
    lab = await startUpstreamApp(
      [
        {
          id: 'prism-orion-2',
          upstreamModel: 'planner-llm',
          parameters: ['tools', 'tool_choice', 'temperature'],
          pricing: { prompt: 2.0, completion: 4.0 },
        },
      ],
      { provider: 'vLLM' },
    );
    ({ app, upstream } = lab);
    key = await app.createKey('llm-org');
    otherKey = await app.createKey('llm-other');
    await app.container.services.accounts.addCredits('llm-org', 5);
    await app.container.services.accounts.addCredits('llm-other', 5);
    const res = await uploadFile(app.url, key, renderReceiptImage(), { filename: 'receipt.png' });
    receiptId = ((await res.json()) as { id: string }).id;
  });
  afterAll(() => lab.close());

  const execute = async (body: unknown, as = key): Promise<ExecutionWire> =>
    (await (await call(`${app.url}/v1/agent/execute`, { key: as, json: body })).json()) as ExecutionWire;

  /** The model asks for OCR of the file, then answers from what it read. */
  const scriptRun = (fileId: string) =>
    upstream.next(
      {
        kind: 'reply',
        toolCalls: [{ id: 'call_ocr', name: 'ocr_image', arguments: JSON.stringify({ image: fileId }) }],
        usage: { prompt_tokens: 1000, completion_tokens: 100 },
      },
      {
        kind: 'reply',
        content: '```json\n{"company": "GREENLEAF GROCERY LTD", "total": "26.22"}\n```',
        usage: { prompt_tokens: 2000, completion_tokens: 50 },
      },
    );

  it('runs the tool calls the model returns and shows it the results', async () => {
    const seen = upstream.requests.length;
    scriptRun(receiptId);
    const run = await execute({
      model: 'prism-orion-2',
      inputs: { receipt: { type: 'input_file', file_id: receiptId } },
      config: { prompt: 'Who issued this receipt and what was paid?', json_schema: SCHEMA },
    });
    expect(run.status).toBe('completed');
    expect(run.response).toEqual({ company: 'GREENLEAF GROCERY LTD', total: '26.22' });
    const calls = upstream.requests.slice(seen);
    expect(calls).toHaveLength(2);
    const first = calls[0]?.body as { model: string; tools: { function: { name: string } }[]; messages: unknown[] };
    expect(first.model).toBe('planner-llm');
    expect(first.tools.map((t) => t.function.name)).toEqual(expect.arrayContaining(['ocr_image', 'fill_json_schema']));
    expect(JSON.stringify(first.messages)).toContain(receiptId);
    const second = calls[1]?.body as { messages: { role: string; tool_call_id?: string; content: string }[] };
    const toolMessage = second.messages.find((m) => m.role === 'tool');
    expect(toolMessage?.tool_call_id).toBe('call_ocr');
    expect(toolMessage?.content).toContain('GREENLEAF GROCERY');
    expect(run.usage.steps).toBe(3);
    expect(run.usage.message).toBeNull();
    // 3,000 prompt tokens at $2/M + 150 completion tokens at $4/M = $0.0066 at the standard tier.
    expect(run.usage).toMatchObject({
      service_tier: 'standard',
      mode_multiplier: 1,
      standard_cost_dollars: 0.0066,
      cost_dollars: 0.0066,
      savings_dollars: 0,
    });
  });

  it('prices flex at 0.5x and priority at 1.8x and debits the wallet', async () => {
    const before = await app.container.stores.wallets.balance(
      (await app.container.services.accounts.addCredits('llm-org', 0)).orgId,
    );
    scriptRun(receiptId);
    const flex = await execute({
      model: 'prism-orion-2:pro',
      inputs: { receipt: { type: 'input_file', file_id: receiptId } },
      config: { prompt: 'Read it', json_schema: SCHEMA, service_tier: 'flex' },
    });
    expect(flex.usage).toMatchObject({
      service_tier: 'flex',
      mode_multiplier: 0.5,
      standard_cost_dollars: 0.0066,
      cost_dollars: 0.0033,
      savings_dollars: 0.0033,
    });
    scriptRun(receiptId);
    const priority = await execute({
      model: 'prism-orion-2',
      inputs: { receipt: { type: 'input_file', file_id: receiptId } },
      config: { prompt: 'Read it', json_schema: SCHEMA, service_tier: 'priority' },
    });
    // savings_dollars is standard_cost_dollars minus cost_dollars (the spec's definition): negative at priority.
    expect(priority.usage).toMatchObject({
      mode_multiplier: 1.8,
      standard_cost_dollars: 0.0066,
      cost_dollars: 0.01188,
      savings_dollars: -0.00528,
    });
    const orgId = (await app.container.services.accounts.addCredits('llm-org', 0)).orgId;
    const after = await app.container.stores.wallets.balance(orgId);
    expect(before - after).toBe(3300 + 11880);
  });

  it('stops a run at the amount held for it and bills no more than that: the hold is a ceiling', async () => {
    const limitKey = await app.createKey('llm-limit');
    const orgId = (await app.container.services.accounts.addCredits('llm-limit', 1)).orgId;
    const uploaded = await uploadFile(app.url, limitKey, renderReceiptImage(), { filename: 'receipt.png' });
    const fileId = ((await uploaded.json()) as { id: string }).id;
    const seen = upstream.requests.length;
    // One planning round reports 300,000 prompt tokens ($0.60 at $2/M), more than the run's hold:
    // 24 steps (PRISM_AGENT_MAX_STEPS) x (8,192 x $2/M + 1,024 x $4/M) = $0.49152.
    upstream.next({
      kind: 'reply',
      toolCalls: [{ id: 'call_big', name: 'ocr_image', arguments: JSON.stringify({ image: fileId }) }],
      usage: { prompt_tokens: 300_000, completion_tokens: 10 },
    });
    const run = (await (
      await call(`${app.url}/v1/agent/execute`, {
        key: limitKey,
        json: {
          model: 'prism-orion-2',
          inputs: { receipt: { type: 'input_file', file_id: fileId } },
          config: { prompt: 'Read it', json_schema: SCHEMA },
        },
      })
    ).json()) as ExecutionWire;
    expect(run.status).toBe('failed');
    expect(run.usage.message).toMatch(/spending limit.*\$0\.4915 held/);
    expect(run.usage.cost_dollars).toBe(0.49152);
    // The model was not asked again after the round that went over.
    expect(upstream.requests.length - seen).toBe(1);
    expect(await app.container.stores.wallets.balance(orgId)).toBe(1_000_000 - 491_520);
  });

  it('compiles a skill run into a program, replays it with no model call, and falls back when replay fails', async () => {
    const zip = craftZip([{ name: 'SKILL.md', data: skillMd('receipt-reader', 'Reads shop receipts.') }]);
    const zipId = ((await (await uploadFile(app.url, key, zip, { filename: 'skill.zip' })).json()) as { id: string })
      .id;
    const created = await call(`${app.url}/v1/skills/create`, { key, json: { file_id: zipId } });
    expect(created.status).toBe(201);
    const body = (fileId: string) => ({
      model: 'prism-orion-2:pro',
      inputs: { receipt: { type: 'input_file', file_id: fileId } },
      config: {
        prompt: 'Read the receipt',
        json_schema: SCHEMA,
        skills: [{ type: 'skill_reference', skill_id: 'receipt-reader', skill_version: 'latest' }],
        mode: 'program',
      },
    });

    // No program yet: agent mode, which records and verifies one.
    scriptRun(receiptId);
    const first = await execute(body(receiptId));
    expect(first.status).toBe('completed');
    expect(first.execution_mode).toBe('agent');

    // Replay on a new upload of another receipt-like image: no model call.
    const other = renderTextImage(['CORNER SHOP', 'TOTAL 9.99']);
    const otherId = ((await (await uploadFile(app.url, key, other, { filename: 'o.png' })).json()) as { id: string })
      .id;
    const seen = upstream.requests.length;
    const replay = await execute(body(otherId));
    expect(upstream.requests.length).toBe(seen);
    expect(replay.status).toBe('completed');
    expect(replay.execution_mode).toBe('program');
    expect(replay.response?.company).toBe('CORNER SHOP');
    expect(replay.usage.message).toMatch(/no model was called/);

    // A blank image has no first OCR line: the replay fails, and agent mode runs (the model is called).
    const blank = renderTextImage([' ']);
    const blankId = ((await (await uploadFile(app.url, key, blank, { filename: 'b.png' })).json()) as { id: string })
      .id;
    scriptRun(blankId);
    const fallback = await execute(body(blankId));
    expect(fallback.execution_mode).toBe('agent');
    expect(upstream.requests.length).toBe(seen + 2);
  });

  it('keeps executions and artifacts to their organisation', async () => {
    const mine = (await (await call(`${app.url}/v1/agent/executions`, { key })).json()) as ExecutionWire[];
    expect(mine.length).toBeGreaterThan(0);
    const id = mine[0]?.id ?? '';
    expect((await call(`${app.url}/v1/agent/executions/${id}`, { key: otherKey })).status).toBe(404);
    expect((await (await call(`${app.url}/v1/agent/executions`, { key: otherKey })).json()) as unknown[]).toEqual([]);
    const listed = (await (await call(`${app.url}/v1/artifacts?execution_id=${id}`, { key })).json()) as {
      items: { object_id: string }[];
    };
    expect(listed.items.length).toBeGreaterThan(0);
    const objectId = listed.items[0]?.object_id ?? '';
    expect((await call(`${app.url}/v1/artifacts?object_id=${objectId}`, { key })).status).toBe(200);
    const foreign = await call(`${app.url}/v1/artifacts?object_id=${objectId}`, { key: otherKey });
    expect(foreign.status).toBe(404);
    const foreignList = (await (
      await call(`${app.url}/v1/artifacts?execution_id=${id}`, { key: otherKey })
    ).json()) as { items: unknown[] };
    expect(foreignList.items).toEqual([]);
  });
});
