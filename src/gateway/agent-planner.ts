/**
 * The PlannerModel port bound to an upstream chat model with tool calling: the agent loop's transcript becomes an
 * OpenAI chat-completions request (tools as functions), sent through the gateway's upstream client under the
 * model's deadlines, and the reply's tool calls and token usage come back priced at the model's rates.
 *
 * Which upstream plans an agent model is the models file's business: `prism-orion-1` and `prism-orion-2` (and any
 * `:auto`, `:fast`, `:pro` variant defined there) resolve through the catalogue like any chat model.
 */
import type { PlannerMessage, PlannerModel, PlannerToolCall, PlanRequest, PlanStep } from '../agents/sdk';
import { randomHex } from '../lib/random-id';
import { priceCall } from './billing';
import type { ModelCatalogue } from './catalogue/model-catalogue';
import type { CatalogueModel } from './catalogue/model.types';
import type { UpstreamClient, UpstreamJson } from './upstream/upstream-client';

export interface UpstreamPlannerDeps {
  catalogue: ModelCatalogue;
  upstream: UpstreamClient;
}

/**
 * The catalogue model that plans for `requested` (`prism-orion-2:pro`): the variant itself when the models file
 * defines it (as an id or alias), else its base id. Null when neither is known.
 */
export function plannerModelFor(catalogue: ModelCatalogue, requested: string): CatalogueModel | null {
  const exact = catalogue.find(requested);
  if (exact) return exact;
  const base = requested.split(':')[0] ?? requested;
  return catalogue.find(base) ?? null;
}

/** A planner for `model`, or null when the model does not run on an upstream (→ the deterministic planner). */
export function createUpstreamPlanner(deps: UpstreamPlannerDeps, model: CatalogueModel): PlannerModel | null {
  const target = deps.catalogue.upstreamTarget(model);
  if (!target) return null;
  return {
    kind: 'language-model',
    servedBy: model.id,
    async plan(request: PlanRequest): Promise<PlanStep> {
      const body: UpstreamJson = {
        model: target.model,
        messages: request.messages.map(toOpenAiMessage),
        temperature: 0,
      };
      if (request.tools.length > 0) {
        body.tools = request.tools.map((t) => ({
          type: 'function',
          function: { name: t.name, description: t.description, parameters: t.parameters },
        }));
        body.tool_choice = 'auto';
      }
      const reply = await deps.upstream.chat(target, body, { signal: request.signal });
      const choice = (reply.choices as { message?: Record<string, unknown> }[] | undefined)?.[0]?.message ?? {};
      const usage = (reply.usage ?? {}) as { prompt_tokens?: number; completion_tokens?: number };
      const inputTokens = usage.prompt_tokens ?? 0;
      const outputTokens = usage.completion_tokens ?? 0;
      const cost = priceCall(
        model.pricing,
        { promptTokens: inputTokens, completionTokens: outputTokens },
        {
          minimumMicros: 0,
        },
      );
      return {
        content: typeof choice.content === 'string' ? choice.content : null,
        toolCalls: parseToolCalls(choice.tool_calls),
        usage: { inputTokens, outputTokens, costMicros: cost.standardMicros },
      };
    },
  };
}

function toOpenAiMessage(message: PlannerMessage): UpstreamJson {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content,
        ...(message.toolCalls.length > 0
          ? {
              tool_calls: message.toolCalls.map((c) => ({
                id: c.id,
                type: 'function',
                function: { name: c.name, arguments: JSON.stringify(c.arguments) },
              })),
            }
          : {}),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}

function parseToolCalls(raw: unknown): PlannerToolCall[] {
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((entry: unknown) => {
    const call = entry as { id?: unknown; function?: { name?: unknown; arguments?: unknown } };
    const name = call.function?.name;
    if (typeof name !== 'string') return [];
    let args: Record<string, unknown> = {};
    const text = call.function?.arguments;
    if (typeof text === 'string' && text.trim()) {
      try {
        const parsed: unknown = JSON.parse(text);
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) args = parsed as Record<string, unknown>;
      } catch {
        // Unparseable arguments reach the tool as {} and fail its input schema, which the model then sees.
      }
    }
    return [{ id: typeof call.id === 'string' && call.id ? call.id : `call_${randomHex(6)}`, name, arguments: args }];
  });
}
