import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AppError } from '../../../src/domain/errors';
import {
  createModelCatalogue,
  loadModelCatalogue,
  toListingRecord,
} from '../../../src/gateway/catalogue/model-catalogue';
import { ModelCatalogueError, parseModelsFile } from '../../../src/gateway/catalogue/models-file';

const FILE = `
upstreams:
  - name: local-vllm
    base_url: http://127.0.0.1:8000/v1/
    api_key_env: VLLM_KEY
    provider: vLLM
  - name: ollama
    base_url: http://127.0.0.1:11434/v1
models:
  - id: qwen-vl
    aliases: [qwen2.5-vl, gpt-4o]
    engine: { kind: upstream, upstream: local-vllm, model: Qwen/Qwen2.5-VL-7B-Instruct }
    capabilities: { supported_input_types: [text, image], json_schema: true, max_images: 4 }
    pricing: { prompt: 0.2, completion: null }
    ttft_timeout_s: 60
  - id: prism-1
    serving: false
    pricing: { prompt: 1.5 }
  - id: llama
    engine: { kind: upstream, upstream: ollama, model: llama3.2 }
aliases:
  extractor: prism-1
`;

function catalogue(text = FILE, env: Record<string, string> = { VLLM_KEY: 'sk-test' }) {
  return createModelCatalogue({ file: parseModelsFile(text), env, now: 1_700_000_000 });
}

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ModelCatalogueError) return error.problems;
    throw error;
  }
  throw new Error('expected a ModelCatalogueError');
}

describe('model catalogue: built-ins', () => {
  const models = createModelCatalogue({ env: {} });

  it('serves the spec models and two embedding models', () => {
    expect(models.list().map((m) => m.id)).toEqual([
      'prism-1',
      'prism-orion-1',
      'prism-orion-2',
      'prism-embed-text-1',
      'prism-embed-mm-1',
    ]);
    expect(models.list('embedding').map((m) => m.capabilities.dimensions[0])).toEqual([768, 2048]);
  });

  it('gives prism-1 the structured-extraction capabilities', () => {
    const m = models.resolve('prism-1');
    expect(m.capabilities).toMatchObject({ maxImages: 1, methods: ['ocr', 'markdown', 'text', 'extract'] });
    expect(m.capabilities.supportedInputTypes).toEqual(expect.arrayContaining(['image', 'document', 'video']));
    expect(models.upstreamTarget(m)).toBeNull();
    expect(models.provider(m)).toBe('prism');
  });

  it('renders the listing record with every named field, keeping 0 and null exact', () => {
    const record = toListingRecord(models.resolve('prism-1'));
    expect(Object.keys(record).sort()).toEqual(
      [
        'capabilities',
        'created',
        'default_method',
        'id',
        'methods',
        'mode',
        'object',
        'owned_by',
        'pricing',
        'supported_parameters',
        'throughput',
      ].sort(),
    );
    expect(record).toMatchObject({ id: 'prism-1', object: 'model', owned_by: 'prism', default_method: 'extract' });
    expect(record.pricing).toEqual({ prompt: 0, completion: 0 });
    expect(record.capabilities.supported_input_types).toContain('document');
    expect(record.throughput).toEqual({ tokens_per_second: null, pages_per_minute: null });
  });

  it('throws 404 model_not_found for an unknown name', () => {
    expect.assertions(3);
    try {
      models.resolve('gpt-5');
    } catch (error) {
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).status).toBe(404);
      expect((error as AppError).type).toBe('model_not_found');
    }
  });
});

describe('model catalogue: models file', () => {
  it('adds upstream models with aliases, looking the key up by variable name', () => {
    const models = catalogue();
    const qwen = models.resolve('gpt-4o');
    expect(qwen.id).toBe('qwen-vl');
    expect(models.upstreamTarget(qwen)).toEqual({
      provider: 'vLLM',
      baseUrl: 'http://127.0.0.1:8000/v1',
      apiKey: 'sk-test',
      model: 'Qwen/Qwen2.5-VL-7B-Instruct',
      ttftTimeoutMs: 60_000,
      totalTimeoutMs: 600_000,
    });
    expect(toListingRecord(qwen)).toMatchObject({ owned_by: 'vLLM', created: 1_700_000_000 });
    expect(toListingRecord(qwen).pricing).toEqual({ prompt: 0.2, completion: null });
  });

  it('defaults a new model: unknown price, 30/600 s deadlines, the common OpenAI parameters, serving', () => {
    const llama = catalogue().resolve('llama');
    expect(llama.pricing).toEqual({ prompt: null, completion: null });
    expect([llama.ttftTimeoutS, llama.totalTimeoutS, llama.serving]).toEqual([30, 600, true]);
    expect(llama.supportedParameters).toContain('temperature');
    expect(catalogue().upstreamTarget(llama)?.apiKey).toBeNull();
  });

  it('overrides only the fields a built-in entry gives, and adds top-level aliases', () => {
    const models = catalogue();
    const prism = models.resolve('extractor');
    expect(prism.id).toBe('prism-1');
    expect(prism.pricing).toEqual({ prompt: 1.5, completion: 0 });
    expect(prism.capabilities.methods).toEqual(['ocr', 'markdown', 'text', 'extract']);
    expect(prism.aliases).toContain('extractor');
  });

  it('answers 503 with Retry-After 30 for a model that is not serving', () => {
    expect.assertions(3);
    try {
      catalogue().resolveServing('prism-1');
    } catch (error) {
      expect((error as AppError).status).toBe(503);
      expect((error as AppError).code).toBe('model_not_serving');
      expect((error as AppError).retryAfterSeconds).toBe(30);
    }
  });

  it('names every schema problem with its place in the file', () => {
    const problems = problemsOf(() =>
      parseModelsFile(`
upstreams:
  - name: x
    base_url: ftp://nope
    api_key: sk-secret
models:
  - id: m1
    engine: { kind: remote }
    pricing: { prompt: -1 }
`),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^upstreams\[0\]\.base_url: /),
        expect.stringMatching(/^upstreams\[0\].*api_key/),
        expect.stringMatching(/^models\[0\] \(m1\)\.engine\.kind: /),
        expect.stringMatching(/^models\[0\] \(m1\)\.pricing\.prompt: /),
      ]),
    );
  });

  it('names every cross-reference problem at once', () => {
    const problems = problemsOf(() =>
      catalogue(
        `
upstreams:
  - name: vllm
    base_url: http://127.0.0.1:8000/v1
    api_key_env: MISSING_KEY
models:
  - id: a
    engine: { kind: upstream, upstream: nowhere, model: x }
    aliases: [prism-1]
  - id: b
  - id: c
    engine: { kind: upstream, upstream: vllm, model: y }
    capabilities: { methods: [ocr], default_method: extract }
    ttft_timeout_s: 700
aliases:
  z: nosuch
`,
        {},
      ),
    );
    expect(problems).toEqual([
      'upstreams.vllm.api_key_env: environment variable MISSING_KEY is not set',
      'models.b.engine: required for a new model',
      "models.a.engine.upstream: no upstream named 'nowhere'",
      "models.c.capabilities.default_method: 'extract' is not one of methods",
      'models.c.ttft_timeout_s: 700 is longer than total_timeout_s 600',
      "models.a.aliases: 'prism-1' already names model 'prism-1'",
      "aliases.z: no model with id 'nosuch'",
    ]);
  });

  it('reports YAML syntax errors', () => {
    expect(problemsOf(() => parseModelsFile('models: [\n  - id: x'))[0]).toMatch(/^YAML: /);
  });

  it('loads a file from disk, or built-ins only without one', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-models-'));
    const file = path.join(dir, 'models.yaml');
    fs.writeFileSync(file, FILE);
    expect(loadModelCatalogue(file, { VLLM_KEY: 'k' }).find('qwen2.5-vl')?.id).toBe('qwen-vl');
    expect(loadModelCatalogue(undefined, {}).find('qwen-vl')).toBeUndefined();
    expect(problemsOf(() => loadModelCatalogue(path.join(dir, 'absent.yaml'), {}))[0]).toMatch(/cannot read/);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('model catalogue: transcription models', () => {
  const SPEECH = `
upstreams:
  - name: speech
    base_url: http://127.0.0.1:8001/v1
models:
  - id: whisper
    mode: transcription
    engine: { kind: upstream, upstream: speech, model: Systran/faster-whisper-small }
    pricing: { per_minute: 0.006 }
`;

  it('reads mode transcription and a per-minute price, with audio input and the OpenAI form fields', () => {
    const whisper = catalogue(SPEECH, {}).resolve('whisper');
    expect(whisper.mode).toBe('transcription');
    expect(whisper.pricing).toEqual({ prompt: null, completion: null, perMinute: 0.006 });
    expect(whisper.capabilities.supportedInputTypes).toEqual(['audio']);
    expect(whisper.supportedParameters).toContain('timestamp_granularities');
    expect(toListingRecord(whisper)).toMatchObject({
      mode: 'transcription',
      pricing: { prompt: null, completion: null, per_minute: 0.006 },
    });
    // Chat models' listing pricing stays the spec's two fields.
    expect(toListingRecord(catalogue(SPEECH, {}).resolve('prism-1')).pricing).toEqual({ prompt: 0, completion: 0 });
  });

  it('refuses a per-minute price on a chat model, a local transcription engine and an unknown mode', () => {
    const chatPerMinute = SPEECH.replace('mode: transcription', 'mode: chat');
    expect(problemsOf(() => catalogue(chatPerMinute, {}))).toEqual([
      'models.whisper.pricing.per_minute: only transcription models are priced per audio minute',
    ]);
    const local = SPEECH.replace(
      '{ kind: upstream, upstream: speech, model: Systran/faster-whisper-small }',
      '{ kind: local, name: whisper }',
    );
    expect(problemsOf(() => catalogue(local, {}))).toEqual([
      'models.whisper.engine: a transcription model runs on an upstream (kind: upstream)',
    ]);
    expect(problemsOf(() => parseModelsFile(SPEECH.replace('transcription', 'speech')))[0]).toMatch(
      /^models\[0\] \(whisper\)\.mode: /,
    );
  });
});
