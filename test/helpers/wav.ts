/**
 * Small WAV files made in the test itself (16-bit PCM, mono): a tone of an exact length, so a suite knows to the
 * sample how long its audio is (the transcription route bills per audio second) without any tool or fixture file.
 */

/** A `seconds`-long sine tone at `frequency` Hz as a PCM WAV file. */
export function makeWav(seconds: number, options: { sampleRate?: number; frequency?: number } = {}): Buffer {
  const rate = options.sampleRate ?? 16_000;
  const frequency = options.frequency ?? 440;
  const samples = Math.round(seconds * rate);
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i += 1) {
    data.writeInt16LE(Math.round(Math.sin((2 * Math.PI * frequency * i) / rate) * 8000), i * 2);
  }
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28); // bytes per second
  header.writeUInt16LE(2, 32); // block align
  header.writeUInt16LE(16, 34); // bits per sample
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}
