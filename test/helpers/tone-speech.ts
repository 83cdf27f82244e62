/**
 * "Speech" a scripted transcription server can hear without any speech model: a recording made of tones, each a
 * sine of its own frequency, separated by silence. The scripted upstream (`transcription` with `tones: true`)
 * answers each file it gets with one segment per run of seconds at one frequency — `tone 440 hertz` from 20 s to
 * 40 s — timed from the start of *that* file. A recording cut into pieces, sent in parallel and stitched therefore
 * comes back as the tones of the whole recording only when every piece's times were moved by its start, the pieces
 * were put back in order and what two pieces both heard was kept once.
 */

/** A stretch of the recording: a tone of `hz` for `seconds`, or silence when `hz` is 0. */
export interface ToneBlock {
  hz: number;
  seconds: number;
}

const RATE = 16_000;
const AMPLITUDE = 8000;

/** The recording as a 16 kHz mono 16-bit WAV file. */
export function makeToneWav(blocks: readonly ToneBlock[]): Buffer {
  const total = blocks.reduce((n, b) => n + Math.round(b.seconds * RATE), 0);
  const data = Buffer.alloc(total * 2);
  let at = 0;
  for (const block of blocks) {
    const samples = Math.round(block.seconds * RATE);
    for (let i = 0; i < samples && block.hz > 0; i += 1) {
      data.writeInt16LE(Math.round(Math.sin((2 * Math.PI * block.hz * i) / RATE) * AMPLITUDE), (at + i) * 2);
    }
    at += samples;
  }
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(RATE, 24);
  header.writeUInt32LE(RATE * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

/** What the scripted server says a tone is. */
export const toneText = (hz: number): string => `tone ${hz} hertz`;

/** The segments a whole recording should come back as: one per tone block, in the recording's time. */
export function expectedToneSegments(blocks: readonly ToneBlock[]): { start: number; end: number; text: string }[] {
  const out: { start: number; end: number; text: string }[] = [];
  let t = 0;
  for (const block of blocks) {
    if (block.hz > 0) out.push({ start: t, end: t + block.seconds, text: toneText(block.hz) });
    t += block.seconds;
  }
  return out;
}

/**
 * Hears a 16-bit PCM WAV file second by second: a second whose level is speech-like is a tone whose frequency is
 * half its zero crossings (rounded to 10 Hz); consecutive seconds of one tone make one segment. A last part shorter
 * than half a second is not heard.
 */
export function hearTones(wav: Buffer): { start: number; end: number; text: string }[] {
  const { rate, pcm } = pcmOf(wav);
  const segments: { start: number; end: number; text: string }[] = [];
  for (let second = 0; second * rate < pcm.length; second += 1) {
    const from = second * rate;
    const to = Math.min(pcm.length, from + rate);
    if (to - from < rate / 2) break;
    let energy = 0;
    let crossings = 0;
    for (let i = from; i < to; i += 1) {
      energy += pcm[i]! * pcm[i]!;
      if (i > from && pcm[i - 1]! < 0 !== pcm[i]! < 0) crossings += 1;
    }
    if (Math.sqrt(energy / (to - from)) < AMPLITUDE / 10) continue;
    const hz = Math.round(((crossings / 2) * (rate / (to - from))) / 10) * 10;
    const end = Math.round((to / rate) * 1000) / 1000;
    const last = segments[segments.length - 1];
    if (last && last.text === toneText(hz) && last.end === second) last.end = end;
    else segments.push({ start: second, end, text: toneText(hz) });
  }
  return segments;
}

/** The samples of a mono 16-bit WAV (the data chunk's size is trusted only as far as the bytes go). */
function pcmOf(wav: Buffer): { rate: number; pcm: Int16Array } {
  let rate = RATE;
  let at = 12;
  while (at + 8 <= wav.length) {
    const id = wav.toString('latin1', at, at + 4);
    const size = wav.readUInt32LE(at + 4);
    if (id === 'fmt ') rate = wav.readUInt32LE(at + 12);
    if (id === 'data') {
      const bytes = wav.subarray(at + 8, Math.min(wav.length, at + 8 + size));
      const pcm = new Int16Array(Math.floor(bytes.length / 2));
      for (let i = 0; i < pcm.length; i += 1) pcm[i] = bytes.readInt16LE(i * 2);
      return { rate, pcm };
    }
    at += 8 + size + (size % 2);
  }
  return { rate, pcm: new Int16Array(0) };
}
