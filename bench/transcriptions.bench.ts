/**
 * Audio transcriptions (issue 41).
 *
 * 1. One 5-second WAV transcribed through Prism's `/v1/compat/audio/transcriptions` against the same multipart
 *    request sent straight to the scripted upstream's `/v1/audio/transcriptions` (ratio = what Prism adds: reading
 *    the form, probing the duration with ffprobe, the wallet hold and settlement, re-encoding the form, relaying).
 * 2. A long recording (30 minutes of tones and silence by default; `PRISM_BENCH_SPEECH_MINUTES` changes it) read by
 *    `audio.transcription` through `/v1/audio/generate` — probe, voice activity over the whole file, cut into
 *    10-minute pieces, four sent at once, stitched, billed — against the same pieces (cut once, before timing) sent
 *    to the scripted upstream one after another. The scripted upstream stands in for an ASR server: it "hears"
 *    tones and waits `PRISM_BENCH_SPEECH_DELAY_MS` (default 1500) per piece as a real model would take time; no real
 *    speech model runs here. Wall time is the table's ratio; CPU (this process, which hosts Prism and the upstream,
 *    plus the ffmpeg/ffprobe children it reaped, from /proc/self/stat) per call is printed after it.
 */
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import { withAudioPieces } from '../src/engines/media/audio-pieces';
import { planPieces, DEFAULT_SPEECH_READER } from '../src/engines/local/speech-reader';
import { mediaTools } from '../test/helpers/media-clips';
import { makeToneWav, type ToneBlock } from '../test/helpers/tone-speech';
import { uploadFile } from '../test/helpers/test-app';
import { startUpstreamApp } from '../test/helpers/upstream-app';
import { makeWav } from '../test/helpers/wav';
import type { BenchCase } from './harness';

const TICKS_PER_S = ((): number => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU seconds of this process and of the children it has waited for (utime, stime, cutime, cstime). */
function cpuSeconds(): number {
  const stat = fs.readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14–17 of stat(5); after the command's closing parenthesis they start at index 11.
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0);
  return ticks / TICKS_PER_S;
}

/** A run function that also adds up the CPU its calls take. */
function metered(run: () => Promise<void>): { run: () => Promise<void>; perCall: () => number } {
  let cpu = 0;
  let calls = 0;
  return {
    async run() {
      const before = cpuSeconds();
      await run();
      cpu += cpuSeconds() - before;
      calls += 1;
    },
    perCall: () => (calls === 0 ? 0 : cpu / calls),
  };
}

export async function transcriptionBenchmarks(): Promise<{
  cases: BenchCase[];
  notes: () => Promise<string[]>;
  close: () => Promise<void>;
}> {
  const minutes = Number(process.env.PRISM_BENCH_SPEECH_MINUTES ?? 30);
  const delayMs = Number(process.env.PRISM_BENCH_SPEECH_DELAY_MS ?? 1500);
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
  const post = async (url: string, model: string, authorization?: string, bytes = wav): Promise<void> => {
    const form = new FormData();
    form.append('file', new Blob([bytes], { type: 'audio/wav' }), 'note.wav');
    form.append('model', model);
    const res = await fetch(url, { method: 'POST', body: form, headers: authorization ? { authorization } : {} });
    if (res.status !== 200) throw new Error(`transcription answered ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
  };

  // The long recording: minute-long blocks of a tone (each its own pitch) and 5 s of silence.
  const blocks: ToneBlock[] = Array.from({ length: minutes }, (_, k) => [
    { hz: 200 + 10 * (k % 80), seconds: 55 },
    { hz: 0, seconds: 5 },
  ]).flat();
  const recording = makeToneWav(blocks);
  const durationS = minutes * 60;
  const planned = planPieces({ durationS, speech: null }, DEFAULT_SPEECH_READER);
  const pieces = await withAudioPieces(mediaTools, recording, (cut) => Promise.all(planned.map((p) => cut(p))));
  // Only the long case's calls wait and hear tones (the 5 s case keeps the default, immediate transcript).
  const asAsrServer = () => lab.upstream.forModel('whisper-small', { kind: 'transcription', tones: true, delayMs });
  const key = await lab.app.createKey('bench-speech');
  await lab.app.container.services.accounts.addCredits('bench-speech', 1000);
  const uploaded = await uploadFile(lab.app.url, key, recording, { filename: 'lecture.wav' });
  const fileId = ((await uploaded.json()) as { id: string }).id;

  const direct = metered(async () => {
    asAsrServer();
    for (const piece of pieces) {
      await post(`${lab.upstream.baseUrl}/audio/transcriptions`, 'whisper-small', undefined, piece);
    }
  });
  const throughPrism = metered(async () => {
    asAsrServer();
    const res = await fetch(`${lab.app.url}/v1/audio/generate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ file_id: fileId, domain: 'audio.transcription', batch: false }),
    });
    if (res.status !== 200) throw new Error(`generate answered ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
  });
  const longName = `${minutes}-minute recording (${planned.length} pieces, ${delayMs} ms each upstream)`;
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
    {
      name: longName,
      baseline: { name: 'its pieces straight to the upstream, in sequence', run: direct.run },
      subject: { name: 'audio.transcription through /v1/audio/generate', run: throughPrism.run },
      iterations: 3,
      warmup: 1,
    },
  ];
  return {
    cases,
    notes: async () => {
      const prism = throughPrism.perCall();
      const upstream = direct.perCall();
      return [
        `${longName}: CPU per call ${prism.toFixed(2)} s through Prism (Prism + upstream + ffmpeg) vs ` +
          `${upstream.toFixed(2)} s straight to the upstream in sequence (ratio ${(prism / upstream).toFixed(2)}x); ` +
          'the scripted upstream stands in for an ASR server (no speech model runs).',
      ];
    },
    close: () => lab.close(),
  };
}
