/**
 * A small radix-2 FFT for the energy voice-activity detector's spectral features.
 *
 * Dependency-free on purpose: the fallback detector must work when no model package is installed.
 */

/** Computes power spectra of real frames of one power-of-two size; reuses its tables and scratch buffers. */
export interface PowerSpectrum {
  readonly size: number;
  /** Power of bins 0..size/2 of `frame` (already windowed); the returned array is reused by the next call. */
  compute(frame: Float32Array): Float64Array;
}

/** Builds a {@link PowerSpectrum} for frames of `size` samples (a power of two). */
export function createPowerSpectrum(size: number): PowerSpectrum {
  if (size < 2 || (size & (size - 1)) !== 0) throw new Error(`FFT size must be a power of two, got ${size}`);
  const bits = Math.log2(size);
  const reversed = new Uint32Array(size);
  for (let i = 0; i < size; i++) {
    let r = 0;
    for (let b = 0; b < bits; b++) r |= ((i >> b) & 1) << (bits - 1 - b);
    reversed[i] = r;
  }
  const cos = new Float64Array(size / 2);
  const sin = new Float64Array(size / 2);
  for (let i = 0; i < size / 2; i++) {
    cos[i] = Math.cos((-2 * Math.PI * i) / size);
    sin[i] = Math.sin((-2 * Math.PI * i) / size);
  }
  const re = new Float64Array(size);
  const im = new Float64Array(size);
  const power = new Float64Array(size / 2 + 1);

  return {
    size,
    compute(frame) {
      for (let i = 0; i < size; i++) {
        re[reversed[i]!] = frame[i] ?? 0;
        im[i] = 0;
      }
      for (let len = 2; len <= size; len <<= 1) {
        const half = len >> 1;
        const step = size / len;
        for (let start = 0; start < size; start += len) {
          for (let k = 0; k < half; k++) {
            const wr = cos[k * step]!;
            const wi = sin[k * step]!;
            const a = start + k;
            const b = a + half;
            const tr = re[b]! * wr - im[b]! * wi;
            const ti = re[b]! * wi + im[b]! * wr;
            re[b] = re[a]! - tr;
            im[b] = im[a]! - ti;
            re[a] = re[a]! + tr;
            im[a] = im[a]! + ti;
          }
        }
      }
      for (let k = 0; k <= size / 2; k++) power[k] = re[k]! * re[k]! + im[k]! * im[k]!;
      return power;
    },
  };
}
