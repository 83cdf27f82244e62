/**
 * The arithmetic behind the receipt head (scripts/reader-head-ctc.ts): the CTC loss matches a brute-force sum over
 * every alignment, its gradient matches finite differences (case-blind groups included), and Adam steps on it fit a
 * tiny problem; then ppocr-head.ts writes a head's columns into an ONNX output layer and reads them back.
 */
import {
  accumulateGradient,
  adamState,
  adamStep,
  classLogProbs,
  ctcLoss,
  type HeadParameters,
  type LineSteps,
} from '../../../scripts/reader-head-ctc';
import { constantNode, decodeModel, encodeModel, tensorValueInfo, ELEM } from '../../../src/engines/ocr/onnx-graph';
import { applyReaderHead, findOutputLayer, floatsToBase64 } from '../../../src/engines/ocr/ppocr-head';

/** A deterministic pseudo-random sequence in [-1, 1). */
const numbers = (seed: number) => {
  let state = seed >>> 0;
  return (): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 31 - 1;
  };
};

// Classes: blank, 'a', 'A', 'b' — groups: blank 0, a/A 1, b 2.
const tinyHead = (): HeadParameters => {
  const next = numbers(7);
  return {
    features: 3,
    classes: 4,
    weights: Float64Array.from({ length: 12 }, next),
    bias: Float64Array.from({ length: 4 }, next),
    groupOf: [0, 1, 1, 2],
    groups: 3,
  };
};

const tinyLine = (target: number[]): LineSteps => {
  const next = numbers(11);
  return {
    steps: 4,
    features: Float32Array.from({ length: 12 }, next),
    frozen: Float64Array.from({ length: 4 }, () => 0.5),
    target,
  };
};

/** P(target) by summing every path of groups that collapses to it (blank = group 0). */
function bruteForce(head: HeadParameters, line: LineSteps): number {
  const lp = classLogProbs(head, line);
  const groupP = (t: number, g: number): number =>
    head.groupOf.reduce((sum, gj, j) => (gj === g ? sum + Math.exp(lp[t * head.classes + j] as number) : sum), 0);
  let total = 0;
  const walk = (t: number, path: number[]): void => {
    if (t === line.steps) {
      const collapsed = path.filter((g, i) => g !== 0 && g !== path[i - 1]);
      if (collapsed.join() === line.target.join()) {
        total += path.reduce((p, g, i) => p * groupP(i, g), 1);
      }
      return;
    }
    for (let g = 0; g < head.groups; g += 1) walk(t + 1, [...path, g]);
  };
  walk(0, []);
  return -Math.log(total);
}

describe('receipt head CTC', () => {
  it('equals the sum over every alignment, repeats and case groups included', () => {
    for (const target of [[1], [1, 2], [1, 1], [2, 1, 2]]) {
      const head = tinyHead();
      const line = tinyLine(target);
      expect(ctcLoss(head, line, classLogProbs(head, line))).toBeCloseTo(bruteForce(head, line), 9);
    }
  });

  it('has the gradient finite differences give', () => {
    const head = tinyHead();
    const line = tinyLine([1, 2]);
    const logitGrad = new Float64Array(line.steps * head.classes);
    ctcLoss(head, line, classLogProbs(head, line), logitGrad);
    const gradWeights = new Float64Array(head.weights.length);
    const gradBias = new Float64Array(head.bias.length);
    accumulateGradient(head, line, logitGrad, gradWeights, gradBias);
    const loss = (): number => ctcLoss(head, line, classLogProbs(head, line));
    const h = 1e-6;
    for (const [params, grad] of [
      [head.weights, gradWeights],
      [head.bias, gradBias],
    ] as const) {
      for (let i = 0; i < params.length; i += 1) {
        const keep = params[i] as number;
        params[i] = keep + h;
        const up = loss();
        params[i] = keep - h;
        const down = loss();
        params[i] = keep;
        expect(grad[i]).toBeCloseTo((up - down) / (2 * h), 5);
      }
    }
  });

  it('is NaN when the target cannot fit in the steps', () => {
    const head = tinyHead();
    expect(ctcLoss(head, tinyLine([1, 1, 1]), classLogProbs(head, tinyLine([1, 1, 1])))).toBeNaN();
  });

  it('learns a line with Adam steps', () => {
    const head = tinyHead();
    const line = tinyLine([2, 1]);
    const prior = { weights: Float64Array.from(head.weights), bias: Float64Array.from(head.bias) };
    const state = { weights: adamState(12), bias: adamState(4) };
    const before = ctcLoss(head, line, classLogProbs(head, line));
    for (let step = 1; step <= 200; step += 1) {
      const logitGrad = new Float64Array(line.steps * head.classes);
      ctcLoss(head, line, classLogProbs(head, line), logitGrad);
      const gw = new Float64Array(12);
      const gb = new Float64Array(4);
      accumulateGradient(head, line, logitGrad, gw, gb);
      adamStep(head.weights, gw, 1, prior.weights, state.weights, step, { rate: 0.05, pull: 0 });
      adamStep(head.bias, gb, 1, prior.bias, state.bias, step, { rate: 0.05, pull: 0 });
    }
    expect(ctcLoss(head, line, classLogProbs(head, line))).toBeLessThan(before / 10);
  });
});

describe('receipt head in the ONNX graph', () => {
  // Softmax(Add(MatMul(x, W), b)) over 2 features and 3 classes: blank, 'a', '中'.
  const model = () => {
    const nodes = [
      constantNode('W', { name: '', dims: [2, 3], data: Float32Array.from([1, 2, 3, 4, 5, 6]) }),
      constantNode('b', { name: '', dims: [3], data: Float32Array.from([0.1, 0.2, 0.3]) }),
      { opType: 'MatMul', name: '', domain: '', inputs: ['x', 'W'], outputs: ['m'], attributes: [], rest: [] },
      { opType: 'Add', name: '', domain: '', inputs: ['m', 'b'], outputs: ['z'], attributes: [], rest: [] },
      { opType: 'Softmax', name: '', domain: '', inputs: ['z'], outputs: ['p'], attributes: [], rest: [] },
    ];
    return decodeModel(
      encodeModel({
        modelRest: [],
        graphRest: [{ no: 12, wire: 2, value: tensorValueInfo('p', ELEM.float) }],
        nodes,
      }),
    );
  };

  it('finds the layer and writes only the head classes', () => {
    const m = model();
    expect(findOutputLayer(m)).toMatchObject({ featuresName: 'x', logitsName: 'z' });
    applyReaderHead(m, ['', 'a', '中'], {
      classes: ['a'],
      features: 2,
      weights: Float32Array.from([-1, -2]),
      bias: Float32Array.from([-0.5]),
    });
    const layer = findOutputLayer(decodeModel(encodeModel(m)));
    expect(Array.from(layer?.weights.tensor.data ?? [])).toEqual([1, -1, 3, 4, -2, 6]);
    expect(Array.from(layer?.bias.tensor.data ?? [])).toEqual([0.10000000149011612, -0.5, 0.30000001192092896]);
    expect(floatsToBase64(Float32Array.from([1]))).toBe('AACAPw==');
  });

  it('refuses a head for another width or a class the dictionary lacks', () => {
    const head = { classes: ['a'], features: 3, weights: new Float32Array(3), bias: new Float32Array(1) };
    expect(() => applyReaderHead(model(), ['', 'a', '中'], head)).toThrow(/features/);
    const unknown = { classes: ['z'], features: 2, weights: new Float32Array(2), bias: new Float32Array(1) };
    expect(() => applyReaderHead(model(), ['', 'a', '中'], unknown)).toThrow(/not in the dictionary/);
  });
});
