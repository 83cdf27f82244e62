/**
 * Audio transcriptions through the gateway (issue 41): one 5-second WAV transcribed through Prism's
 * `/v1/compat/audio/transcriptions` against the same multipart request sent straight to the scripted upstream's
 * `/v1/audio/transcriptions` (ratio = what Prism adds: reading the form, probing the duration with ffprobe, the
 * wallet hold and settlement, re-encoding the form, relaying the reply). Both run in this process over loopback.
 */
import { startUpstreamApp } from '../test/helpers/upstream-app';
import { makeWav } from '../test/helpers/wav';
import type { BenchCase } from './harness';

export async function transcriptionBenchmarks(): Promise<{ cases: BenchCase[]; close: () => Promise<void> }> {
  const lab = await startUpstreamApp(
    [
      {
        id: 'whisper',
        upstreamModel: 'whisper-small',
        capabilities: null,
        more: { mode: 'transcription', pricing: { per_minute: 0.006 } },
      },
    ],
    { env: { PRISM_RATE_LIMIT_PER_MINUTE: '100000', PRISM_RATE_LIMIT_PER_HOUR: '1000000', PRISM_LOG_LEVEL: 'silent' } },
  );
  const wav = makeWav(5);
  const post = async (url: string, model: string, authorization?: string): Promise<void> => {
    const form = new FormData();
    form.append('file', new Blob([wav], { type: 'audio/wav' }), 'note.wav');
    form.append('model', model);
    const res = await fetch(url, { method: 'POST', body: form, headers: authorization ? { authorization } : {} });
    if (res.status !== 200) throw new Error(`transcription answered ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
  };
  const cases: BenchCase[] = [
    {
      name: 'transcription of 5 s of audio (json)',
      baseline: {
        name: 'scripted upstream directly',
        run: () => post(`${lab.upstream.baseUrl}/audio/transcriptions`, 'whisper-small'),
      },
      subject: {
        name: 'through /v1/compat/audio/transcriptions',
        run: () => post(`${lab.app.url}/v1/compat/audio/transcriptions`, 'whisper', `Bearer ${lab.app.ownerKey}`),
      },
      iterations: 40,
    },
  ];
  return { cases, close: () => lab.close() };
}
