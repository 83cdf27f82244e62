/**
 * The execution usage object and what an execution costs.
 *
 * Elements come from what the tools read (pages of documents, images, videos, audio clips). The standard cost is
 * the planner's tokens at the agent model's prices (the deterministic planner uses none, so its runs cost nothing);
 * `cost_dollars` is that times the tier multiplier (flex 0.5×, priority 1.8×) and `savings_dollars` their
 * difference, as the spec defines them (negative for priority). The $0.001 minimum is the chat-completion rule and
 * does not apply. Tools billed by themselves (transcribe_audio, per call on the transcription model) add what they
 * were debited to both; what is debited from the organisation's wallet is exactly `cost_dollars`.
 */
import type { ExecutionStep, ExecutionUsage, ServiceTier } from '../../domain/execution';
import { TIER_MULTIPLIER } from '../../domain/execution';

/** Token prices of the model that planned (USD per 1M tokens; null = unknown). */
export interface PlannerPricing {
  prompt: number | null;
  completion: number | null;
}

/** What a run used, to be priced at `multiplier` and debited. */
export interface ExecutionChargeInput {
  pricing: PlannerPricing;
  inputTokens: number;
  outputTokens: number;
  multiplier: number;
  reason: string;
}

export interface ExecutionCost {
  /** Before the multiplier. */
  standardMicros: number;
  /** Debited: the standard cost × the multiplier, rounded up to a micro-dollar. */
  costMicros: number;
}

/** Money held for one execution from its acceptance until it ends. */
export interface ExecutionHold {
  /**
   * Debits the run's real cost, at most the amount held (the hold is the run's ceiling: the wallet had it when the
   * run was accepted), and gives the hold back. Call once.
   */
  settle(input: ExecutionChargeInput): Promise<ExecutionCost>;
  /** What {@link ExecutionHold.settle} will debit for `input`, without debiting (the record is written first). */
  price(input: ExecutionChargeInput): ExecutionCost;
  /** The amount held, in dollars (for messages). */
  readonly dollars: number;
  /** Whether the hold still covers a run that has used these planner tokens so far. */
  covers(inputTokens: number, outputTokens: number): boolean;
  /** Gives the hold back without charging (the run failed before using a model). Idempotent. */
  release(): void;
  /** The API key the run was held for: its tools' paid calls (speech) count against that key's budget too. */
  readonly keyId?: string | null;
}

/**
 * Planner tokens one step is budgeted at when an execution's hold is sized: a step's prompt (task, tool outputs
 * so far) and its answer. A run of `maxSteps` steps holds `maxSteps` times this at the planner's prices.
 */
export const STEP_BUDGET = { promptTokens: 8192, completionTokens: 1024 } as const;

/** The wallet, as executions use it (bound to the gateway's biller by the composition root). */
export interface ExecutionBilling {
  /** @throws 402 `insufficient_credits` before any work when the wallet cannot pay the minimum. */
  authorize(orgId: string): Promise<void>;
  /**
   * Before any work: holds the largest cost the run is budgeted at ({@link STEP_BUDGET} × `maxSteps` at the
   * planner's prices and `multiplier`; the biller holds at least its minimum, so an empty wallet runs nothing),
   * like a gateway call's reservation.
   * @throws 402 `insufficient_credits` when the balance less other holds cannot cover it, `key_budget_exceeded` or
   * `org_budget_exceeded` when the key's or the organisation's budget cannot.
   */
  reserve(
    orgId: string,
    input: { pricing: PlannerPricing; multiplier: number; maxSteps: number },
    /** The API key that asked for the run: its budget is held first (docs/admin.md); null: none known. */
    keyId?: string | null,
  ): Promise<ExecutionHold>;
  /** Prices the tokens at `multiplier` and debits the wallet (runs resumed after a restart). */
  charge(orgId: string, input: ExecutionChargeInput): Promise<ExecutionCost>;
  /** What `charge` would debit for these tokens, without debiting (a record written before its bill). */
  price(input: ExecutionChargeInput): ExecutionCost;
}

const ELEMENT_OF: Record<
  string,
  { type: ExecutionUsage['element_type']; count(output: Record<string, unknown>): number }
> = {
  ocr_image: { type: 'image', count: () => 1 },
  read_document: {
    type: 'page',
    count: (o) => ((o.pages as { status: string }[] | undefined) ?? []).filter((p) => p.status === 'ok').length,
  },
  sample_video_frames: { type: 'video', count: () => 1 },
  probe_audio: { type: 'audio', count: () => 1 },
  transcribe_audio: { type: 'audio', count: () => 1 },
};

/** The planner tokens a run's steps used, summed (what its bill and its spending limit are priced from). */
export function plannerTokens(steps: readonly Pick<ExecutionStep, 'inputTokens' | 'outputTokens'>[]): {
  inputTokens: number;
  outputTokens: number;
} {
  let inputTokens = 0;
  let outputTokens = 0;
  for (const step of steps) {
    inputTokens += step.inputTokens;
    outputTokens += step.outputTokens;
  }
  return { inputTokens, outputTokens };
}

/** Elements read by the run's tools (the first kind read names the element type). */
export function elementsOf(steps: ExecutionStep[]): Pick<ExecutionUsage, 'elements_processed' | 'element_type'> {
  let count = 0;
  let type: ExecutionUsage['element_type'] = null;
  for (const step of steps) {
    const element = step.kind === 'tool' && step.output ? ELEMENT_OF[step.name] : undefined;
    if (!element || !step.output) continue;
    count += element.count(step.output);
    type ??= element.type;
  }
  return { elements_processed: count, element_type: type };
}

const dollars = (micros: number): number => Math.round(micros) / 1e6;

/**
 * What the run's tools were billed by themselves (transcribe_audio: each call on the transcription model, debited
 * when it ran), in micro-dollars: part of what the run cost, outside the planner's tier multiplier.
 */
export function toolCostMicros(steps: ExecutionStep[]): number {
  let micros = 0;
  for (const step of steps) {
    const cost = step.kind === 'tool' ? step.output?.cost_dollars : undefined;
    if (typeof cost === 'number' && cost > 0) micros += Math.round(cost * 1e6);
  }
  return micros;
}

export function buildUsage(input: {
  steps: ExecutionStep[];
  tier: ServiceTier;
  durationMs: number;
  message: string | null;
  cost: ExecutionCost | null;
}): ExecutionUsage {
  const elements = elementsOf(input.steps);
  const multiplier = TIER_MULTIPLIER[input.tier];
  const tools = toolCostMicros(input.steps);
  const standard = (input.cost?.standardMicros ?? 0) + tools;
  const cost = (input.cost?.costMicros ?? 0) + tools;
  return {
    ...elements,
    credits_used: elements.elements_processed,
    steps: input.steps.length,
    message: input.message,
    duration_seconds: Math.ceil(input.durationMs / 1000),
    service_tier: input.tier,
    mode_multiplier: multiplier,
    standard_cost_dollars: dollars(standard),
    cost_dollars: dollars(cost),
    savings_dollars: dollars(standard - cost),
  };
}
