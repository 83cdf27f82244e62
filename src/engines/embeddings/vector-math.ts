/**
 * Small vector helpers shared by the embedding engines: L2 normalisation, Matryoshka truncation, pooling, cosine,
 * and the `encoding_format: base64` wire form.
 *
 * Kept apart so the engines, the gateway and the tests agree on one definition of "unit length" and one byte order.
 */

/** Scales `vec` in place to unit L2 length; an all-zero vector stays zero. Returns `vec`. */
export function normalizeInPlace(vec: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < vec.length; i += 1) {
    const v = vec[i] as number;
    sum += v * v;
  }
  if (sum === 0) return vec;
  const inv = 1 / Math.sqrt(sum);
  for (let i = 0; i < vec.length; i += 1) vec[i] = (vec[i] as number) * inv;
  return vec;
}

/** The first `dimensions` values of `vec`, re-normalised to unit length (a new array). */
export function truncateAndNormalize(vec: Float32Array, dimensions: number): Float32Array {
  return normalizeInPlace(vec.slice(0, dimensions));
}

/** Cosine similarity; 0 when either vector is all zeros. */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i += 1) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    na += x * x;
  }
  for (let i = 0; i < b.length; i += 1) nb += (b[i] as number) * (b[i] as number);
  for (let i = n; i < a.length; i += 1) na += (a[i] as number) * (a[i] as number);
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** Mean of equally long vectors, re-normalised; `weights` (default 1 each) scale each vector's share. */
export function meanPool(vectors: readonly Float32Array[], length: number, weights?: readonly number[]): Float32Array {
  const out = new Float32Array(length);
  vectors.forEach((vec, k) => {
    const w = weights?.[k] ?? 1;
    for (let i = 0; i < length; i += 1) out[i] = (out[i] as number) + w * (vec[i] ?? 0);
  });
  return normalizeInPlace(out);
}

/** `encoding_format: base64`: the vector as little-endian float32 bytes, base64-encoded (what OpenAI clients decode). */
export function toBase64Float32(vec: ArrayLike<number>): string {
  const bytes = Buffer.alloc(vec.length * 4);
  for (let i = 0; i < vec.length; i += 1) bytes.writeFloatLE(vec[i] as number, i * 4);
  return bytes.toString('base64');
}

/** Inverse of {@link toBase64Float32}. */
export function fromBase64Float32(encoded: string): Float32Array {
  const bytes = Buffer.from(encoded, 'base64');
  const out = new Float32Array(Math.floor(bytes.length / 4));
  for (let i = 0; i < out.length; i += 1) out[i] = bytes.readFloatLE(i * 4);
  return out;
}
