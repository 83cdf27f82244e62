/**
 * Exact rewrites of the PP-OCR ONNX graphs, applied in memory when the models load (ppocr-models.ts), because the
 * Paddle-to-ONNX export leaves onnxruntime's CPU fusions little to work with. Profiled on the recognition network
 * (one thread), the element-wise Add/Mul/Clip/Div nodes took 43 % of the time and the convolutions 41 %:
 *
 * - every hard-swish is exported as four nodes, `x * clip(x + 3, 0, 6) / 6`; it becomes `x * HardSigmoid(x)` with
 *   alpha 1/6 and beta 0.5, the same function in two nodes (the models declare opset 9, before `HardSwish`);
 * - every "learnable affine" scale and bias (`Mul(scale, x)`, `Add(x, bias)` after a convolution) is exported with
 *   the constant as the *first* input, which keeps onnxruntime's Conv+Mul / Conv+Add folding from seeing it; the
 *   constant becomes the second input (both ops commute), so onnxruntime folds them into the convolution.
 *
 * Nothing here changes what the network computes beyond float rounding; the rewritten model is never written out.
 */
import {
  attributeFloat,
  attributeInts,
  attributeTensor,
  constantNode,
  decodeFullFloatTensor,
  ELEM,
  floatAttribute,
  intAttribute,
  intsAttribute,
  scalarConstants,
  tensorValueInfo,
  valueInfoName,
  type FloatTensorValue,
  type OnnxModel,
  type OnnxNode,
} from './onnx-graph';

export interface RewriteReport {
  hardSwish: number;
  /** Scalar Mul/Add nodes after a convolution folded into its weights and bias. */
  foldedAfter: number;
  /** Scalar Mul/Add nodes before a 1×1 unpadded convolution folded into it. */
  foldedBefore: number;
  swapped: number;
  removedConstants: number;
}

/** Rewrites `model` in place; returns how many of each rewrite it made. */
export function rewritePpOcrGraph(model: OnnxModel): RewriteReport {
  const report: RewriteReport = { hardSwish: 0, foldedAfter: 0, foldedBefore: 0, swapped: 0, removedConstants: 0 };
  const scalars = scalarConstants(model);
  const constants = new Set<string>();
  for (const n of model.nodes) if (n.opType === 'Constant') n.outputs.forEach((o) => constants.add(o));

  // Constant-first commutative nodes: constant second.
  for (const n of model.nodes) {
    if ((n.opType !== 'Mul' && n.opType !== 'Add') || n.inputs.length !== 2) continue;
    const [a = '', b = ''] = n.inputs;
    if (constants.has(a) && !constants.has(b)) {
      n.inputs = [b, a];
      report.swapped += 1;
    }
  }

  report.hardSwish = fuseHardSwish(model, scalars);
  report.foldedAfter = foldAffineAfterConv(model, scalars);
  report.foldedBefore = foldAffineBeforeConv(model, scalars);
  report.removedConstants = dropUnusedConstants(model);
  return report;
}

/**
 * Who reads each value. A graph output counts as one more reader (under its own name), so a value the caller sees is
 * never folded away.
 */
function consumersOf(model: OnnxModel): Map<string, OnnxNode[]> {
  const out = new Map<string, OnnxNode[]>();
  const graphReader: OnnxNode = { opType: '', name: '', domain: '', inputs: [], outputs: [], attributes: [], rest: [] };
  for (const f of model.graphRest) {
    if (f.no === 12 && f.wire === 2) out.set(valueInfoName(f.value as Uint8Array), [graphReader]);
  }
  for (const n of model.nodes) {
    for (const i of n.inputs) {
      const list = out.get(i);
      if (list) list.push(n);
      else out.set(i, [n]);
    }
  }
  return out;
}

/** Clip's bounds as attributes (opset < 11) or constant inputs (opset >= 11). */
function clipBounds(node: OnnxNode, scalars: Map<string, number>): { min?: number; max?: number } {
  const out: { min?: number; max?: number } = {};
  if (node.inputs[1]) {
    const v = scalars.get(node.inputs[1]);
    if (v !== undefined) out.min = v;
  }
  if (node.inputs[2]) {
    const v = scalars.get(node.inputs[2]);
    if (v !== undefined) out.max = v;
  }
  for (const a of node.attributes) {
    const { name, value } = attributeFloat(a);
    if ((name === 'min' || name === 'max') && value !== undefined) out[name] = value;
  }
  return out;
}

/**
 * `Add(x, 3) → Clip(0, 6) → Mul(x, ·) → Div(·, 6)` becomes `HardSigmoid(x; 1/6, 0.5) → Mul(x, ·)`, the Div's output
 * name kept. Only fused when each intermediate value has that one consumer.
 */
function fuseHardSwish(model: OnnxModel, scalars: Map<string, number>): number {
  const consumers = consumersOf(model);
  const only = (value: string): OnnxNode | undefined => {
    const list = consumers.get(value);
    return list && list.length === 1 ? list[0] : undefined;
  };
  const drop = new Set<OnnxNode>();
  let fused = 0;
  for (const add of model.nodes) {
    if (add.opType !== 'Add' || add.inputs.length !== 2 || drop.has(add)) continue;
    const [x = '', three = ''] = add.inputs;
    if (scalars.get(three) !== 3) continue;
    const clip = only(add.outputs[0] ?? '');
    if (!clip || clip.opType !== 'Clip') continue;
    const bounds = clipBounds(clip, scalars);
    if (bounds.min !== 0 || bounds.max !== 6) continue;
    const mul = only(clip.outputs[0] ?? '');
    if (!mul || mul.opType !== 'Mul' || !mul.inputs.includes(x)) continue;
    const div = only(mul.outputs[0] ?? '');
    if (!div || div.opType !== 'Div' || div.inputs[0] !== mul.outputs[0] || scalars.get(div.inputs[1] ?? '') !== 6) {
      continue;
    }
    const gate = `${clip.outputs[0] ?? ''}.hardsigmoid`;
    add.opType = 'HardSigmoid';
    add.inputs = [x];
    add.outputs = [gate];
    add.attributes = [floatAttribute('alpha', 1 / 6), floatAttribute('beta', 0.5)];
    mul.inputs = [x, gate];
    mul.outputs = [...div.outputs];
    drop.add(clip);
    drop.add(div);
    fused += 1;
  }
  model.nodes = model.nodes.filter((n) => !drop.has(n));
  return fused;
}

function dropUnusedConstants(model: OnnxModel): number {
  const used = new Set<string>();
  for (const n of model.nodes) n.inputs.forEach((i) => used.add(i));
  const before = model.nodes.length;
  model.nodes = model.nodes.filter((n) => n.opType !== 'Constant' || n.outputs.some((o) => used.has(o)));
  return before - model.nodes.length;
}

/** The float tensors of `Constant` nodes, decoded on demand, and a way to replace one. */
function constantTensors(model: OnnxModel): {
  get(value: string): FloatTensorValue | undefined;
  set(value: string, tensor: FloatTensorValue): void;
} {
  const byOutput = new Map<string, OnnxNode>();
  for (const n of model.nodes) if (n.opType === 'Constant' && n.outputs.length === 1) byOutput.set(n.outputs[0]!, n);
  return {
    get(value) {
      const node = byOutput.get(value);
      const attr = node?.attributes.map(attributeTensor).find((a) => a?.name === 'value');
      return attr ? decodeFullFloatTensor(attr.tensor) : undefined;
    },
    set(value, tensor) {
      const node = byOutput.get(value);
      if (node) node.attributes = constantNode(value, tensor).attributes;
      else {
        const fresh = constantNode(value, tensor);
        byOutput.set(value, fresh);
        model.nodes.unshift(fresh);
      }
    },
  };
}

/** `Mul(x, s)` / `Add(x, c)` with `s`, `c` scalar constants: the scalar, else undefined. */
function scalarOperand(
  node: OnnxNode | undefined,
  op: string,
  x: string,
  scalars: Map<string, number>,
): number | undefined {
  if (!node || node.opType !== op || node.inputs.length !== 2 || node.inputs[0] !== x) return undefined;
  return scalars.get(node.inputs[1] ?? '');
}

/**
 * `Conv(W, b) → Mul(s) → Add(c)` (either step alone too) becomes `Conv(s·W, s·b + c)`: exact, since the scale and
 * shift apply to every output element alike.
 */
function foldAffineAfterConv(model: OnnxModel, scalars: Map<string, number>): number {
  const consumers = consumersOf(model);
  const only = (value: string): OnnxNode | undefined => {
    const list = consumers.get(value);
    return list && list.length === 1 ? list[0] : undefined;
  };
  const tensors = constantTensors(model);
  const drop = new Set<OnnxNode>();
  let folded = 0;
  for (const conv of model.nodes) {
    if (conv.opType !== 'Conv' || conv.outputs.length !== 1) continue;
    const [, wName = '', bName] = conv.inputs;
    if (consumers.get(wName)?.length !== 1 || (bName && consumers.get(bName)?.length !== 1)) continue;
    let out = conv.outputs[0] as string;
    let scale = 1;
    let shift = 0;
    const steps: OnnxNode[] = [];
    let next = only(out);
    const s = scalarOperand(next, 'Mul', out, scalars);
    if (s !== undefined && next) {
      scale = s;
      steps.push(next);
      out = next.outputs[0] as string;
      next = only(out);
    }
    const c = scalarOperand(next, 'Add', out, scalars);
    if (c !== undefined && next) {
      shift = c;
      steps.push(next);
      out = next.outputs[0] as string;
    }
    if (steps.length === 0) continue;
    const w = tensors.get(wName);
    const outChannels = w?.dims[0];
    if (!w || outChannels === undefined) continue;
    const b = bName ? tensors.get(bName) : { name: '', dims: [outChannels], data: new Float32Array(outChannels) };
    if (!b || b.data.length !== outChannels) continue;
    for (let i = 0; i < w.data.length; i += 1) w.data[i] = (w.data[i] as number) * scale;
    for (let i = 0; i < b.data.length; i += 1) b.data[i] = (b.data[i] as number) * scale + shift;
    const biasName = bName ?? `${conv.outputs[0] as string}.folded_bias`;
    tensors.set(wName, w);
    tensors.set(biasName, b);
    conv.inputs = [conv.inputs[0] as string, wName, biasName];
    conv.outputs = [out];
    steps.forEach((n) => drop.add(n));
    folded += steps.length;
  }
  model.nodes = model.nodes.filter((n) => !drop.has(n));
  return folded;
}

/** Whether a Conv reads each output from one input position (1×1 kernel, stride any, no padding). */
function isPointwiseUnpadded(conv: OnnxNode, weight: FloatTensorValue): boolean {
  if (weight.dims.length !== 4 || weight.dims[2] !== 1 || weight.dims[3] !== 1) return false;
  for (const a of conv.attributes) {
    const { name, ints } = attributeInts(a);
    if (name === 'pads' && ints.some((p) => p !== 0)) return false;
    if (name === 'auto_pad') return false;
    if (name === 'dilations' && ints.some((d) => d !== 1)) return false;
  }
  return true;
}

/**
 * `Mul(s) → Add(c) → Conv(W, b)` with a 1×1 unpadded Conv becomes `Conv(s·W, b + c·ΣW)`: exact there because every
 * output reads only real input positions (padding would read zeros the shift never reached).
 */
function foldAffineBeforeConv(model: OnnxModel, scalars: Map<string, number>): number {
  const consumers = consumersOf(model);
  const producers = new Map<string, OnnxNode>();
  for (const n of model.nodes) for (const o of n.outputs) producers.set(o, n);
  const tensors = constantTensors(model);
  const drop = new Set<OnnxNode>();
  let folded = 0;
  for (const conv of model.nodes) {
    if (conv.opType !== 'Conv' || conv.outputs.length !== 1) continue;
    const [x = '', wName = '', bName] = conv.inputs;
    if (consumers.get(wName)?.length !== 1 || (bName && consumers.get(bName)?.length !== 1)) continue;
    const steps: OnnxNode[] = [];
    let scale = 1;
    let shift = 0;
    let input = x;
    const add = producers.get(input);
    if (add && consumers.get(input)?.length === 1) {
      const c = scalarOperand(add, 'Add', add.inputs[0] ?? '', scalars);
      if (c !== undefined) {
        shift = c;
        steps.unshift(add);
        input = add.inputs[0] as string;
      }
    }
    const mul = producers.get(input);
    if (mul && consumers.get(input)?.length === 1) {
      const s = scalarOperand(mul, 'Mul', mul.inputs[0] ?? '', scalars);
      if (s !== undefined) {
        scale = s;
        steps.unshift(mul);
        input = mul.inputs[0] as string;
      }
    }
    if (steps.length === 0) continue;
    const w = tensors.get(wName);
    const outChannels = w?.dims[0];
    if (!w || outChannels === undefined || !isPointwiseUnpadded(conv, w)) continue;
    const b = bName ? tensors.get(bName) : { name: '', dims: [outChannels], data: new Float32Array(outChannels) };
    if (!b || b.data.length !== outChannels) continue;
    const perOut = w.data.length / outChannels;
    for (let o = 0; o < outChannels; o += 1) {
      let sum = 0;
      for (let k = 0; k < perOut; k += 1) {
        const i = o * perOut + k;
        sum += w.data[i] as number;
        w.data[i] = (w.data[i] as number) * scale;
      }
      b.data[o] = (b.data[o] as number) + shift * sum;
    }
    const biasName = bName ?? `${conv.outputs[0] as string}.folded_bias`;
    tensors.set(wName, w);
    tensors.set(biasName, b);
    conv.inputs = [input, wName, biasName];
    steps.forEach((n) => drop.add(n));
    folded += steps.length;
  }
  model.nodes = model.nodes.filter((n) => !drop.has(n));
  return folded;
}

/** Names of the outputs `compactCtcOutput` gives the recognition network. */
export const CTC_OUTPUTS = {
  best: 'ctc_best',
  bestP: 'ctc_best_p',
  space: 'ctc_space',
  topIndex: 'ctc_top_i',
  topP: 'ctc_top_p',
} as const;

/** How many classes per time step `compactCtcOutput` keeps for the beam decoder (ctc-beam.ts). */
export const CTC_TOP_K = 5;

/**
 * Replaces the recognition network's output — the full class distribution per time step, N × T × 6625 floats
 * (46 MB for a receipt's ~1,750 steps, copied out of onnxruntime and scanned in JavaScript) — by what greedy CTC
 * decoding reads: the winning class (`ArgMax`, first of equals like the JavaScript loop), its probability
 * (`ReduceMax`) and the probability of the space class, the last one (`Slice`); and, for the beam decoder, the
 * `CTC_TOP_K` likeliest classes per step with their probabilities (`TopK`, 5 × 8 bytes a step instead of 26 KB).
 * Returns false when the graph does not end in one Softmax output.
 */
export function compactCtcOutput(model: OnnxModel): boolean {
  const outputs = model.graphRest.filter((f) => f.no === 12);
  if (outputs.length !== 1) return false;
  const probs = valueInfoName(outputs[0]!.value as Uint8Array);
  const softmax = model.nodes.find((n) => n.outputs[0] === probs);
  if (!softmax || softmax.opType !== 'Softmax') return false;
  const attr = (op: string, inputs: string[], output: string, attributes: Uint8Array[]): OnnxNode => ({
    opType: op,
    name: '',
    domain: '',
    inputs,
    outputs: [output],
    attributes,
    rest: [],
  });
  model.nodes.push(
    attr('ArgMax', [probs], 'ctc_best_i64', [intAttribute('axis', 2), intAttribute('keepdims', 0)]),
    attr('Cast', ['ctc_best_i64'], CTC_OUTPUTS.best, [intAttribute('to', ELEM.int32)]),
    attr('ReduceMax', [probs], CTC_OUTPUTS.bestP, [intsAttribute('axes', [2]), intAttribute('keepdims', 0)]),
    attr('Slice', [probs], CTC_OUTPUTS.space, [
      intsAttribute('starts', [-1]),
      intsAttribute('ends', [2 ** 31 - 1]),
      intsAttribute('axes', [2]),
    ]),
    // TopK-1 (the models declare opset 9): k is an attribute; indices come out as int64.
    {
      ...attr('TopK', [probs], CTC_OUTPUTS.topP, [intAttribute('axis', 2), intAttribute('k', CTC_TOP_K)]),
      outputs: [CTC_OUTPUTS.topP, 'ctc_top_i64'],
    },
    attr('Cast', ['ctc_top_i64'], CTC_OUTPUTS.topIndex, [intAttribute('to', ELEM.int32)]),
  );
  const infos = [
    tensorValueInfo(CTC_OUTPUTS.best, ELEM.int32),
    tensorValueInfo(CTC_OUTPUTS.bestP, ELEM.float),
    tensorValueInfo(CTC_OUTPUTS.space, ELEM.float),
    tensorValueInfo(CTC_OUTPUTS.topIndex, ELEM.int32),
    tensorValueInfo(CTC_OUTPUTS.topP, ELEM.float),
  ];
  const at = model.graphRest.indexOf(outputs[0]!);
  model.graphRest.splice(at, 1, ...infos.map((value) => ({ no: 12, wire: 2 as const, value })));
  return true;
}
