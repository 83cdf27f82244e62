/**
 * Signed feature hashing (the "hashing trick") for the lexical part of the text embedding.
 *
 * Word unigrams, word bigrams and character 3–5-grams are hashed into fixed buckets with a hashed ±1 sign, so no
 * vocabulary is needed and any script or spelling gets a vector. To stay useful under Matryoshka truncation, every
 * feature is hashed once into EACH band (e.g. dims 100–127, 128–255, 256–511, 512–767): a truncated vector keeps
 * all features, only at a coarser resolution, instead of losing those that happened to land in cut-off buckets.
 * Hash: FNV-1a over UTF-16 code units with murmur3's 32-bit finaliser for avalanche.
 */

/** A range of output dims that receives every hashed feature; `share` is its part of the vector's squared norm. */
export interface HashBand {
  offset: number;
  size: number;
  share: number;
}

const FNV_PRIME = 16777619;
export const SEED_WORD = 0x811c9dc5;
const SEED_NGRAM = 0x2f6b7c1d;
const SEED_BIGRAM = 0x5bd1e995;
const SEED_ID = 0x27d4eb2f;
const BAND_SALT = [0x9e3779b9, 0x85ebca6b, 0xc2b2ae35, 0x165667b1, 0xd3a2646c, 0xfd7046c5];

/** murmur3's 32-bit finaliser. */
export function fmix32(input: number): number {
  let h = input | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}

/** Seeded 32-bit hash of a string. */
export function hashString(text: string, seed: number = SEED_WORD): number {
  let h = seed | 0;
  for (let i = 0; i < text.length; i += 1) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return fmix32(h);
}

/** Hash of an ordered pair of hashes (word bigrams). */
export function hashPair(a: number, b: number): number {
  return fmix32(Math.imul(a, 0x9e3779b1) ^ b ^ SEED_BIGRAM);
}

/** Hash of an integer token id (any safe integer). */
export function hashId(id: number): number {
  const low = (id % 0x100000000) | 0;
  const high = Math.floor(id / 0x100000000) | 0;
  return fmix32(fmix32(low ^ SEED_ID) ^ high);
}

/** Adds `weight` × a hashed ±1 to one bucket per band. */
export function addHashed(acc: Float32Array, bands: readonly HashBand[], hash: number, weight: number): void {
  for (let b = 0; b < bands.length; b += 1) {
    const band = bands[b] as HashBand;
    const h = fmix32(hash + (BAND_SALT[b % BAND_SALT.length] as number));
    const slot = band.offset + ((h >>> 1) % band.size);
    acc[slot] = (acc[slot] as number) + (h & 1 ? weight : -weight);
  }
}

/** Longer words (hashes, base64 blobs) contribute the n-grams of their first this-many characters only. */
const MAX_NGRAM_WORD = 64;

/** Adds the character 3-, 4- and 5-grams of `<word>` (boundary-marked), each with `weight`. */
export function addCharNgrams(acc: Float32Array, bands: readonly HashBand[], word: string, weight: number): void {
  const padded = word.length > MAX_NGRAM_WORD ? `<${word.slice(0, MAX_NGRAM_WORD)}` : `<${word}>`;
  const n = padded.length;
  for (let i = 0; i + 3 <= n; i += 1) {
    let h = SEED_NGRAM;
    const end = Math.min(n, i + 5);
    for (let j = i; j < end; j += 1) {
      h = Math.imul(h ^ padded.charCodeAt(j), FNV_PRIME);
      if (j - i >= 2) addHashed(acc, bands, fmix32(h ^ (j - i)), weight);
    }
  }
}

/** Sub-linear scaling (sign·log1p|x|), then each band scaled to norm √share (an empty band stays zero). */
export function finishBands(acc: Float32Array, bands: readonly HashBand[]): void {
  for (const band of bands) {
    let sum = 0;
    for (let i = band.offset; i < band.offset + band.size; i += 1) {
      const x = acc[i] as number;
      const y = x >= 0 ? Math.log1p(x) : -Math.log1p(-x);
      acc[i] = y;
      sum += y * y;
    }
    if (sum === 0) continue;
    const scale = Math.sqrt(band.share / sum);
    for (let i = band.offset; i < band.offset + band.size; i += 1) acc[i] = (acc[i] as number) * scale;
  }
}
