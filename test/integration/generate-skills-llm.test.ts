/**
 * Generate with a skill on the agent runtime planned by an upstream model (the scripted OpenAI-compatible server as
 * prism-orion-1 in the models file, the default planner of generate runs): the model is offered the skill's
 * toolsets plus core, sees the skill's instructions and the input's artifact id, its tool calls run against the real
 * tools, the prediction holds its answer and its steps, and the wallet is debited at the agent model's prices. A
 * batch run stopped by a shutdown mid-way stays `running` and runs again (from the start) after the restart.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { craftZip, skillMd } from '../helpers/crafted-zip';
import { renderReceiptImage } from '../helpers/media-fixtures';
import { startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, startTestApp, uploadFile, type TestApp } from '../helpers/test-app';

const SCHEMA = {
  type: 'object',
  properties: { company: { type: 'string', minLength: 1 }, total: { type: 'string' } },
  required: ['company', 'total'],
};

async function until<T>(probe: () => Promise<T | null>, what: string): Promise<T> {
  for (let i = 0; i < 400; i += 1) {
    const value = await probe();
    if (value !== null) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function skillBundle(): Buffer {
  return craftZip([
    { name: 'SKILL.md', data: skillMd('label-reader', 'Reads shop receipts.', 'Find the shop and the total.') },
    { name: 'schema.json', data: JSON.stringify(SCHEMA) },
    { name: 'prism.yaml', data: 'apiVersion: prism/v1alpha\ntoolsets: [core, image]\n' },
  ]);
}

function modelsFile(dir: string, upstreamUrl: string): string {
  const file = path.join(dir, 'models.yaml');
  fs.writeFileSync(
    file,
    [
      'upstreams:',
      '  - name: lab',
      `    base_url: ${upstreamUrl}`,
      'models:',
      '  - id: prism-orion-1',
      '    engine: { kind: upstream, upstream: lab, model: planner-llm }',
      '    capabilities: { supported_input_types: [text] }',
      '    supported_parameters: [tools, tool_choice, temperature]',
      '    pricing: { prompt: 2.0, completion: 4.0 }',
      '',
    ].join('\n'),
  );
  return file;
}

describe('generate with a skill planned by an upstream model', () => {
  let upstream: ScriptedUpstream;
  let app: TestApp;
  let dir: string;
  let key: string;
  let receiptId: string;

  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-gen-skills-llm-'));
    app = await startTestApp({ PRISM_MODELS_FILE: modelsFile(dir, upstream.baseUrl) });
    key = await app.createKey('gen-llm-org');
    await app.container.services.accounts.addCredits('gen-llm-org', 5);
    const res = await uploadFile(app.url, key, renderReceiptImage(), { filename: 'receipt.png' });
    receiptId = ((await res.json()) as { id: string }).id;
    const zip = skillBundle();
    const zipId = ((await (await uploadFile(app.url, key, zip, { filename: 'skill.zip' })).json()) as { id: string })
      .id;
    expect((await call(`${app.url}/v1/skills/create`, { key, json: { file_id: zipId } })).status).toBe(201);
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('runs the tool calls the model returns and answers with its JSON as the prediction', async () => {
    const orgId = (await app.container.services.accounts.addCredits('gen-llm-org', 0)).orgId;
    const before = await app.container.stores.wallets.balance(orgId);
    upstream.next(
      {
        kind: 'reply',
        toolCalls: [{ id: 'call_ocr', name: 'ocr_image', arguments: JSON.stringify({ image: receiptId }) }],
        usage: { prompt_tokens: 1000, completion_tokens: 100 },
      },
      {
        kind: 'reply',
        content: '{"company": "GREENLEAF GROCERY LTD", "total": "26.22"}',
        usage: { prompt_tokens: 2000, completion_tokens: 50 },
      },
    );
    const seen = upstream.requests.length;
    const res = await call(`${app.url}/v1/image/generate`, {
      key,
      json: {
        images: [`data:image/png;base64,${renderReceiptImage().toString('base64')}`],
        config: { skills: [{ skill_name: 'label-reader', skill_version: 'latest' }] },
      },
    });
    expect(res.status).toBe(201);
    const prediction = (await res.json()) as {
      status: string;
      response: unknown;
      usage: { steps: number; message: string; element_type: string };
    };
    expect(prediction.status).toBe('completed');
    expect(prediction.response).toEqual({ company: 'GREENLEAF GROCERY LTD', total: '26.22' });

    const calls = upstream.requests.slice(seen);
    expect(calls).toHaveLength(2);
    const first = calls[0]?.body as {
      model: string;
      tools: { function: { name: string } }[];
      messages: { content: string }[];
    };
    expect(first.model).toBe('planner-llm');
    expect(first.tools.map((t) => t.function.name).sort()).toEqual(
      [
        'fill_json_schema',
        'lookup_hub_domain',
        'ocr_image',
        'read_artifact',
        'read_skill_file',
        'write_artifact',
      ].sort(),
    );
    const task = JSON.stringify(first.messages);
    expect(task).toContain('Skill \\"label-reader\\"');
    expect(task).toContain('Find the shop and the total.');
    expect(task).toMatch(/image at \\"img_[a-z0-9]{6}\\"/);
    const second = calls[1]?.body as { messages: { role: string; tool_call_id?: string; content: string }[] };
    const toolMessage = second.messages.find((m) => m.role === 'tool');
    expect(toolMessage?.tool_call_id).toBe('call_ocr');
    expect(toolMessage?.content).toContain('GREENLEAF GROCERY');

    expect(prediction.usage.steps).toBe(3);
    expect(prediction.usage.element_type).toBe('image');
    expect(prediction.usage.message).toContain(
      '(prism-orion-1:auto, prism-orion-1, agent mode) in 3 steps: plan, ocr_image',
    );
    expect(prediction.usage.message).not.toContain('No language model');
    // 3,000 prompt tokens at $2/M + 150 completion tokens at $4/M = $0.0066, debited from the wallet.
    expect(before - (await app.container.stores.wallets.balance(orgId))).toBe(6600);
  });

  it('refuses an agent model on generate without skills, and a domain keeps the direct path', async () => {
    const image = `data:image/png;base64,${renderReceiptImage().toString('base64')}`;
    const noSkills = await call(`${app.url}/v1/image/generate`, {
      key,
      json: { images: [image], model: 'prism-orion-1', domain: 'document.receipt' },
    });
    expect(noSkills.status).toBe(400);
    expect(((await noSkills.json()) as { detail: { error: { param: string } } }).detail.error.param).toBe('model');
    const seen = upstream.requests.length;
    const withDomain = await call(`${app.url}/v1/image/generate`, {
      key,
      json: {
        images: [image],
        domain: 'document.receipt',
        config: { skills: [{ skill_name: 'label-reader' }] },
      },
    });
    const body = (await withDomain.json()) as {
      status: string;
      response: { total: number };
      usage: { message: unknown };
    };
    expect(body.status).toBe('completed');
    expect(body.response.total).toBe(26.22);
    expect(String(body.usage.message)).not.toContain('agent runtime');
    expect(upstream.requests.length).toBe(seen);
  });
});

describe('a generate run on the agent runtime stopped by a restart', () => {
  let upstream: ScriptedUpstream;
  let dir: string;

  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-gen-skills-restart-'));
  });
  afterAll(async () => {
    await upstream.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('stays running at shutdown and completes after the restart, billed once', async () => {
    const env = { PRISM_MODELS_FILE: modelsFile(dir, upstream.baseUrl), PRISM_SHUTDOWN_GRACE_S: '1' };
    const first = await startTestApp(env);
    const key = await first.createKey('gen-restart-org');
    const orgId = (await first.container.services.accounts.addCredits('gen-restart-org', 5)).orgId;
    const fileId = (
      (await (await uploadFile(first.url, key, renderReceiptImage(), { filename: 'r.png' })).json()) as { id: string }
    ).id;
    const zipId = (
      (await (await uploadFile(first.url, key, skillBundle(), { filename: 's.zip' })).json()) as { id: string }
    ).id;
    expect((await call(`${first.url}/v1/skills/create`, { key, json: { file_id: zipId } })).status).toBe(201);
    const before = await first.container.stores.wallets.balance(orgId);
    const ocrCall = {
      kind: 'reply' as const,
      toolCalls: [{ id: 'call_ocr', name: 'ocr_image', arguments: JSON.stringify({ image: fileId }) }],
      usage: { prompt_tokens: 1000, completion_tokens: 100 },
    };
    upstream.next(ocrCall, { kind: 'hang' });
    const queued = (await (
      await call(`${first.url}/v1/document/generate`, {
        key,
        json: { file_id: fileId, batch: true, config: { skills: [{ skill_name: 'label-reader' }] } },
      })
    ).json()) as { id: string; status: string };
    expect(queued.status).toBe('pending');
    // The second planning call hangs: the run is in the middle of its loop.
    await until(async () => (upstream.requests.length >= 2 ? true : null), 'the second planning call');
    await first.stop();

    upstream.next(ocrCall, {
      kind: 'reply',
      content: '{"company": "GREENLEAF GROCERY LTD", "total": "26.22"}',
      usage: { prompt_tokens: 2000, completion_tokens: 50 },
    });
    const second = await startTestApp(env, first.dataDir);
    try {
      const done = await until(async () => {
        const got = (await (await call(`${second.url}/v1/predictions/${queued.id}`, { key })).json()) as {
          status: string;
          response: unknown;
          usage: { steps: number };
        };
        return got.status === 'completed' || got.status === 'failed' ? got : null;
      }, 'the restarted run');
      expect(done.status).toBe('completed');
      expect(done.response).toEqual({ company: 'GREENLEAF GROCERY LTD', total: '26.22' });
      expect(done.usage.steps).toBe(3);
      // The stopped run is not billed; the run after the restart is debited directly: 3,000 prompt tokens at $2/M
      // and 150 completion tokens at $4/M.
      expect(upstream.requests).toHaveLength(4);
      expect(before - (await second.container.stores.wallets.balance(orgId))).toBe(6600);
    } finally {
      await second.close();
    }
  }, 120_000);
});
