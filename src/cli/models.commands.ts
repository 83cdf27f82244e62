/**
 * `prism models check [FILE]`: before pointing a server at a models file, validate it (every problem named, as the
 * server would at start) and call each upstream model once (a one-token chat, one embedding, or a transcription
 * of one second of silence on `/audio/transcriptions`), printing per
 * model whether it answered, how fast, and what it is declared to take; any failure makes the exit code 1.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Config } from '../config/config';
import { loadModelCatalogue } from '../gateway/catalogue/model-catalogue';
import { ModelCatalogueError } from '../gateway/catalogue/models-file';
import { createUpstreamClient, encodeMultipart } from '../gateway/upstream/upstream-client';

/** One second of 16 kHz mono 16-bit silence as a WAV file: what a transcription model is probed with. */
export function silentWav(seconds = 1, sampleRate = 16_000): Buffer {
  const data = seconds * sampleRate * 2;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data, 40);
  return Buffer.concat([header, Buffer.alloc(data)]);
}

export const MODELS_COMMANDS: { name: string; usage: string; about: string }[] = [
  {
    name: 'models check',
    usage: 'prism models check [FILE]',
    about: 'validate a models file (default: PRISM_MODELS_FILE) and call each of its upstream models once',
  },
];

/** A command-line mistake: printed with the usage, exit code 2. */
export class ModelsUsageError extends Error {}

export async function modelsCheck(config: Config, args: string[]): Promise<number> {
  let positionals: string[];
  try {
    ({ positionals } = parseArgs({ args, strict: true, allowPositionals: true, options: {} }));
  } catch (error) {
    throw new ModelsUsageError((error as Error).message);
  }
  const named = positionals[0] ?? config.models.file;
  if (!named) throw new ModelsUsageError('name a models file, or set PRISM_MODELS_FILE');
  const file = path.resolve(named);
  let catalogue;
  try {
    catalogue = loadModelCatalogue(file, config.models.env);
  } catch (error) {
    if (!(error instanceof ModelCatalogueError)) throw error;
    console.error(`prism: ${error.message}`);
    return 2;
  }
  const upstream = createUpstreamClient({ retries: 0 });
  const models = catalogue.list().filter((m) => m.engine.kind === 'upstream');
  console.error(`prism: ${file}: valid, ${models.length} upstream models; calling each once`);
  let failed = 0;
  for (const model of models) {
    const target = catalogue.upstreamTarget(model);
    if (!target) continue;
    const started = performance.now();
    try {
      if (model.mode === 'embedding') await upstream.embeddings(target, { input: 'ping' });
      else if (model.mode === 'transcription') {
        const file = { filename: 'probe.wav', contentType: 'audio/wav', bytes: silentWav() };
        const form = encodeMultipart([
          ['file', file],
          ['model', target.model],
          ['response_format', 'json'],
        ]);
        const reply = await upstream.transcribe(target, form);
        if (!reply.contentType.includes('json')) throw new Error(`answered ${reply.contentType}, not JSON`);
      } else await upstream.chat(target, { messages: [{ role: 'user', content: 'Reply with OK.' }], max_tokens: 1 });
      const ms = Math.round(performance.now() - started);
      const takes = model.capabilities.supportedInputTypes.join(', ');
      console.log(`ok    ${model.id}  ${target.provider} ${target.model}  ${ms} ms  takes: ${takes}`);
    } catch (error) {
      failed += 1;
      console.log(
        `FAIL  ${model.id}  ${target.provider} ${target.model} at ${target.baseUrl}: ${(error as Error).message}`,
      );
    }
  }
  return failed === 0 ? 0 : 1;
}
