/**
 * The models file's transcription model as the extraction engines' ear: the first serving `mode: transcription`
 * model, asked for `verbose_json` with segment timestamps on its upstream, its segments turned into timed text. One
 * call per piece of a recording (engines/local/speech-reader.ts cuts and stitches). Billing is the caller's: a
 * prediction holds and settles the seconds heard with its own hold (container/extraction-wallet.ts), an agent tool
 * call through billed-speech.ts, so nothing is billed here.
 */
import type { SpeechTranscriber, TimedSpeech } from '../../engines/local/extraction.engine';
import type { ModelCatalogue } from '../catalogue/model-catalogue';
import type { CatalogueModel } from '../catalogue/model.types';
import { UpstreamError } from '../gateway-errors';
import { encodeMultipart, type UpstreamClient } from '../upstream/upstream-client';

type Json = Record<string, unknown>;

/** The transcription model extraction and the agent tools use: the first serving one on an upstream; or null. */
export function configuredSpeechModel(catalogue: ModelCatalogue): CatalogueModel | null {
  return catalogue.list('transcription').find((m) => m.serving && catalogue.upstreamTarget(m) !== null) ?? null;
}

/** Null when the models file names no serving transcription model on an upstream. */
export function upstreamSpeechTranscriber(
  catalogue: ModelCatalogue,
  upstream: UpstreamClient,
): SpeechTranscriber | null {
  const model = configuredSpeechModel(catalogue);
  const target = model ? catalogue.upstreamTarget(model) : null;
  if (!model || !target) return null;
  return async (audio) => {
    const form = encodeMultipart([
      ['file', { filename: audio.filename ?? 'audio', contentType: audio.mimeType, bytes: audio.bytes }],
      ['model', target.model],
      ['response_format', 'verbose_json'],
      ['timestamp_granularities[]', 'segment'],
    ]);
    const reply = await upstream.transcribe(target, form);
    return timedSpeech(reply.body, target.provider, model.id);
  };
}

/** A `verbose_json` reply as timed text; a server that gives no segments yields the whole text as one. */
export function timedSpeech(body: Buffer, provider: string, model: string): TimedSpeech {
  let reply: Json;
  try {
    reply = JSON.parse(body.toString('utf8')) as Json;
  } catch {
    throw new UpstreamError(provider, 'The upstream sent a transcription that is not JSON');
  }
  if (typeof reply !== 'object' || reply === null || typeof reply.text !== 'string') {
    throw new UpstreamError(provider, 'The upstream sent a transcription without its text');
  }
  const text = reply.text.trim();
  const raw = Array.isArray(reply.segments) ? (reply.segments as Json[]) : [];
  const segments = raw
    .filter((s) => typeof s.start === 'number' && typeof s.end === 'number' && typeof s.text === 'string')
    .map((s) => ({ startS: s.start as number, endS: s.end as number, text: (s.text as string).trim() }))
    .sort((a, b) => a.startS - b.startS);
  if (segments.length === 0 && text !== '') {
    const duration = typeof reply.duration === 'number' ? reply.duration : 0;
    segments.push({ startS: 0, endS: duration, text });
  }
  return { text, segments, model };
}
