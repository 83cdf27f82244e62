/**
 * The models files of docs/models.md (Ollama, vLLM, a llama.cpp server, OpenAI, whisper.cpp, speaches) as a reader
 * copies them: each one, with only its base_urls pointed at the scripted OpenAI-compatible upstream, starts Prism,
 * lists its models, and every model answers through the openai SDK (a chat, or for a transcription model a
 * transcription of a short WAV), with the upstream asked for the model name the file gives and the key of the
 * variable it names.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI, { toFile } from 'openai';
import { parse } from 'yaml';
import { startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream';
import { startTestApp } from '../helpers/test-app';
import { makeWav } from '../helpers/wav';

interface Recipe {
  heading: string;
  yaml: string;
}

function recipes(): Recipe[] {
  const text = fs.readFileSync(path.resolve(__dirname, '..', '..', 'docs', 'models.md'), 'utf8');
  const found: Recipe[] = [];
  let heading = '';
  for (const match of text.matchAll(/^## (.+)$|^```yaml\n([\s\S]*?)^```$/gm)) {
    if (match[1]) heading = match[1];
    else if (match[2]) found.push({ heading, yaml: match[2] });
  }
  return found;
}

interface ModelsFile {
  upstreams: { name: string; base_url: string; api_key_env?: string }[];
  models: { id: string; mode?: string; engine: { upstream: string; model: string } }[];
}

describe('docs/models.md recipes', () => {
  let upstream: ScriptedUpstream;
  let dir: string;

  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-recipes-'));
  });
  afterAll(async () => {
    await upstream.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('has the recipes', () => {
    expect(recipes().map((r) => r.heading)).toEqual([
      'Ollama',
      'vLLM',
      'vLLM',
      'A llama.cpp server',
      'OpenAI',
      'A whisper.cpp server',
      'speaches',
    ]);
  });

  it.each(recipes().map((r) => [r.heading, r] as const))('%s: every model answers', async (_name, recipe) => {
    const file = parse(recipe.yaml) as ModelsFile;
    let yaml = recipe.yaml;
    for (const server of file.upstreams) yaml = yaml.replace(server.base_url, upstream.baseUrl);
    const modelsFile = path.join(dir, `${file.upstreams.map((u) => u.name).join('+')}.yaml`);
    fs.writeFileSync(modelsFile, yaml);
    const env: Record<string, string> = { PRISM_MODELS_FILE: modelsFile };
    for (const server of file.upstreams) if (server.api_key_env) env[server.api_key_env] = `key-for-${server.name}`;
    const app = await startTestApp(env);
    try {
      const openai = new OpenAI({ apiKey: app.ownerKey, baseURL: `${app.url}/v1/compat`, maxRetries: 0 });
      const listed = (await openai.models.list()).data.map((m) => m.id);
      for (const model of file.models) {
        expect(listed).toContain(model.id);
        const server = file.upstreams.find((u) => u.name === model.engine.upstream)!;
        const before = upstream.requests.length;
        if (model.mode === 'transcription') {
          upstream.forModel(model.engine.model, {
            kind: 'transcription',
            segments: [{ start: 0, end: 1, text: model.id }],
          });
          const wav = await toFile(makeWav(1), 'hello.wav', { type: 'audio/wav' });
          const reply = await openai.audio.transcriptions.create({ model: model.id, file: wav });
          expect(reply.text).toBe(model.id);
          expect(upstream.requests[before]?.path).toBe('/v1/audio/transcriptions');
        } else {
          upstream.forModel(model.engine.model, { kind: 'reply', content: `hello from ${model.id}` });
          const reply = await openai.chat.completions.create({
            model: model.id,
            messages: [{ role: 'user', content: 'Say hello' }],
          });
          expect(reply.choices[0]?.message.content).toBe(`hello from ${model.id}`);
        }
        const asked = upstream.requests[before];
        expect(asked?.body.model).toBe(model.engine.model);
        if (server.api_key_env) expect(asked?.headers.authorization).toBe(`Bearer key-for-${server.name}`);
        else expect(asked?.headers.authorization ?? '').not.toContain('key-for');
      }
    } finally {
      await app.close();
    }
  });
});
