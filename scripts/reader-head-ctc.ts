/**
 * The arithmetic of refitting the recogniser's Latin output columns (scripts/train-reader-head.ts): log-probabilities
 * of the refitted classes under the full softmax, the CTC loss of a line with its gradient, and Adam steps pulled
 * toward the shipped weights. Kept apart from the script's file and model handling so a unit test can check the
 * gradient against finite differences.
 *
 * The softmax runs over all 6,625 classes, but only the refitted ones have parameters: the others' share of each step
 * is one number, `frozen[t]` (the log of the sum of their exponentiated logits, computed once by the network as
 * shipped), so a step costs `features × classes` multiply-adds for 96 classes, not 6,625.
 *
 * Targets are case-blind: the truth is upper case (SROIE task 2), so a target symbol is a group of classes (`a` and
 * `A`), its probability the sum of theirs, and the gradient shares the group's posterior between them by their own
 * probabilities. The recogniser keeps deciding the case; training only moves which letter it reads.
 */

const LOG_ZERO = -1e30;

const logAdd = (a: number, b: number): number => {
  if (a === LOG_ZERO) return b;
  if (b === LOG_ZERO) return a;
  return Math.max(a, b) + Math.log1p(Math.exp(-Math.abs(a - b)));
};

/** One line's time steps: features (steps × width) and the frozen classes' log-sum-exp per step. */
export interface LineSteps {
  steps: number;
  features: Float32Array;
  frozen: Float64Array;
  /** Target symbols (group ids; 0 is the blank's group, never a target). */
  target: number[];
}

/** The refitted layer: `weights[d * classes + j]`, `bias[j]`, and each class's target group. */
export interface HeadParameters {
  features: number;
  classes: number;
  weights: Float64Array;
  bias: Float64Array;
  groupOf: readonly number[];
  groups: number;
}

/** log P(class j at step t) under the full softmax, `out[t * classes + j]`; each step's log partition into `logZ`. */
export function classLogProbs(head: HeadParameters, line: LineSteps, logZ?: Float64Array): Float64Array {
  const { features: width, classes } = head;
  const out = new Float64Array(line.steps * classes);
  for (let t = 0; t < line.steps; t += 1) {
    const base = t * width;
    let max = line.frozen[t] as number;
    for (let j = 0; j < classes; j += 1) {
      let z = head.bias[j] as number;
      for (let d = 0; d < width; d += 1) {
        z += (line.features[base + d] as number) * (head.weights[d * classes + j] as number);
      }
      out[t * classes + j] = z;
      if (z > max) max = z;
    }
    let sum = Math.exp((line.frozen[t] as number) - max);
    for (let j = 0; j < classes; j += 1) sum += Math.exp((out[t * classes + j] as number) - max);
    const partition = max + Math.log(sum);
    if (logZ) logZ[t] = partition;
    for (let j = 0; j < classes; j += 1) out[t * classes + j] = (out[t * classes + j] as number) - partition;
  }
  return out;
}

/**
 * The CTC loss (−log P(target | line)) and, into `grad` when given, its gradient with respect to each refitted
 * class's logit per step. NaN when the target cannot be aligned in the line's steps.
 */
export function ctcLoss(head: HeadParameters, line: LineSteps, logProbs: Float64Array, grad?: Float64Array): number {
  const { classes, groups, groupOf } = head;
  const T = line.steps;
  const group = new Float64Array(T * groups).fill(LOG_ZERO);
  for (let t = 0; t < T; t += 1) {
    for (let j = 0; j < classes; j += 1) {
      const g = t * groups + (groupOf[j] as number);
      group[g] = logAdd(group[g] as number, logProbs[t * classes + j] as number);
    }
  }
  const S = 2 * line.target.length + 1;
  const label = (s: number): number => (s % 2 === 0 ? 0 : (line.target[(s - 1) / 2] as number));
  const skips = (s: number): boolean => s > 1 && label(s) !== 0 && label(s) !== label(s - 2);
  const alpha = new Float64Array(T * S).fill(LOG_ZERO);
  alpha[0] = group[label(0)] as number;
  if (S > 1) alpha[1] = group[label(1)] as number;
  for (let t = 1; t < T; t += 1) {
    for (let s = 0; s < S; s += 1) {
      let a = alpha[(t - 1) * S + s] as number;
      if (s > 0) a = logAdd(a, alpha[(t - 1) * S + s - 1] as number);
      if (skips(s)) a = logAdd(a, alpha[(t - 1) * S + s - 2] as number);
      alpha[t * S + s] = a === LOG_ZERO ? LOG_ZERO : a + (group[t * groups + label(s)] as number);
    }
  }
  const logLikelihood = logAdd(
    alpha[(T - 1) * S + S - 1] as number,
    S > 1 ? (alpha[(T - 1) * S + S - 2] as number) : LOG_ZERO,
  );
  if (logLikelihood < LOG_ZERO / 2) return NaN;
  if (grad) ctcGradient(head, line, logProbs, group, alpha, logLikelihood, grad);
  return -logLikelihood;
}

/** The backward pass of `ctcLoss`: posteriors per group, shared among each group's classes, minus nothing else. */
function ctcGradient(
  head: HeadParameters,
  line: LineSteps,
  logProbs: Float64Array,
  group: Float64Array,
  alpha: Float64Array,
  logLikelihood: number,
  grad: Float64Array,
): void {
  const { classes, groups, groupOf } = head;
  const T = line.steps;
  const S = 2 * line.target.length + 1;
  const label = (s: number): number => (s % 2 === 0 ? 0 : (line.target[(s - 1) / 2] as number));
  const skipsForward = (s: number): boolean => s < S - 2 && label(s) !== 0 && label(s) !== label(s + 2);
  const beta = new Float64Array(T * S).fill(LOG_ZERO);
  beta[(T - 1) * S + S - 1] = group[(T - 1) * groups + label(S - 1)] as number;
  if (S > 1) beta[(T - 1) * S + S - 2] = group[(T - 1) * groups + label(S - 2)] as number;
  for (let t = T - 2; t >= 0; t -= 1) {
    for (let s = S - 1; s >= 0; s -= 1) {
      let b = beta[(t + 1) * S + s] as number;
      if (s < S - 1) b = logAdd(b, beta[(t + 1) * S + s + 1] as number);
      if (skipsForward(s)) b = logAdd(b, beta[(t + 1) * S + s + 2] as number);
      beta[t * S + s] = b === LOG_ZERO ? LOG_ZERO : b + (group[t * groups + label(s)] as number);
    }
  }
  const occupancy = new Float64Array(groups);
  for (let t = 0; t < T; t += 1) {
    occupancy.fill(LOG_ZERO);
    for (let s = 0; s < S; s += 1) {
      const g = label(s);
      const v = (alpha[t * S + s] as number) + (beta[t * S + s] as number) - (group[t * groups + g] as number);
      occupancy[g] = logAdd(occupancy[g] as number, v);
    }
    for (let j = 0; j < classes; j += 1) {
      const g = groupOf[j] as number;
      const lp = logProbs[t * classes + j] as number;
      const posterior =
        occupancy[g] === LOG_ZERO
          ? 0
          : Math.exp((occupancy[g] as number) - logLikelihood + lp - (group[t * groups + g] as number));
      grad[t * classes + j] = Math.exp(lp) - posterior;
    }
  }
}

/** Adds one line's parameter gradient (from the logit gradient) into `gradWeights` / `gradBias`. */
export function accumulateGradient(
  head: HeadParameters,
  line: LineSteps,
  logitGrad: Float64Array,
  gradWeights: Float64Array,
  gradBias: Float64Array,
): void {
  const { features: width, classes } = head;
  for (let t = 0; t < line.steps; t += 1) {
    for (let j = 0; j < classes; j += 1) {
      const g = logitGrad[t * classes + j] as number;
      if (g === 0) continue;
      gradBias[j] = (gradBias[j] as number) + g;
      for (let d = 0; d < width; d += 1) {
        gradWeights[d * classes + j] =
          (gradWeights[d * classes + j] as number) + g * (line.features[t * width + d] as number);
      }
    }
  }
}

/** Adam's moments for one parameter array. */
export interface AdamState {
  m: Float64Array;
  v: Float64Array;
}

export const adamState = (length: number): AdamState => ({ m: new Float64Array(length), v: new Float64Array(length) });

/** One Adam step on `params` with gradient `grad / count`, plus `pull × (params − prior)` (weight decay to the prior). */
export function adamStep(
  params: Float64Array,
  grad: Float64Array,
  count: number,
  prior: Float64Array,
  state: AdamState,
  step: number,
  settings: { rate: number; pull: number },
): void {
  const [b1, b2] = [0.9, 0.999];
  for (let i = 0; i < params.length; i += 1) {
    const g = (grad[i] as number) / count + settings.pull * ((params[i] as number) - (prior[i] as number));
    state.m[i] = b1 * (state.m[i] as number) + (1 - b1) * g;
    state.v[i] = b2 * (state.v[i] as number) + (1 - b2) * g * g;
    const mHat = (state.m[i] as number) / (1 - b1 ** step);
    const vHat = (state.v[i] as number) / (1 - b2 ** step);
    params[i] = (params[i] as number) - (settings.rate * mHat) / (Math.sqrt(vHat) + 1e-8);
  }
}
