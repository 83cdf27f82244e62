/**
 * Issue 47 item 3, beyond chat completions: the keys' allow-lists, budgets and spend records of the operator's API
 * (docs/admin.md) cover the other gateway routes too. Over plain HTTP and the openai SDK against the real app and a
 * scripted upstream: a transcription spends a key's budget until the next one is refused with 402
 * `key_budget_exceeded` before the upstream hears it, and the spend report names the transcription model; a model
 * outside a key's allow-list is refused on embeddings and transcriptions (403 `model_not_allowed`) before the
 * upstream is called, while an allowed one passes. Agent executions and priced extraction (`/v1/document/generate`)
 * hold the same budgets (402 before the planner is asked or a prediction is stored), check the model they name and
 * show in the spend report under it.
 */
import OpenAI, { toFile } from 'openai';
import { makeTextPdf } from '../helpers/media-fixtures';
import { call, uploadFile } from '../helpers/test-app';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';
import { makeWav } from '../helpers/wav';

/** $0.06 a minute is $0.001 a second: a 5 s clip costs (and is held at) $0.005. */
const PER_MINUTE = 0.06;

interface SpendReport {
  total_usd: number;
  rows: { group: string; calls: number; cost_usd: number }[];
}

describe('budgets and allow-lists on the paid gateway calls besides chat', () => {
  let lab: UpstreamApp;
  const wav5 = makeWav(5);
  const callsTo = (suffix: string) => lab.upstream.requests.filter((r) => r.path.endsWith(suffix)).length;
  const adminCall = (path: string, init: { method?: string; json?: unknown } = {}) =>
    call(`${lab.app.url}/v1/admin${path}`, { key: lab.app.ownerKey, ...init });
  const createKey = async (body: Record<string, unknown>): Promise<{ id: string; key: string }> => {
    const res = await adminCall('/keys', { json: body });
    expect(res.status).toBe(201);
    return (await res.json()) as { id: string; key: string };
  };
  const transcribe = async (key: string, model = 'whisper') => {
    const form = new FormData();
    form.append('model', model);
    form.append('file', new Blob([wav5], { type: 'audio/wav' }), 'note.wav');
    return fetch(`${lab.app.url}/v1/compat/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
  };

  beforeAll(async () => {
    lab = await startUpstreamApp(
      [
        {
          id: 'whisper',
          upstreamModel: 'whisper-up',
          capabilities: null,
          more: { mode: 'transcription', pricing: { per_minute: PER_MINUTE } },
        },
        {
          id: 'whisper-b',
          upstreamModel: 'whisper-b-up',
          capabilities: null,
          more: { mode: 'transcription', pricing: { per_minute: PER_MINUTE } },
        },
        { id: 'lab-embed', upstreamModel: 'embed-up', capabilities: null, more: { mode: 'embedding' } },
        // An agent planner at $2/$4 per million tokens: a run holds 24 steps × (8192 × $2 + 1024 × $4) = $0.49152.
        {
          id: 'prism-orion-2',
          upstreamModel: 'planner-llm',
          parameters: ['tools', 'tool_choice', 'temperature'],
          pricing: { prompt: 2.0, completion: 4.0 },
        },
      ],
      // Extraction at $0.002 a page: a two-page invoice holds and costs $0.004.
      { env: { PRISM_RATE_LIMIT_PER_MINUTE: '1000', PRISM_EXTRACTION_USD_PER_PAGE: '0.002' } },
    );
    expect((await adminCall('/organisations', { json: { name: 'paid', tier: 'pro' } })).status).toBe(201);
    expect((await adminCall('/organisations/paid/credits', { json: { amount_usd: 10 } })).status).toBe(200);
  });
  afterAll(() => lab.close());

  const execute = (key: string, model = 'prism-orion-2') =>
    call(`${lab.app.url}/v1/agent/execute`, {
      key,
      json: {
        model,
        config: {
          prompt: 'Name the company',
          json_schema: { type: 'object', properties: { company: { type: 'string' } }, required: ['company'] },
        },
      },
    });

  it("transcriptions hold the key's budget before the upstream and show in the spend report by model", async () => {
    const key = await createKey({ org: 'paid', name: 'speech', budget_usd: 0.008, budget_period: 'monthly' });
    const client = new OpenAI({ apiKey: key.key, baseURL: `${lab.app.url}/v1/compat`, maxRetries: 0 });
    const reply = await client.audio.transcriptions.create({
      file: await toFile(wav5, 'note.wav', { type: 'audio/wav' }),
      model: 'whisper',
    });
    expect(reply).toMatchObject({ usage: { seconds: 5, cost: 0.005 } });
    const heard = callsTo('/audio/transcriptions');
    const refused = await transcribe(key.key); // $0.005 spent; $0.005 more would pass $0.008
    expect(refused.status).toBe(402);
    expect(await refused.json()).toMatchObject({
      detail: { error: { code: 'key_budget_exceeded', type: 'billing_error' } },
    });
    expect(callsTo('/audio/transcriptions')).toBe(heard);

    const view = (await (await adminCall(`/keys/${key.id}`)).json()) as Record<string, unknown>;
    expect(view).toMatchObject({ budget_spent_usd: 0.005, spend_usd: 0.005 });
    const report = (await (await adminCall('/spend?group_by=model')).json()) as SpendReport;
    expect(report.rows).toContainEqual({ group: 'whisper', calls: 1, cost_usd: 0.005 });
  });

  it("transcriptions are held against the organisation's budget too", async () => {
    expect((await adminCall('/organisations', { json: { name: 'capped-speech' } })).status).toBe(201);
    await adminCall('/organisations/capped-speech/credits', { json: { amount_usd: 10 } });
    const set = await adminCall('/organisations/capped-speech/budget', {
      method: 'PUT',
      json: { budget_usd: 0.006, budget_period: 'daily' },
    });
    expect(set.status).toBe(200);
    const key = await createKey({ org: 'capped-speech' });
    expect((await transcribe(key.key)).status).toBe(200);
    const heard = callsTo('/audio/transcriptions');
    const refused = await transcribe(key.key);
    expect(refused.status).toBe(402);
    expect(await refused.json()).toMatchObject({ detail: { error: { code: 'org_budget_exceeded' } } });
    expect(callsTo('/audio/transcriptions')).toBe(heard);
  });

  it("embeddings and transcriptions refuse a model outside the key's allow-list before the upstream", async () => {
    const key = await createKey({ org: 'paid', name: 'listed', allowed_models: ['whisper', 'lab-embed'] });
    const embedded = await call(`${lab.app.url}/v1/compat/embeddings`, {
      key: key.key,
      json: { model: 'lab-embed', input: 'hello' },
    });
    expect(embedded.status).toBe(200);
    expect((await transcribe(key.key, 'whisper')).status).toBe(200);

    const embeds = callsTo('/embeddings');
    const speech = callsTo('/audio/transcriptions');
    const narrow = await createKey({ org: 'paid', name: 'chat-only', allowed_models: ['whisper-b'] });
    const refusedEmbed = await call(`${lab.app.url}/v1/compat/embeddings`, {
      key: narrow.key,
      json: { model: 'lab-embed', input: 'hello' },
    });
    expect(refusedEmbed.status).toBe(403);
    expect(await refusedEmbed.json()).toMatchObject({ detail: { error: { code: 'model_not_allowed' } } });
    const refusedSpeech = await transcribe(narrow.key, 'whisper');
    expect(refusedSpeech.status).toBe(403);
    expect(await refusedSpeech.json()).toMatchObject({ detail: { error: { code: 'model_not_allowed' } } });
    expect(callsTo('/embeddings')).toBe(embeds);
    expect(callsTo('/audio/transcriptions')).toBe(speech);
    expect((await transcribe(narrow.key, 'whisper-b')).status).toBe(200);
  });

  it("agent executions hold the key's budget before the planner is asked and show in the spend report", async () => {
    // One run holds $0.49152 and spends $0.10 (50 000 prompt tokens at $2 per million); the next would pass $0.55.
    const key = await createKey({ org: 'paid', name: 'agent', budget_usd: 0.55, budget_period: 'daily' });
    lab.upstream.next({
      kind: 'reply',
      content: '```json\n{"company": "ACME"}\n```',
      usage: { prompt_tokens: 50_000, completion_tokens: 0 },
    });
    const ran = await execute(key.key);
    expect(ran.status).toBe(200);
    expect(await ran.json()).toMatchObject({ status: 'completed', response: { company: 'ACME' } });
    const asked = callsTo('/chat/completions');
    const refused = await execute(key.key);
    expect(refused.status).toBe(402);
    expect(await refused.json()).toMatchObject({ detail: { error: { code: 'key_budget_exceeded' } } });
    expect(callsTo('/chat/completions')).toBe(asked);

    const view = (await (await adminCall(`/keys/${key.id}`)).json()) as Record<string, unknown>;
    expect(view).toMatchObject({ budget_spent_usd: 0.1, spend_usd: 0.1 });
    const report = (await (await adminCall('/spend?group_by=model')).json()) as SpendReport;
    expect(report.rows).toContainEqual({ group: 'prism-orion-2', calls: 1, cost_usd: 0.1 });
    // A key whose allow-list leaves the planner out is refused the run before it starts.
    const narrow = await createKey({ org: 'paid', name: 'no-agents', allowed_models: ['whisper'] });
    const notAllowed = await execute(narrow.key);
    expect(notAllowed.status).toBe(403);
    expect(await notAllowed.json()).toMatchObject({ detail: { error: { code: 'model_not_allowed' } } });
    expect(callsTo('/chat/completions')).toBe(asked);
  });

  it("priced extraction holds the key's budget before anything is stored and shows in the spend report", async () => {
    expect((await adminCall('/organisations', { json: { name: 'extracting' } })).status).toBe(201);
    await adminCall('/organisations/extracting/credits', { json: { amount_usd: 10 } });
    const key = await createKey({ org: 'extracting', budget_usd: 0.005, budget_period: 'none' });
    const pdf = await makeTextPdf([
      ['ACME SUPPLIES LTD', 'Invoice Number: INV-2024-0042', 'Total Due: 1,250.00'],
      ['Terms: 30 days', 'Thank you for your business'],
    ]);
    const uploaded = await uploadFile(lab.app.url, key.key, pdf, { filename: 'inv.pdf' });
    const fileId = ((await uploaded.json()) as { id: string }).id;
    const generate = (as: string) =>
      call(`${lab.app.url}/v1/document/generate`, {
        key: as,
        json: { file_id: fileId, model: 'prism-1', domain: 'document.invoice', batch: false },
      });
    const first = await generate(key.key);
    expect(first.status).toBe(201);
    expect(await first.json()).toMatchObject({ status: 'completed', usage: { credits_used: 2 } });
    const refused = await generate(key.key); // $0.004 spent; $0.004 more would pass $0.005
    expect(refused.status).toBe(402);
    expect(await refused.json()).toMatchObject({ detail: { error: { code: 'key_budget_exceeded' } } });
    // The refused request left no prediction behind.
    const listed = await call(`${lab.app.url}/v1/predictions?limit=100`, { key: key.key });
    expect(((await listed.json()) as unknown[]).length).toBe(1);

    const view = (await (await adminCall(`/keys/${key.id}`)).json()) as Record<string, unknown>;
    expect(view).toMatchObject({ budget_spent_usd: 0.004, spend_usd: 0.004 });
    const report = (await (await adminCall('/spend?group_by=model')).json()) as SpendReport;
    expect(report.rows).toContainEqual({ group: 'prism-1', calls: 1, cost_usd: 0.004 });
    // A key whose allow-list leaves `prism-1` out is refused before anything is read.
    const narrow = await createKey({ org: 'extracting', allowed_models: ['whisper'] });
    const notAllowed = await generate(narrow.key);
    expect(notAllowed.status).toBe(403);
    expect(await notAllowed.json()).toMatchObject({ detail: { error: { code: 'model_not_allowed' } } });
  });
});
