/**
 * Generated video and audio for media tests: coloured slides with known words, tones, silence and a speech-like
 * signal, made at test time with the same ffmpeg the engines use (so no binary fixtures live in the repository).
 *
 * Text is drawn by ffmpeg's drawtext with the Liberation Sans font that pdfjs-dist ships, so it renders the same on
 * a machine without system fonts. The speech-like signal is synthesised here (glottal pulses through vowel formants,
 * syllable envelopes, consonant noise): Silero VAD scores it as speech, which a plain tone is not.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { resolveMediaTools } from '../../src/engines/media/media-tools';

const run = promisify(execFile);

/** The ffmpeg/ffprobe pair the engines would pick on this machine. */
export const mediaTools = resolveMediaTools();

/** Font for drawtext; shipped by a dependency, so it exists wherever `npm ci` ran. */
export const CLIP_FONT = require.resolve('pdfjs-dist/standard_fonts/LiberationSans-Regular.ttf');

/** One slide of a generated video: a solid colour (or ffmpeg's `testsrc` pattern), optionally with text. */
export interface ClipSegment {
  durationS: number;
  /** An ffmpeg colour name or hex (`white`, `red`, `0x2040a0`), or `testsrc` for the test pattern. Default white. */
  color?: string;
  /** Lines of text drawn at the top left. */
  text?: string[];
  /** Default black. */
  textColor?: string;
}

export interface VideoClipOptions {
  width?: number;
  height?: number;
  fps?: number;
  /** Adds a 440 Hz mono AAC/Opus track as long as the video. */
  withTone?: boolean;
  container?: 'mp4' | 'mkv' | 'webm' | 'ts';
}

/** Encodes the slides one after another into a video (H.264 in MP4/MKV/MPEG-TS, VP8 in WebM). */
export async function makeVideo(segments: ClipSegment[], opts: VideoClipOptions = {}): Promise<Buffer> {
  const { width = 640, height = 360, fps = 25, container = 'mp4' } = opts;
  return withScratch(async (dir) => {
    const inputs: string[] = [];
    const chains: string[] = [];
    for (const [i, seg] of segments.entries()) {
      const source =
        seg.color === 'testsrc'
          ? `testsrc=s=${width}x${height}:r=${fps}:d=${seg.durationS}`
          : `color=c=${seg.color ?? 'white'}:s=${width}x${height}:r=${fps}:d=${seg.durationS}`;
      inputs.push('-f', 'lavfi', '-i', source);
      let chain = `[${i}:v]format=yuv420p`;
      if (seg.text?.length) {
        const textFile = path.join(dir, `text-${i}.txt`);
        await fs.writeFile(textFile, seg.text.join('\n'));
        chain +=
          `,drawtext=fontfile=${filterPath(CLIP_FONT)}:textfile=${filterPath(textFile)}` +
          `:fontsize=${Math.round(height / 9)}:fontcolor=${seg.textColor ?? 'black'}:x=${Math.round(width / 16)}` +
          `:y=${Math.round(height / 10)}:line_spacing=${Math.round(height / 30)}`;
      }
      chains.push(`${chain}[v${i}]`);
    }
    const total = segments.reduce((sum, s) => sum + s.durationS, 0);
    const concat = `${segments.map((_, i) => `[v${i}]`).join('')}concat=n=${segments.length}:v=1:a=0[v]`;
    const args = [...inputs];
    const maps = ['-map', '[v]'];
    if (opts.withTone) {
      args.push('-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=48000:duration=${total}`);
      maps.push('-map', `${segments.length}:a`);
    }
    const codecs =
      container === 'webm'
        ? ['-c:v', 'libvpx', '-b:v', '500k', '-c:a', 'libopus']
        : ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac'];
    const out = path.join(dir, `clip.${container}`);
    await ffmpeg([...args, '-filter_complex', [...chains, concat].join(';'), ...maps, ...codecs, out]);
    return fs.readFile(out);
  });
}

export type AudioContainer = 'wav' | 'mp3' | 'm4a' | 'ogg';

export interface AudioClipOptions {
  /** Output sample rate (default 16000). */
  sampleRate?: number;
  /** Output channels (default 1); the signal is copied to each. */
  channels?: number;
  container?: AudioContainer;
}

/** A sine tone. */
export function makeTone(durationS: number, frequency = 440, opts: AudioClipOptions = {}): Promise<Buffer> {
  return encodeAudio(tonePcm(durationS, frequency, opts.sampleRate ?? 16_000), opts);
}

/** Digital silence. */
export function makeSilence(durationS: number, opts: AudioClipOptions = {}): Promise<Buffer> {
  return encodeAudio(new Float32Array(Math.round(durationS * (opts.sampleRate ?? 16_000))), opts);
}

/** Speech-like bursts at `bursts` ([start, end] seconds) in otherwise silent audio of `durationS`. */
export function makeSpeechLike(
  durationS: number,
  bursts: [number, number][],
  opts: AudioClipOptions & { noise?: number } = {},
): Promise<Buffer> {
  return encodeAudio(speechLikePcm(durationS, bursts, opts.sampleRate ?? 16_000, opts.noise ?? 0), opts);
}

/** Samples of a sine tone at half scale. */
export function tonePcm(durationS: number, frequency: number, sampleRate: number): Float32Array {
  return Float32Array.from(
    { length: Math.round(durationS * sampleRate) },
    (_, n) => 0.5 * Math.sin((2 * Math.PI * frequency * n) / sampleRate),
  );
}

const VOWEL_FORMANTS = [
  [730, 1090, 2440],
  [270, 2290, 3010],
  [300, 870, 2240],
  [530, 1840, 2480],
  [660, 1720, 2410],
] as const;

/**
 * Samples of the speech-like signal: a pulse train at a wandering 90–160 Hz pitch through three formant resonators
 * that change vowel every 220 ms "syllable", each syllable opened by a short noise "consonant" and shaped by a smooth
 * envelope. `noise` adds white noise of that amplitude everywhere. Deterministic (fixed-seed noise).
 */
export function speechLikePcm(
  durationS: number,
  bursts: [number, number][],
  sampleRate: number,
  noise = 0,
): Float32Array {
  const out = new Float32Array(Math.round(durationS * sampleRate));
  const random = seededRandom(7);
  const syllableS = 0.22;
  for (const [startS, endS] of bursts) {
    const state = [0, 0, 0].map(() => [0, 0]);
    let phase = 0;
    for (let n = Math.round(startS * sampleRate); n < Math.min(out.length, Math.round(endS * sampleRate)); n++) {
      const t = n / sampleRate - startS;
      const syllable = Math.floor(t / syllableS);
      const within = (t % syllableS) / syllableS;
      phase += (120 + 30 * Math.sin(2 * Math.PI * 0.7 * t) + 10 * Math.sin(2 * Math.PI * 3 * t)) / sampleRate;
      let excitation = 0.02 * (random() - 0.5);
      if (phase >= 1) {
        phase -= 1;
        excitation += 1;
      }
      const formants = VOWEL_FORMANTS[syllable % VOWEL_FORMANTS.length]!;
      let voiced = 0;
      formants.forEach((f, k) => {
        const r = Math.exp((-Math.PI * (80 + 40 * k)) / sampleRate);
        const s = state[k]!;
        const y = (1 - r) * excitation + 2 * r * Math.cos((2 * Math.PI * f) / sampleRate) * s[0]! - r * r * s[1]!;
        s[1] = s[0]!;
        s[0] = y;
        voiced += y / (k + 1);
      });
      const consonant = within < 0.15 ? (random() - 0.5) * 0.09 : 0;
      out[n] = 4 * voiced * Math.sin(Math.PI * within) ** 0.6 + consonant;
    }
  }
  let peak = 0;
  for (const x of out) peak = Math.max(peak, Math.abs(x));
  for (let n = 0; n < out.length; n++) out[n] = (peak > 0 ? (out[n]! / peak) * 0.5 : 0) + noise * (random() - 0.5) * 2;
  return out;
}

/** 16-bit PCM WAV of mono samples in -1..1 (copied to `channels` channels). */
export function encodeWav(pcm: Float32Array, sampleRate: number, channels = 1): Buffer {
  const bytes = pcm.length * channels * 2;
  const wav = Buffer.alloc(44 + bytes);
  wav.write('RIFF', 0);
  wav.writeUInt32LE(36 + bytes, 4);
  wav.write('WAVEfmt ', 8);
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20);
  wav.writeUInt16LE(channels, 22);
  wav.writeUInt32LE(sampleRate, 24);
  wav.writeUInt32LE(sampleRate * channels * 2, 28);
  wav.writeUInt16LE(channels * 2, 32);
  wav.writeUInt16LE(16, 34);
  wav.write('data', 36);
  wav.writeUInt32LE(bytes, 40);
  pcm.forEach((x, n) => {
    const v = Math.round(Math.max(-1, Math.min(1, x)) * 32767);
    for (let c = 0; c < channels; c++) wav.writeInt16LE(v, 44 + (n * channels + c) * 2);
  });
  return wav;
}

async function encodeAudio(pcm: Float32Array, opts: AudioClipOptions): Promise<Buffer> {
  const { sampleRate = 16_000, channels = 1, container = 'wav' } = opts;
  const wav = encodeWav(pcm, sampleRate, channels);
  if (container === 'wav') return wav;
  return withScratch(async (dir) => {
    const input = path.join(dir, 'in.wav');
    const out = path.join(dir, `out.${container}`);
    await fs.writeFile(input, wav);
    const codec = { mp3: 'libmp3lame', m4a: 'aac', ogg: 'libvorbis' }[container];
    await ffmpeg(['-i', input, '-c:a', codec, out]);
    return fs.readFile(out);
  });
}

async function ffmpeg(args: string[]): Promise<void> {
  await run(mediaTools.ffmpeg, ['-nostdin', '-hide_banner', '-loglevel', 'error', '-y', ...args], {
    timeout: 60_000,
    maxBuffer: 1024 * 1024,
  });
}

async function withScratch<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'prism-clip-'));
  try {
    return await work(dir);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** A path as an ffmpeg filter option value; paths that would need filtergraph escaping are refused. */
function filterPath(value: string): string {
  if (/[\\:'",;[\]\s]/.test(value)) throw new Error(`path unsuitable for an ffmpeg filter: ${value}`);
  return value;
}

function seededRandom(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}
