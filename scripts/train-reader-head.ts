/**
 * Training step for the recogniser's receipt head (`npm run train:reader-head`): refits the output columns of
 * PP-OCR's 94 printable ASCII characters, the blank and the space with CTC against the SROIE development receipts'
 * line-level text truth (`ocr-truth/<ID>.csv`), and writes them to assets/ocr/reader-head.json, which the service
 * loads under `PRISM_OCR_HEAD=receipts` (src/engines/ocr/ppocr-head.ts).
 *
 * Why it exists: most wrong company and address answers are letters the shipped recogniser misread, and its output
 * layer was trained on Chinese scenes. Refitting that one layer (11,616 numbers) on printed receipt lines is the part
 * of "train the reader" that runs on two cores in a few minutes; the network's features are left as shipped.
 *
 *   npm run train:reader-head [-- --data DIR]... [--score DIR]... [--epochs 4] [--out FILE] [--check]
 *
 * What it reads: each receipt through the service's own decoding and text detector; a detected segment is a training
 * line when exactly one truth line lies inside it (overlapping at least 60 % of the lower height, covering 85 % of
 * the truth's width and 80 % of the segment's), and every character of its text is one of the refitted classes. The
 * crop is the one the service reads. `--score DIR` prints the loss and character error rate on other folders (the
 * held-out split) after each epoch without training on them.
 *
 * Reproducible: onnxruntime on one thread, lines in a fixed order, a fixed shuffle per epoch, float64 arithmetic, so
 * the same data gives the same file byte for byte on the same machine and package versions; `--check` writes nothing
 * and exits 1 when the committed file differs.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { decodeModel, ELEM, encodeModel, tensorValueInfo } from '../src/engines/ocr/onnx-graph';
import { detectPageBoxes } from '../src/engines/ocr/ppocr-detect';
import { rewritePpOcrGraph } from '../src/engines/ocr/ppocr-graph-rewrite';
import {
  findOutputLayer,
  floatsToBase64,
  READER_HEAD_FILE,
  type OutputLayer,
  type ReaderHeadFile,
} from '../src/engines/ocr/ppocr-head';
import {
  alphabetFromDictionary,
  defaultPpOcrModelDir,
  loadPpOcrModels,
  type FloatTensor,
} from '../src/engines/ocr/ppocr-models';
import { decodePage } from '../src/engines/ocr/ppocr.engine';
import { recognitionBatch, recognitionWidth } from '../src/engines/ocr/ppocr-recognize';
import type { Box } from '../src/engines/types';
import { editDistance, parseTruthCsv, type TruthLine } from '../bench/reader-metrics';
import { sharedDataDir } from '../bench/receipts-score';
import {
  accumulateGradient,
  adamState,
  adamStep,
  classLogProbs,
  ctcLoss,
  type HeadParameters,
  type LineSteps,
} from './reader-head-ctc';

interface Args {
  data: string[];
  score: string[];
  epochs: number;
  rate: number;
  pull: number;
  batch: number;
  out: string;
  check: boolean;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    data: [],
    score: [],
    epochs: 4,
    rate: 2e-3,
    pull: 5e-2,
    batch: 16,
    out: path.resolve(__dirname, '../assets/ocr', READER_HEAD_FILE),
    check: false,
  };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    const value = (): string => argv[++i] ?? '';
    if (flag === '--data') args.data.push(path.resolve(value()));
    else if (flag === '--score') args.score.push(path.resolve(value()));
    else if (flag === '--epochs') args.epochs = Number(value());
    else if (flag === '--rate') args.rate = Number(value());
    else if (flag === '--pull') args.pull = Number(value());
    else if (flag === '--out') args.out = path.resolve(value());
    else if (flag === '--check') args.check = true;
    else throw new Error(`unknown argument ${flag ?? ''}`);
  }
  if (args.data.length === 0) args.data = ['sroie-dev', 'sroie-dev2'].map((name) => sharedDataDir(name) ?? name);
  return args;
}

/** The classes refitted: the blank, the printable ASCII characters and the space, in dictionary order. */
function refittedClasses(alphabet: readonly string[]): number[] {
  const last = alphabet.length - 1;
  return alphabet
    .map((ch, i) => (i === 0 || i === last || (ch.length === 1 && ch >= '!' && ch <= '~') ? i : -1))
    .filter((i) => i >= 0);
}

/** A training line: its steps and its truth text. */
interface Sample {
  line: LineSteps;
  text: string;
  /** The largest logit among the classes not refitted, per step (greedy decoding's rival). */
  frozenMax: Float64Array;
}

/** The classes not refitted, per step: the log of their summed exponentiated logits, and their largest logit. */
type FrozenShare = (logits: Float32Array, steps: number) => { sum: Float64Array; max: Float64Array };

/** The recogniser with two more outputs: its last features and its logits. */
interface FeatureReader {
  run(crop: FloatTensor): Promise<{ features: Float32Array; logits: Float32Array; steps: number }>;
  /** The output layer as shipped: its weights are the prior the refit starts from. */
  layer: OutputLayer;
}

// The slice of onnxruntime-node's API used here.
interface Ort {
  Tensor: new (type: 'float32', data: Float32Array, dims: readonly number[]) => unknown;
  InferenceSession: {
    create(
      model: Uint8Array,
      opts: Record<string, unknown>,
    ): Promise<{
      inputNames: readonly string[];
      run(feeds: Record<string, unknown>): Promise<Record<string, { data: unknown; dims: readonly number[] }>>;
    }>;
  };
}

async function featureReader(modelFile: string): Promise<FeatureReader> {
  const model = decodeModel(fs.readFileSync(modelFile));
  const layer = findOutputLayer(model);
  if (!layer) throw new Error('the recogniser does not end in MatMul, Add and Softmax');
  rewritePpOcrGraph(model);
  model.graphRest.push(
    { no: 12, wire: 2, value: tensorValueInfo(layer.featuresName, ELEM.float) },
    { no: 12, wire: 2, value: tensorValueInfo(layer.logitsName, ELEM.float) },
  );
  const ort = createRequire(__filename)('onnxruntime-node') as Ort;
  const session = await ort.InferenceSession.create(encodeModel(model), {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
  });
  return {
    layer,
    run: async (crop) => {
      const out = await session.run({
        [session.inputNames[0] as string]: new ort.Tensor('float32', crop.data, crop.dims),
      });
      const features = out[layer.featuresName];
      const logits = out[layer.logitsName];
      if (!features || !logits) throw new Error('the recogniser gave no features');
      return {
        features: Float32Array.from(features.data as Float32Array),
        logits: logits.data as Float32Array,
        steps: features.dims[1] as number,
      };
    },
  };
}

/** The one truth line a segment holds, or undefined (none, or several). */
function truthInside(segment: Box, truth: TruthLine[], scale: number): TruthLine | undefined {
  const hits = truth.filter(({ box }) => {
    const b = { x0: box.x0 * scale, y0: box.y0 * scale, x1: box.x1 * scale, y1: box.y1 * scale };
    const yOverlap = Math.min(b.y1, segment.y1) - Math.max(b.y0, segment.y0);
    const xOverlap = Math.min(b.x1, segment.x1) - Math.max(b.x0, segment.x0);
    return (
      yOverlap > 0.6 * Math.min(b.y1 - b.y0, segment.y1 - segment.y0) &&
      xOverlap > 0.85 * (b.x1 - b.x0) &&
      xOverlap > 0.8 * (segment.x1 - segment.x0)
    );
  });
  return hits.length === 1 ? hits[0] : undefined;
}

/** Every training line of one folder, receipts and segments in a fixed order. */
async function samplesOf(
  folder: string,
  reader: FeatureReader,
  detect: (input: FloatTensor) => Promise<FloatTensor>,
  classOf: (ch: string) => number,
  frozen: FrozenShare,
): Promise<Sample[]> {
  const samples: Sample[] = [];
  const ids = fs
    .readdirSync(path.join(folder, 'ocr-truth'))
    .filter((f) => f.endsWith('.csv'))
    .map((f) => f.slice(0, -4))
    .sort();
  const images = fs.readdirSync(path.join(folder, 'images'));
  for (const id of ids) {
    const image = images.find((f) => f.startsWith(`${id}.`));
    if (!image) continue;
    const truth = parseTruthCsv(fs.readFileSync(path.join(folder, 'ocr-truth', `${id}.csv`), 'utf8'));
    const page = await decodePage(fs.readFileSync(path.join(folder, 'images', image)), 2500);
    // The service's detector with its default settings (ppocr.engine.ts).
    for (const segment of await detectPageBoxes(detect, page, 1280)) {
      const text = truthInside(segment, truth, page.scale)?.text.trim() ?? '';
      const target = [...text].map(classOf);
      if (target.length === 0 || target.some((t) => t <= 0)) continue;
      const width = recognitionWidth(segment, 1600);
      const out = await reader.run(recognitionBatch(page, [segment], [width], width));
      const share = frozen(out.logits, out.steps);
      samples.push({
        line: { steps: out.steps, features: out.features, frozen: share.sum, target },
        text,
        frozenMax: share.max,
      });
    }
    process.stderr.write(`${path.basename(folder)} ${id}: ${samples.length} lines\n`);
  }
  return samples;
}

/** Mean loss and the greedy character error rate (case-blind) of the head on some lines. */
function score(head: HeadParameters, samples: Sample[], symbols: readonly string[]): { loss: number; cer: number } {
  let [loss, counted, edits, chars] = [0, 0, 0, 0];
  for (const sample of samples) {
    const logZ = new Float64Array(sample.line.steps);
    const logProbs = classLogProbs(head, sample.line, logZ);
    const l = ctcLoss(head, sample.line, logProbs);
    if (Number.isFinite(l)) [loss, counted] = [loss + l, counted + 1];
    edits += editDistance(greedyText(head, sample, logProbs, logZ, symbols), sample.text);
    chars += sample.text.length;
  }
  return { loss: loss / Math.max(1, counted), cer: edits / Math.max(1, chars) };
}

function greedyText(
  head: HeadParameters,
  sample: Sample,
  logProbs: Float64Array,
  logZ: Float64Array,
  symbols: readonly string[],
): string {
  let [text, previous] = ['', -1];
  for (let t = 0; t < sample.line.steps; t += 1) {
    let [best, bestLp] = [-1, (sample.frozenMax[t] as number) - (logZ[t] as number)];
    for (let j = 0; j < head.classes; j += 1) {
      if ((logProbs[t * head.classes + j] as number) > bestLp) {
        [best, bestLp] = [j, logProbs[t * head.classes + j] as number];
      }
    }
    if (best !== previous && best !== 0) text += best < 0 ? '\u0000' : symbols[best];
    previous = best;
  }
  return text.toUpperCase().replace(/ +/g, ' ').trim();
}

/** A fixed permutation per epoch (multiplicative hashing), so training needs no random numbers. */
function epochOrder(count: number, epoch: number): number[] {
  const key = (i: number): number => (Math.imul(i + 1, 2654435761) ^ Math.imul(epoch + 1, 40503)) >>> 0;
  return Array.from({ length: count }, (_, i) => i).sort((a, b) => key(a) - key(b));
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const modelDir = defaultPpOcrModelDir();
  const alphabet = alphabetFromDictionary(fs.readFileSync(path.join(modelDir, 'ppocr_keys_v1.txt'), 'utf8'));
  const reader = await featureReader(path.join(modelDir, 'ch_PP-OCRv4_rec_infer.onnx'));
  const detector = await loadPpOcrModels({ threads: 1 });
  const refitted = refittedClasses(alphabet);
  const symbols = refitted.map((c) => alphabet[c] as string);
  const isRefitted = new Uint8Array(alphabet.length);
  refitted.forEach((c) => (isRefitted[c] = 1));
  // Case-blind targets: a letter's group holds both cases; the blank is group 0.
  const groupKeys = [...new Set(symbols.map((s) => s.toUpperCase()))];
  const groupOf = symbols.map((s) => groupKeys.indexOf(s.toUpperCase()));
  const classOf = (ch: string): number => {
    const j = symbols.indexOf(ch);
    return j < 0 ? -1 : (groupOf[j] as number);
  };
  const frozen: FrozenShare = (logits, steps) => {
    const [sum, max] = [new Float64Array(steps), new Float64Array(steps)];
    const C = alphabet.length;
    for (let t = 0; t < steps; t += 1) {
      let top = -Infinity;
      for (let c = 0; c < C; c += 1) {
        if (!isRefitted[c] && (logits[t * C + c] as number) > top) top = logits[t * C + c] as number;
      }
      let total = 0;
      for (let c = 0; c < C; c += 1) if (!isRefitted[c]) total += Math.exp((logits[t * C + c] as number) - top);
      [sum[t], max[t]] = [top + Math.log(total), top];
    }
    return { sum, max };
  };
  const collect = async (folders: string[]): Promise<Sample[]> => {
    const all: Sample[] = [];
    for (const folder of folders) {
      const samples = await samplesOf(folder, reader, (t) => detector.detect(t), classOf, frozen);
      all.push(...samples);
    }
    return all;
  };
  const training = await collect(args.data);
  const held = await collect(args.score);
  await detector.close();
  const { weights, bias } = reader.layer;
  const [width, all] = weights.tensor.dims as [number, number];
  const prior = { weights: new Float64Array(width * refitted.length), bias: new Float64Array(refitted.length) };
  refitted.forEach((c, j) => {
    for (let d = 0; d < width; d += 1) {
      prior.weights[d * refitted.length + j] = weights.tensor.data[d * all + c] as number;
    }
    prior.bias[j] = bias.tensor.data[c] as number;
  });
  const head: HeadParameters = {
    features: width,
    classes: refitted.length,
    weights: Float64Array.from(prior.weights),
    bias: Float64Array.from(prior.bias),
    groupOf,
    groups: groupKeys.length,
  };
  const report = (epoch: string): void => {
    const line = (name: string, samples: Sample[]): string => {
      if (samples.length === 0) return '';
      const s = score(head, samples, symbols);
      return `${name} loss ${s.loss.toFixed(3)} CER ${s.cer.toFixed(4)}`;
    };
    process.stderr.write(`${epoch}: ${line('training', training)}  ${line('held out', held)}\n`);
  };
  report('shipped');
  const state = { weights: adamState(head.weights.length), bias: adamState(head.bias.length) };
  let step = 0;
  for (let epoch = 0; epoch < args.epochs; epoch += 1) {
    const order = epochOrder(training.length, epoch);
    for (let start = 0; start < order.length; start += args.batch) {
      const gradWeights = new Float64Array(head.weights.length);
      const gradBias = new Float64Array(head.bias.length);
      let count = 0;
      for (const i of order.slice(start, start + args.batch)) {
        const { line } = training[i] as Sample;
        const logProbs = classLogProbs(head, line);
        const logitGrad = new Float64Array(line.steps * head.classes);
        if (!Number.isFinite(ctcLoss(head, line, logProbs, logitGrad))) continue;
        accumulateGradient(head, line, logitGrad, gradWeights, gradBias);
        count += 1;
      }
      if (count === 0) continue;
      step += 1;
      adamStep(head.weights, gradWeights, count, prior.weights, state.weights, step, {
        rate: args.rate,
        pull: args.pull,
      });
      adamStep(head.bias, gradBias, count, prior.bias, state.bias, step, { rate: args.rate, pull: args.pull });
    }
    report(`epoch ${epoch + 1}`);
  }
  const file: ReaderHeadFile = {
    about: 'OCR recogniser head refitted on receipt lines: built by scripts/train-reader-head.ts; do not edit by hand',
    classes: symbols,
    features: width,
    weights: floatsToBase64(Float32Array.from(head.weights)),
    bias: floatsToBase64(Float32Array.from(head.bias)),
    training: {
      data: args.data.map((d) => path.basename(d)),
      lines: training.length,
      epochs: args.epochs,
      rate: args.rate,
      pull: args.pull,
      batch: args.batch,
    },
  };
  const text = `${JSON.stringify(file, null, 1)}\n`;
  if (args.check) {
    const same = fs.existsSync(args.out) && fs.readFileSync(args.out, 'utf8') === text;
    process.stdout.write(
      same ? `${args.out} is what the data gives\n` : `${args.out} differs from what the data gives\n`,
    );
    process.exitCode = same ? 0 : 1;
    return;
  }
  fs.writeFileSync(args.out, text);
  process.stdout.write(`wrote ${args.out}: ${symbols.length} classes, ${training.length} lines\n`);
}

void main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
