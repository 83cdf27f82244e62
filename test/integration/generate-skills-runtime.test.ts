/**
 * Generate with skills on the agent runtime, with the deterministic planner (no upstream model):
 * a skill whose prism.yaml declares toolsets runs through the runtime on an image and a PDF and fills the schema
 * exactly as the extraction engine's direct path does for the built-in receipt skill; a skill with a graph runs its
 * states in the same order as /v1/agent/execute does; batch goes pending → enqueued → running → completed through the
 * job queue with a signed callback; a skill whose tools cannot read the input fails with a message naming the
 * setting; another organisation's skill is a 404 naming config.skills. The `vlmrun` SDK (0.2.12 sends no
 * `config.skills`) uploads the inputs and reads the records back.
 */
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { VlmRun } from 'vlmrun';
import { startCallbackReceiver, type CallbackReceiver } from '../helpers/callback-receiver';
import { craftZip } from '../helpers/crafted-zip';
import { makeVideo } from '../helpers/media-clips';
import { makeTextPdf, RECEIPT_LINES, renderReceiptImage } from '../helpers/media-fixtures';
import { call, startTestApp, uploadFile, type TestApp } from '../helpers/test-app';

interface PredictionWire {
  id: string;
  status: string;
  domain: string | null;
  response: Record<string, unknown> | null;
  usage: { elements_processed: number; element_type: string; credits_used: number; steps: number; message: string };
}

interface StepWire {
  kind: string;
  goal: string | null;
  name: string;
}

const BUILTIN = path.join(__dirname, '..', '..', 'skills', 'receipt');
const RECEIPT_SCHEMA = fs.readFileSync(path.join(BUILTIN, 'schema.json'), 'utf8');
const RECEIPT_BODY = fs.readFileSync(path.join(BUILTIN, 'SKILL.md'), 'utf8').split('---').slice(2).join('---');

const NOTE_SCHEMA = {
  type: 'object',
  properties: { merchant_name: { type: ['string', 'null'] }, total: { type: ['number', 'null'] } },
};

function skillZip(name: string, prismYaml: string | null, schema: string, baseDomain: string | null): Buffer {
  const front = [`name: ${name}`, `description: The ${name} skill.`];
  if (baseDomain) front.push('metadata:', `  base_domain: ${baseDomain}`);
  const entries = [
    { name: 'SKILL.md', data: `---\n${front.join('\n')}\n---\n${RECEIPT_BODY}` },
    { name: 'schema.json', data: schema },
  ];
  if (prismYaml) entries.push({ name: 'prism.yaml', data: prismYaml });
  return craftZip(entries);
}

const TOOLS_YAML = 'apiVersion: prism/v1alpha\ntoolsets: [core, image, document]\n';
const GRAPH_YAML = [
  'apiVersion: prism/v1alpha',
  'toolsets: [core, document]',
  'graph: |',
  '  stateDiagram-v2',
  '    Read: read the pages',
  '    Fill: fill the schema',
  '    [*] --> Read',
  '    Read --> Fill',
  '    Fill --> [*]',
  '',
].join('\n');

describe('generate with skills on the agent runtime (deterministic planner)', () => {
  let app: TestApp;
  let key: string;
  let otherKey: string;
  let client: VlmRun;
  let workDir: string;
  let pdfId: string;
  let imageUrl: string;
  let receiver: CallbackReceiver;

  beforeAll(async () => {
    app = await startTestApp({ PRISM_ALLOW_PRIVATE_URLS: '1', PRISM_WEBHOOK_SECRET: 'generate-hook-secret-1' });
    key = await app.createKey('gen-skills-org');
    otherKey = await app.createKey('gen-skills-other');
    await app.container.services.accounts.addCredits('gen-skills-org', 5);
    await app.container.services.accounts.addCredits('gen-skills-other', 5);
    client = new VlmRun({ apiKey: key, baseURL: `${app.url}/v1` });
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-gen-skills-'));
    const pdfPath = path.join(workDir, 'receipt.pdf');
    fs.writeFileSync(pdfPath, await makeTextPdf([[...RECEIPT_LINES]]));
    pdfId = (await client.files.upload({ filePath: pdfPath, purpose: 'vision' })).id;
    imageUrl = `data:image/png;base64,${renderReceiptImage().toString('base64')}`;
    for (const [name, yaml, schema, base] of [
      ['receipt-tools', TOOLS_YAML, RECEIPT_SCHEMA, 'document.receipt'],
      ['receipt-graph', GRAPH_YAML, JSON.stringify(NOTE_SCHEMA), null],
      ['audio-only', 'apiVersion: prism/v1alpha\ntoolsets: [core, audio]\n', JSON.stringify(NOTE_SCHEMA), null],
    ] as const) {
      const upload = await uploadFile(app.url, key, skillZip(name, yaml, schema, base), { filename: `${name}.zip` });
      const fileId = ((await upload.json()) as { id: string }).id;
      expect((await call(`${app.url}/v1/skills/create`, { key, json: { file_id: fileId } })).status).toBe(201);
    }
    receiver = await startCallbackReceiver();
  }, 120_000);
  afterAll(async () => {
    await receiver.close();
    await app.close();
    fs.rmSync(workDir, { recursive: true, force: true });
  });

  const generate = (route: string, body: Record<string, unknown>, as = key) =>
    call(`${app.url}/v1/${route}/generate`, { key: as, json: body });
  const skill = (name: string) => [{ type: 'skill_reference', skill_id: name, skill_version: 'latest' }];

  async function stepsOf(predictionId: string): Promise<StepWire[]> {
    const listed = (await (await call(`${app.url}/v1/artifacts?execution_id=${predictionId}`, { key })).json()) as {
      items: { object_id: string; filename: string }[];
    };
    const file = listed.items.find((i) => i.filename === 'steps.json');
    expect(file).toBeDefined();
    const bytes = await call(`${app.url}/v1/artifacts?object_id=${file?.object_id ?? ''}`, { key });
    return (await bytes.json()) as StepWire[];
  }

  it.each([
    ['image', () => ({ images: [imageUrl] })],
    ['document', () => ({ file_id: pdfId })],
  ])(
    'runs a skill with toolsets on %s through the runtime, filling the schema as the direct path does',
    async (route, input) => {
      const viaRuntime = await generate(route, {
        ...input(),
        batch: false,
        config: { skills: skill('receipt-tools') },
      });
      expect(viaRuntime.status).toBe(201);
      const run = (await viaRuntime.json()) as PredictionWire;
      const direct = (await (
        await generate(route, { ...input(), batch: false, config: { skills: skill('receipt') } })
      ).json()) as PredictionWire;
      expect(direct.usage.message ?? '').not.toMatch(/agent runtime/);

      expect(run).toMatchObject({ status: 'completed', domain: 'document.receipt' });
      expect(run.response?.total).toBe(26.22);
      expect(run.response).toEqual(direct.response);
      const reader = route === 'image' ? 'ocr_image' : 'read_document';
      expect(run.usage).toMatchObject({
        element_type: route === 'image' ? 'image' : 'page',
        elements_processed: 1,
        credits_used: 1,
      });
      expect(run.usage.message).toContain('Ran on the agent runtime (prism-orion-1:auto, the deterministic planner');
      expect(run.usage.message).toContain(`${reader}, plan, fill_json_schema`);
      expect(run.usage.message).toContain('No language model planned this run');

      const steps = await stepsOf(run.id);
      expect(run.usage.steps).toBe(steps.length);
      const tools = steps.filter((s) => s.kind === 'tool').map((s) => s.name);
      expect(tools).toEqual([reader, 'fill_json_schema']);
      // The fill step got the skill's base domain, as the extraction engine does.
      const fill = steps.find((s) => s.name === 'fill_json_schema') as StepWire & {
        arguments: Record<string, unknown>;
      };
      expect(fill.arguments).toMatchObject({ domain: 'document.receipt' });

      const read = (await client.predictions.get(run.id)) as unknown as PredictionWire;
      expect(read.response).toEqual(run.response);
    },
    // The first OCR of the file loads the recognition models.
    180_000,
  );

  it('follows a skill graph in order, as /v1/agent/execute does with the same skill', async () => {
    const res = await generate('document', {
      file_id: pdfId,
      batch: false,
      config: { skills: skill('receipt-graph') },
    });
    const run = (await res.json()) as PredictionWire;
    expect(run.status).toBe('completed');
    expect(run.response?.total).toBe(26.22);
    expect(typeof run.response?.merchant_name).toBe('string');
    const steps = await stepsOf(run.id);
    expect([...new Set(steps.map((s) => s.goal))]).toEqual(['Read', 'Fill']);
    expect(run.usage.message).toContain('Read: read_document');
    expect(run.usage.message).toContain('Fill: plan');

    const executed = await call(`${app.url}/v1/agent/execute`, {
      key,
      json: {
        inputs: { document: { type: 'input_file', file_id: pdfId } },
        config: { skills: skill('receipt-graph') },
      },
    });
    const execution = (await executed.json()) as { id: string; status: string; response: unknown };
    expect(execution.status).toBe('completed');
    const recorded = await app.container.stores.executions.getById(execution.id);
    const shape = (list: StepWire[]) => list.map((s) => [s.goal, s.kind, s.kind === 'tool' ? s.name : null]);
    expect(shape(steps)).toEqual(shape(recorded?.steps ?? []));
    expect(execution.response).toEqual(run.response);
  });

  it('runs batch requests through the job queue and calls back signed', async () => {
    const store = app.container.stores.predictions;
    const seen: string[] = [];
    const transition = store.transition.bind(store);
    store.transition = async (id, from, to, update) => {
      const moved = await transition(id, from, to, update);
      if (moved) seen.push(moved.status);
      return moved;
    };
    try {
      const res = await generate('document', {
        file_id: pdfId,
        batch: true,
        callback_url: receiver.url,
        config: { skills: skill('receipt-tools') },
      });
      expect(res.status).toBe(201);
      const accepted = (await res.json()) as PredictionWire;
      expect(accepted).toMatchObject({ status: 'pending', response: null });
      const done = (await client.predictions.wait(accepted.id, 60, 0.2)) as unknown as PredictionWire;
      expect(done.status).toBe('completed');
      expect(done.response?.total).toBe(26.22);
      expect(done.usage.message).toContain('agent runtime');
      expect(seen).toEqual(['enqueued', 'running', 'completed']);
      await app.container.webhooks.idle();
      const hook = receiver.received.find((r) => (JSON.parse(r.body) as { id: string }).id === accepted.id);
      expect(hook?.event).toBe('prediction.completed');
      const expected = `sha256=${createHmac('sha256', 'generate-hook-secret-1')
        .update(hook?.body ?? '')
        .digest('hex')}`;
      expect(hook?.signature).toBe(expected);
      expect((JSON.parse(hook?.body ?? '{}') as PredictionWire).response?.total).toBe(26.22);
    } finally {
      store.transition = transition;
    }
  });

  it('runs an inline base64 skill and a pinned version through the queue (the job resolves them again)', async () => {
    const zip = skillZip('inline-receipt', TOOLS_YAML, RECEIPT_SCHEMA, 'document.receipt');
    const inline = [
      {
        type: 'inline',
        name: 'inline-receipt',
        source: { type: 'base64', media_type: 'application/zip', data: zip.toString('base64') },
      },
    ];
    const accepted = (await (
      await generate('document', { file_id: pdfId, batch: true, config: { skills: inline } })
    ).json()) as PredictionWire;
    const done = (await client.predictions.wait(accepted.id, 60, 0.2)) as unknown as PredictionWire;
    expect(done).toMatchObject({ status: 'completed', response: { total: 26.22 } });
    expect(done.usage.message).toContain('agent runtime');

    const version = (await (
      await call(`${app.url}/v1/skills/lookup`, { key, json: { name: 'receipt-tools' } })
    ).json()) as { skill_version: string };
    const pinned = (await (
      await generate('document', {
        file_id: pdfId,
        batch: true,
        config: { skills: [{ skill_name: 'receipt-tools', skill_version: version.skill_version }] },
      })
    ).json()) as PredictionWire;
    const read = (await client.predictions.wait(pinned.id, 60, 0.2)) as unknown as PredictionWire;
    expect(read).toMatchObject({ status: 'completed', response: { total: 26.22 } });
    const wrong = await generate('document', {
      file_id: pdfId,
      batch: false,
      config: { skills: [{ skill_name: 'receipt-tools', skill_version: '20000101-00000000' }] },
    });
    expect(wrong.status).toBe(404);
  });

  it('replays the compiled program of a schema-valid run for prism-orion-2, with no planning', async () => {
    const body = {
      file_id: pdfId,
      model: 'prism-orion-2',
      batch: false,
      config: { skills: skill('receipt-graph') },
    };
    const first = (await (await generate('document', body)).json()) as PredictionWire;
    expect(first.status).toBe('completed');
    expect(first.usage.message).toContain('agent mode');
    expect(first.usage.message).toContain('Program mode fell back to the agent loop (no verified program');
    const again = (await (await generate('document', body)).json()) as PredictionWire;
    expect(again.status).toBe('completed');
    expect(again.usage.message).toContain('(prism-orion-2, the deterministic planner, program mode)');
    expect(again.usage.message).toContain('no model was called');
    expect(again.response).toEqual(first.response);
    const steps = await stepsOf(again.id);
    expect(steps.map((s) => [s.kind, s.name])).toEqual([
      ['tool', 'read_document'],
      ['tool', 'fill_json_schema'],
    ]);
  });

  it('keeps the built-in video-summary skill on the engine-built transcription when no model can plan it', async () => {
    const video = await makeVideo(
      [
        { durationS: 2, color: 'white', text: ['QUARTERLY REPORT'] },
        { durationS: 2, color: 'white', text: ['REVENUE UP 12 PERCENT'] },
      ],
      { width: 640, height: 360 },
    );
    const videoId = ((await (await uploadFile(app.url, key, video, { filename: 'clip.mp4' })).json()) as { id: string })
      .id;
    const res = await generate('video', {
      file_id: videoId,
      batch: false,
      config: { video_fps: 1, skills: skill('video-summary') },
    });
    const prediction = (await res.json()) as PredictionWire & { response: { segments: { video: unknown }[] } };
    expect(prediction).toMatchObject({ status: 'completed', domain: 'video.transcription' });
    expect(prediction.response.segments.length).toBeGreaterThan(0);
    expect(JSON.stringify(prediction.response.segments)).toContain('QUARTERLY REPORT');
    expect(prediction.usage.message).toContain("The skill's toolsets and graph were not run");
    expect(prediction.usage.message).toContain('PRISM_MODELS_FILE');
    expect(prediction.usage.message).not.toContain('Ran on the agent runtime');
  }, 120_000);

  it('fails with a message naming the setting when the skill leaves out the tool the input needs', async () => {
    const res = await generate('image', { images: [imageUrl], batch: false, config: { skills: skill('audio-only') } });
    expect(res.status).toBe(400);
    const { detail } = (await res.json()) as { detail: { error: { message: string; param: string } } };
    expect(detail.error.param).toBe('config.skills');
    expect(detail.error.message).toContain('needs the ocr_image tool');
    expect(detail.error.message).toContain("toolsets of the skill's prism.yaml");
    expect(detail.error.message).toContain('PRISM_MODELS_FILE');
    const list = (await (await call(`${app.url}/v1/predictions?limit=1000`, { key })).json()) as PredictionWire[];
    const failed = list.find((p) => p.status === 'failed');
    expect(failed?.response).toBeNull();
    expect(failed?.usage.message).toContain('needs the ocr_image tool');
  });

  it("keeps skills to their organisation: another org's skill id is a 404 naming config.skills", async () => {
    const mine = (await (
      await call(`${app.url}/v1/skills/lookup`, { key, json: { name: 'receipt-tools' } })
    ).json()) as { id: string };
    const pdf = await uploadFile(app.url, otherKey, await makeTextPdf([[...RECEIPT_LINES]]), { filename: 'r.pdf' });
    const otherPdf = ((await pdf.json()) as { id: string }).id;
    const foreign = await generate(
      'document',
      { file_id: otherPdf, batch: false, config: { skills: [{ skill_id: mine.id }] } },
      otherKey,
    );
    expect(foreign.status).toBe(404);
    expect(((await foreign.json()) as { detail: { error: unknown } }).detail.error).toMatchObject({
      code: 'skill_not_found',
      param: 'config.skills',
    });
    const theirs = (await (await call(`${app.url}/v1/predictions?limit=1000`, { key: otherKey })).json()) as unknown[];
    expect(theirs).toEqual([]);
  });
});
