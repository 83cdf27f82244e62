/**
 * The bundled GloVe word-vector table: finds the asset, un-gzips it and exposes it as typed arrays.
 *
 * The table is built once by `scripts/build-word-vectors.ts` (its header documents the byte layout) and committed
 * under `assets/embeddings/`. Values stay int8 in memory (5 MB) and are scaled per row while summing, so loading is
 * one gunzip plus a word map (~30 ms). The default table is loaded lazily and shared by every engine in the process.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

/** File name of the committed table under `assets/embeddings/`. */
export const DEFAULT_WORD_VECTORS_FILE = 'glove-6b-100d-50k.i8.bin.gz';

const MAGIC = 'PWV1';
const HEADER_BYTES = 32;

/** A quantised word-vector table (row i = the i-th most frequent kept word). */
export interface WordVectors {
  readonly rows: number;
  readonly dims: number;
  /** Word → row. */
  readonly index: ReadonlyMap<string, number>;
  /** Per-row scale: the value of cell (i, j) is `values[i * dims + j] * scales[i]`. */
  readonly scales: Float32Array;
  /** Per-row SIF weight a / (a + p(w)), p from a Zipf estimate of the word's rank. */
  readonly sif: Float32Array;
  /** Unit "common component" that SIF removes from sentence vectors (all zeros if the table has none). */
  readonly common: Float32Array;
  readonly values: Int8Array;
  /** SIF parameter a the weights were computed with. */
  readonly sifA: number;
}

function readFloats(view: DataView, offset: number, count: number): Float32Array {
  const out = new Float32Array(count);
  for (let i = 0; i < count; i += 1) out[i] = view.getFloat32(offset + i * 4, true);
  return out;
}

/** Parses a table in the `PWV1` format (gzipped or not). @throws Error when the bytes are not such a table. */
export function parseWordVectors(file: Buffer): WordVectors {
  const raw = file[0] === 0x1f && file[1] === 0x8b ? zlib.gunzipSync(file) : file;
  if (raw.length < HEADER_BYTES || raw.toString('ascii', 0, 4) !== MAGIC) {
    throw new Error('not a Prism word-vector table (bad magic)');
  }
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const version = view.getUint32(4, true);
  if (version !== 1) throw new Error(`unsupported word-vector table version ${version}`);
  const rows = view.getUint32(8, true);
  const dims = view.getUint32(12, true);
  const sifA = view.getFloat32(16, true);
  const wordBytes = view.getUint32(24, true);
  const flags = view.getUint32(28, true);
  let offset = HEADER_BYTES;
  const words = raw.toString('utf8', offset, offset + wordBytes).split('\n');
  offset += Math.ceil(wordBytes / 4) * 4;
  const scales = readFloats(view, offset, rows);
  offset += rows * 4;
  const sif = readFloats(view, offset, rows);
  offset += rows * 4;
  const common = (flags & 1) === 1 ? readFloats(view, offset, dims) : new Float32Array(dims);
  offset += (flags & 1) === 1 ? dims * 4 : 0;
  if (words.length !== rows || raw.length !== offset + rows * dims) {
    throw new Error('word-vector table is truncated or inconsistent');
  }
  const values = new Int8Array(rows * dims);
  values.set(new Int8Array(raw.buffer, raw.byteOffset + offset, rows * dims));
  const index = new Map<string, number>();
  words.forEach((word, row) => index.set(word, row));
  return { rows, dims, index, scales, sif, common, values, sifA };
}

/**
 * Where the committed table lives: the nearest `assets/embeddings/<file>` walking up from this module (works from
 * `src/` under tsx/ts-jest and from `dist/src/` after a build).
 */
export function defaultWordVectorsPath(file = DEFAULT_WORD_VECTORS_FILE): string {
  let dir = __dirname;
  for (;;) {
    const candidate = path.join(dir, 'assets', 'embeddings', file);
    if (fs.existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`word-vector table ${file} not found above ${__dirname}`);
    dir = parent;
  }
}

/** Reads and parses a table file (default: the committed one). */
export function loadWordVectors(filePath: string = defaultWordVectorsPath()): WordVectors {
  return parseWordVectors(fs.readFileSync(filePath));
}

let shared: WordVectors | undefined;

/** The committed table, loaded on first use and shared by every engine in the process. */
export function sharedWordVectors(): WordVectors {
  shared ??= loadWordVectors();
  return shared;
}
