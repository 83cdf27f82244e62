/**
 * The recogniser's output layer retrained for printed Latin text (`PRISM_OCR_HEAD=receipts`). PP-OCRv4's recogniser
 * ends in one linear layer from 120 features per time step to 6,625 classes (a Chinese dictionary with the ASCII
 * characters among them), trained on Chinese scenes: on receipts it confuses `O`/`0`/`C`, `M`/`N`, `l`/`1` and almost
 * never emits its space class. `scripts/train-reader-head.ts` refits only the columns of the 94 printable ASCII
 * characters, the blank and the space (96 × 121 numbers) with CTC against line-level text truth, every other column
 * and the whole network left as shipped; this module patches those columns into the model in memory when it loads.
 * Pages in other scripts read as before except where an ASCII character now competes differently.
 *
 * The file (`assets/ocr/reader-head.json`) names its classes by character, not by index, so it does not depend on
 * the dictionary's order; weights are little-endian float32 in base64, `weights[d * classes.length + j]`.
 */
import fs from 'node:fs';
import {
  attributeTensor,
  constantNode,
  decodeFullFloatTensor,
  valueInfoName,
  type FloatTensorValue,
  type OnnxModel,
  type OnnxNode,
} from './onnx-graph';
import { defaultReaderLexiconPath } from './reader-lm';

/** File name of the committed output layer under `assets/ocr/`. */
export const READER_HEAD_FILE = 'reader-head.json';

/** Which output layer the recogniser runs with: as shipped, or with its Latin columns refitted on receipts. */
export const OCR_HEADS = ['shipped', 'receipts'] as const;
export type OcrHead = (typeof OCR_HEADS)[number];

/** The refitted columns: one per class, named by its character (`''` the blank, `' '` the space). */
export interface ReaderHead {
  classes: string[];
  /** Features per time step (the layer's input width). */
  features: number;
  /** `features × classes.length` weights, row-major by feature. */
  weights: Float32Array;
  bias: Float32Array;
}

/** The file's JSON shape. */
export interface ReaderHeadFile {
  about: string;
  classes: string[];
  features: number;
  weights: string;
  bias: string;
  training: Record<string, unknown>;
}

export function floatsToBase64(values: Float32Array): string {
  return Buffer.from(values.buffer, values.byteOffset, values.byteLength).toString('base64');
}

function floatsFromBase64(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  const out = new Float32Array(bytes.length / 4);
  for (let i = 0; i < out.length; i += 1) out[i] = bytes.readFloatLE(i * 4);
  return out;
}

/** Reads and checks a head file (default: the committed one). @throws when the file is missing or malformed. */
export function loadReaderHead(file = defaultReaderLexiconPath(READER_HEAD_FILE)): ReaderHead {
  const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as ReaderHeadFile;
  const weights = floatsFromBase64(parsed.weights);
  const bias = floatsFromBase64(parsed.bias);
  const n = parsed.classes.length;
  if (bias.length !== n || weights.length !== n * parsed.features) {
    throw new Error(`OCR reader head ${file} does not match its own class count`);
  }
  return { classes: parsed.classes, features: parsed.features, weights, bias };
}

/** The recogniser's output layer: the Constant nodes of its weight matrix and bias, found from the Softmax back. */
export interface OutputLayer {
  /** The MatMul's input: the features per time step (N × T × features). */
  featuresName: string;
  /** The logits before the Softmax (N × T × classes). */
  logitsName: string;
  weights: { node: OnnxNode; tensor: FloatTensorValue };
  bias: { node: OnnxNode; tensor: FloatTensorValue };
}

/** Finds `Softmax(Add(MatMul(x, W), b))` at the graph's output; undefined when the graph does not end so. */
export function findOutputLayer(model: OnnxModel): OutputLayer | undefined {
  const outputs = model.graphRest.filter((f) => f.no === 12);
  if (outputs.length !== 1) return undefined;
  const producer = (name: string): OnnxNode | undefined => model.nodes.find((n) => n.outputs.includes(name));
  const softmax = producer(valueInfoName(outputs[0]!.value as Uint8Array));
  const add = softmax?.opType === 'Softmax' ? producer(softmax.inputs[0] ?? '') : undefined;
  const matmul = add?.opType === 'Add' ? producer(add.inputs[0] ?? '') : undefined;
  if (!add || matmul?.opType !== 'MatMul') return undefined;
  const constant = (name: string): { node: OnnxNode; tensor: FloatTensorValue } | undefined => {
    const node = producer(name);
    const attribute = node?.opType === 'Constant' ? attributeTensor(node.attributes[0] ?? new Uint8Array()) : undefined;
    const tensor = attribute ? decodeFullFloatTensor(attribute.tensor) : undefined;
    return node && tensor ? { node, tensor } : undefined;
  };
  const weights = constant(matmul.inputs[1] ?? '');
  const bias = constant(add.inputs[1] ?? '');
  if (!weights || !bias || weights.tensor.dims.length !== 2) return undefined;
  return { featuresName: matmul.inputs[0] ?? '', logitsName: add.outputs[0] ?? '', weights, bias };
}

/**
 * Writes the head's columns over the model's output layer, in memory. `alphabet[i]` is class i's character.
 * @throws when the model has no such layer, its width differs, or a class of the head is not in the alphabet.
 */
export function applyReaderHead(model: OnnxModel, alphabet: readonly string[], head: ReaderHead): void {
  const layer = findOutputLayer(model);
  if (!layer) throw new Error('OCR recogniser does not end in MatMul, Add and Softmax');
  const [features, classCount] = layer.weights.tensor.dims as [number, number];
  if (features !== head.features || classCount !== alphabet.length) {
    throw new Error(`OCR reader head is for ${head.features} features; the recogniser has ${features}`);
  }
  const indexOf = new Map<string, number>();
  alphabet.forEach((ch, i) => {
    if (!indexOf.has(ch)) indexOf.set(ch, i);
  });
  const weights = Float32Array.from(layer.weights.tensor.data);
  const bias = Float32Array.from(layer.bias.tensor.data);
  head.classes.forEach((ch, j) => {
    const c = indexOf.get(ch);
    if (c === undefined) throw new Error(`OCR reader head class ${JSON.stringify(ch)} is not in the dictionary`);
    for (let d = 0; d < features; d += 1) weights[d * classCount + c] = head.weights[d * head.classes.length + j]!;
    bias[c] = head.bias[j]!;
  });
  const replace = (old: OnnxNode, tensor: FloatTensorValue): void => {
    model.nodes[model.nodes.indexOf(old)] = constantNode(old.outputs[0] ?? '', tensor);
  };
  replace(layer.weights.node, { ...layer.weights.tensor, data: weights });
  replace(layer.bias.node, { ...layer.bias.tensor, data: bias });
}
