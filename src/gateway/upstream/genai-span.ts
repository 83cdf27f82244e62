/**
 * Spans of upstream model calls in the OpenTelemetry GenAI semantic conventions (`chat <model>`, client kind):
 * the model asked for and the upstream that served it, then the tokens used and what the call cost. Shared by the
 * gateway's chat completions and the agent planner; off, the call runs as it is (lib/tracing.ts).
 */
import type { Attributes } from '@opentelemetry/api';
import { SpanKind, withSpan, type Span } from '../../lib/tracing';
import type { UpstreamTarget } from '../catalogue/model.types';

export function withModelCallSpan<T>(
  requestModel: string,
  target: UpstreamTarget,
  work: (span: Span | null) => Promise<T>,
): Promise<T> {
  const attributes: Attributes = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': requestModel,
    'gen_ai.provider.name': target.provider,
    'prism.upstream.model': target.model,
  };
  return withSpan(`chat ${requestModel}`, attributes, work, SpanKind.CLIENT);
}

/** Tokens and cost on a model call's span (cost in US dollars; `gen_ai` has no cost attribute yet). */
export function recordModelUsage(span: Span | null, inputTokens: number, outputTokens: number, costUsd: number): void {
  span?.setAttributes({
    'gen_ai.usage.input_tokens': inputTokens,
    'gen_ai.usage.output_tokens': outputTokens,
    'prism.cost_usd': costUsd,
  });
}
