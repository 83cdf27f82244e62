import fs from 'node:fs';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import {
  constantNode,
  decodeModel,
  encodeMessage,
  encodeModel,
  floatAttribute,
  type OnnxModel,
  type OnnxNode,
  type WireField,
} from '../../../src/engines/ocr/onnx-graph';
import {
  compactCtcOutput,
  CTC_OUTPUTS,
  CTC_TOP_K,
  rewritePpOcrGraph,
} from '../../../src/engines/ocr/ppocr-graph-rewrite';
import { ctcStepsFromProbabilities, defaultPpOcrModelDir } from '../../../src/engines/ocr/ppocr-models';

const text = (no: number, s: string): WireField => ({ no, wire: 2, value: new TextEncoder().encode(s) });
const msg = (no: number, fields: WireField[]): WireField => ({ no, wire: 2, value: encodeMessage(fields) });
const int = (no: number, v: number): WireField => ({ no, wire: 0, value: BigInt(v) });

/** ValueInfoProto: a float tensor, with a shape when given. */
const valueInfo = (no: number, name: string, dims?: number[]): WireField =>
  msg(no, [
    text(1, name),
    msg(2, [
      msg(1, [
        int(1, 1),
        ...(dims
          ? [
              msg(
                2,
                dims.map((d) => msg(1, [int(1, d)])),
              ),
            ]
          : []),
      ]),
    ]),
  ]);

const ints = (name: string, values: number[]): Uint8Array =>
  encodeMessage([text(1, name), ...values.map((v) => int(8, v)), int(20, 7)]);

const node = (opType: string, inputs: string[], outputs: string[], attributes: Uint8Array[] = []): OnnxNode => ({
  opType,
  name: '',
  domain: '',
  inputs,
  outputs,
  attributes,
  rest: [],
});

const scalar = (name: string, v: number): OnnxNode => constantNode(name, { name, dims: [], data: Float32Array.of(v) });

const seeded = (n: number, seed: number): Float32Array => {
  let s = seed;
  return Float32Array.from({ length: n }, () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return (s / 2 ** 31) * 2 - 1;
  });
};

/**
 * The exported PP-OCR block, small: Conv → Mul(scale, ·) → Add(·, bias) → hard-swish as four nodes → Mul(scale, ·)
 * → Add(·, bias) → Conv with a `second` kernel (1 = pointwise, 3 = padded 3×3), on a 2-channel 5×5 input, opset 9.
 */
function exportedBlock(second: 1 | 3): OnnxModel {
  const pad = (k: number): Uint8Array[] => [
    ints('kernel_shape', [k, k]),
    ints('pads', Array<number>(4).fill((k - 1) / 2)),
  ];
  const nodes: OnnxNode[] = [
    constantNode('w1', { name: 'w1', dims: [3, 2, 3, 3], data: seeded(54, 1) }),
    constantNode('b1', { name: 'b1', dims: [3], data: seeded(3, 2) }),
    constantNode('w2', { name: 'w2', dims: [2, 3, second, second], data: seeded(6 * second * second, 3) }),
    scalar('s1', 1.7),
    scalar('c1', 0.4),
    scalar('three', 3),
    scalar('six', 6),
    scalar('s2', 0.3),
    scalar('c2', -0.2),
    node('Conv', ['x', 'w1', 'b1'], ['conv1'], pad(3)),
    node('Mul', ['s1', 'conv1'], ['m1']),
    node('Add', ['m1', 'c1'], ['a1']),
    node('Add', ['a1', 'three'], ['a3']),
    node('Clip', ['a3'], ['clip'], [floatAttribute('min', 0), floatAttribute('max', 6)]),
    node('Mul', ['a1', 'clip'], ['prod']),
    node('Div', ['prod', 'six'], ['hswish']),
    node('Mul', ['s2', 'hswish'], ['m2']),
    node('Add', ['m2', 'c2'], ['a2']),
    node('Conv', ['a2', 'w2'], ['y'], pad(second)),
  ];
  return {
    modelRest: [int(1, 8), msg(8, [text(1, ''), int(2, 9)])],
    graphRest: [text(2, 'block'), valueInfo(11, 'x', [1, 2, 5, 5]), valueInfo(12, 'y')],
    nodes,
  };
}

async function runAll(
  model: Uint8Array | string,
  input: Float32Array,
  dims: number[],
): Promise<Record<string, ort.Tensor>> {
  const options = { graphOptimizationLevel: 'disabled' } as const;
  const session =
    typeof model === 'string'
      ? await ort.InferenceSession.create(model, options)
      : await ort.InferenceSession.create(model, options);
  try {
    return await session.run({ [session.inputNames[0]!]: new ort.Tensor('float32', input, dims) });
  } finally {
    await session.release();
  }
}

async function run(model: Uint8Array | string, input: Float32Array, dims: number[]): Promise<Float32Array> {
  const out = await runAll(model, input, dims);
  return Object.values(out)[0]!.data as Float32Array;
}

const maxDiff = (a: Float32Array, b: Float32Array): number =>
  a.reduce((m, v, i) => Math.max(m, Math.abs(v - (b[i] as number))), 0);

describe('PP-OCR graph rewrites (exact, in memory)', () => {
  const input = seeded(50, 7).map((v) => v * 4);

  it('fuses hard-swish and folds the affine steps into a pointwise convolution, same outputs', async () => {
    const before = await run(encodeModel(exportedBlock(1)), input, [1, 2, 5, 5]);
    const model = exportedBlock(1);
    const report = rewritePpOcrGraph(model);
    expect(report).toMatchObject({ hardSwish: 1, foldedAfter: 2, foldedBefore: 2 });
    expect(model.nodes.filter((n) => n.opType !== 'Constant').map((n) => n.opType)).toEqual([
      'Conv',
      'HardSigmoid',
      'Mul',
      'Conv',
    ]);
    const after = await run(encodeModel(model), input, [1, 2, 5, 5]);
    expect(after).toHaveLength(before.length);
    expect(maxDiff(before, after)).toBeLessThan(1e-5);
  });

  it('leaves the shift before a padded convolution in place (padding would read zeros it never reached)', async () => {
    const before = await run(encodeModel(exportedBlock(3)), input, [1, 2, 5, 5]);
    const model = exportedBlock(3);
    const report = rewritePpOcrGraph(model);
    expect(report).toMatchObject({ hardSwish: 1, foldedAfter: 2, foldedBefore: 0 });
    const after = await run(encodeModel(model), input, [1, 2, 5, 5]);
    expect(maxDiff(before, after)).toBeLessThan(1e-5);
  });

  it('never folds away a value the graph outputs', () => {
    const model = exportedBlock(1);
    model.graphRest.push(valueInfo(12, 'conv1'), valueInfo(12, 'a3'));
    const report = rewritePpOcrGraph(model);
    expect(report).toMatchObject({ hardSwish: 0, foldedAfter: 0 });
    const produced = new Set(model.nodes.flatMap((n) => n.outputs));
    expect(produced.has('conv1') && produced.has('a3') && produced.has('y')).toBe(true);
  });

  it('rewrites the shipped recognition network without changing what it reads', async () => {
    const file = path.join(defaultPpOcrModelDir(), 'ch_PP-OCRv4_rec_infer.onnx');
    const model = decodeModel(fs.readFileSync(file));
    const report = rewritePpOcrGraph(model);
    expect(report.hardSwish).toBeGreaterThan(20);
    expect(report.foldedAfter).toBeGreaterThan(40);
    const crop = seeded(3 * 48 * 160, 11);
    const before = await run(file, crop, [1, 3, 48, 160]);
    const after = await run(encodeModel(model), crop, [1, 3, 48, 160]);
    expect(after).toHaveLength(before.length);
    expect(maxDiff(before, after)).toBeLessThan(1e-4);
  }, 60_000);

  it('gives the recognition network the outputs greedy and beam CTC decoding read, equal to the full distribution', async () => {
    const file = path.join(defaultPpOcrModelDir(), 'ch_PP-OCRv4_rec_infer.onnx');
    const model = decodeModel(fs.readFileSync(file));
    expect(compactCtcOutput(model)).toBe(true);
    const crops = seeded(2 * 3 * 48 * 96, 5);
    const dims = [2, 3, 48, 96];
    const full = Object.values(await runAll(file, crops, dims))[0]!;
    const expected = ctcStepsFromProbabilities({ data: full.data as Float32Array, dims: full.dims }, full.dims[2]! - 1);
    const out = await runAll(encodeModel(model), crops, dims);
    expect(out[CTC_OUTPUTS.best]!.dims).toEqual([2, full.dims[1]]);
    expect(Array.from(out[CTC_OUTPUTS.best]!.data as Int32Array)).toEqual(Array.from(expected.best));
    expect(maxDiff(out[CTC_OUTPUTS.bestP]!.data as Float32Array, expected.bestP)).toBeLessThan(1e-6);
    expect(maxDiff(out[CTC_OUTPUTS.space]!.data as Float32Array, expected.space)).toBeLessThan(1e-6);
    expect(out[CTC_OUTPUTS.topIndex]!.dims).toEqual([2, full.dims[1], CTC_TOP_K]);
    expect(Array.from(out[CTC_OUTPUTS.topIndex]!.data as Int32Array)).toEqual(Array.from(expected.top!.index));
    expect(maxDiff(out[CTC_OUTPUTS.topP]!.data as Float32Array, expected.top!.p)).toBeLessThan(1e-6);
  }, 60_000);
});
