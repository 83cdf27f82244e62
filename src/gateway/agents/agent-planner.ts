/**
 * The PlannerModel port bound to an upstream chat model with tool calling: the agent loop's transcript becomes an
 * OpenAI chat-completions request (tools as functions), sent through the gateway's upstream client under the
 * model's deadlines, and the reply's tool calls and token usage come back priced at the model's rates.
 *
 * When the loop asks for the round's text as it is written (`PlanRequest.onText`, a streamed chat reply), the call
 * is made with `stream: true` and `stream_options.include_usage` and the same PlanStep is assembled from the chunks
 * (see `streamedAnswer`); otherwise the call is not streamed.
 *
 * Which upstream plans an agent model is the models file's business: `prism-orion-1` and `prism-orion-2` (and any
 * `:auto`, `:fast`, `:pro` variant defined there) resolve through the catalogue like any chat model. A models file
 * that names no agent model still gets its agents planned by a language model: the first serving upstream chat
 * model that takes tools plans for them (one model serves all), and the reply's `planned_by` names it.
 */
import type { PlannerMessage, PlannerModel, PlannerToolCall, PlanRequest, PlanStep } from '../../agents/sdk';
import { randomHex } from '../../lib/random-id';
import { priceCall } from '../../metering/billing';
import { firstServingUpstreamChatModel, type ModelCatalogue } from '../catalogue/model-catalogue';
import type { CatalogueModel, UpstreamTarget } from '../catalogue/model.types';
import { countTokens, tokensForChars } from '../message-inputs';
import type { UpstreamClient, UpstreamJson } from '../upstream/upstream-client';
import { recordModelUsage, withModelCallSpan } from '../upstream/genai-span';

export interface UpstreamPlannerDeps {
  catalogue: ModelCatalogue;
  upstream: UpstreamClient;
}

/** The agent models, their variants and their `vlmrun-orion-*` names: what the gateway runs on the agent runtime. */
const AGENT_MODEL = /^(?:prism|vlmrun)-orion-[12](?::(?:auto|fast|pro|lite))?$/;

export const isAgentModel = (model: string): boolean => AGENT_MODEL.test(model);

/**
 * The catalogue model that plans for `requested` (`prism-orion-2:pro`): the variant itself when the models file
 * defines it (as an id or alias), else its base id. When that model runs on no upstream (the built-in agent models
 * are the deterministic planner) and the models file gives no agent model an upstream, the first serving upstream
 * chat model that takes tools plans instead, if there is one. A file that names an upstream for one agent model has said which
 * model plans (an entry whose id or alias is an agent model's name): the others keep the deterministic planner. Null when the agent model is not known at all.
 */
export function plannerModelFor(catalogue: ModelCatalogue, requested: string): CatalogueModel | null {
  const base = requested.split(':')[0] ?? requested;
  const named = catalogue.find(requested) ?? catalogue.find(base);
  if (!named) return null;
  if (named.engine.kind === 'upstream') return named;
  const agentsNamed = catalogue
    .list('chat')
    .some((m) => m.engine.kind === 'upstream' && [m.id, ...m.aliases].some(isAgentModel));
  return agentsNamed ? named : (firstServingUpstreamChatModel(catalogue, { tools: true }) ?? named);
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
      const { answer, cost } = await withModelCallSpan(model.id, target, async (span) => {
        const answer = request.onText
          ? await streamedAnswer(deps.upstream, target, body, request, request.onText)
          : wholeAnswer(await deps.upstream.chat(target, body, { signal: request.signal }));
        const cost = priceCall(
          model.pricing,
          { promptTokens: answer.inputTokens, completionTokens: answer.outputTokens },
          { minimumMicros: 0 },
        );
        recordModelUsage(span, answer.inputTokens, answer.outputTokens, cost.standardMicros / 1e6);
        return { answer, cost };
      });
      return {
        content: answer.content,
        toolCalls: answer.toolCalls,
        usage: { inputTokens: answer.inputTokens, outputTokens: answer.outputTokens, costMicros: cost.standardMicros },
      };
    },
  };
}

/** One planner answer before pricing. */
interface UpstreamAnswer {
  content: string | null;
  toolCalls: PlannerToolCall[];
  inputTokens: number;
  outputTokens: number;
}

type TokenUsage = { prompt_tokens?: unknown; completion_tokens?: unknown } | undefined;

/** A non-streamed reply; missing usage counts as 0 tokens. */
function wholeAnswer(reply: UpstreamJson): UpstreamAnswer {
  const choice = (reply.choices as { message?: Record<string, unknown> }[] | undefined)?.[0]?.message ?? {};
  const usage = reply.usage as TokenUsage;
  return {
    content: typeof choice.content === 'string' ? choice.content : null,
    toolCalls: parseToolCalls(choice.tool_calls),
    inputTokens: typeof usage?.prompt_tokens === 'number' ? usage.prompt_tokens : 0,
    outputTokens: typeof usage?.completion_tokens === 'number' ? usage.completion_tokens : 0,
  };
}

/** A tool call assembled from its indexed deltas. */
interface ToolCallParts {
  id: string;
  name: string;
  arguments: string;
}

/**
 * The same answer as {@link wholeAnswer}, streamed: content deltas go to `onText` until the first tool-call delta,
 * tool calls are assembled from their indexed deltas (the id and the name's and arguments' fragments), usage is the
 * last chunk's. A round that ends without a parsed tool call forwards the content it held back after a tool-call
 * delta, so its deltas join to its content. Without usage from the upstream the tokens are counted as the
 * gateway's own streams count them (chat.service): the prompt's text and the answer's characters, four to a token.
 */
async function streamedAnswer(
  upstream: UpstreamClient,
  target: UpstreamTarget,
  body: UpstreamJson,
  request: PlanRequest,
  onText: (delta: string) => void,
): Promise<UpstreamAnswer> {
  const stream = await upstream.streamChat(target, body, { signal: request.signal, includeUsage: true });
  let content: string | null = null;
  let forwarded = 0;
  let toolsStarted = false;
  const parts: ToolCallParts[] = [];
  let usage: TokenUsage;
  for await (const batch of stream) {
    for (const chunk of batch) {
      if (chunk.usage && typeof chunk.usage === 'object') usage = chunk.usage;
      const choices = Array.isArray(chunk.choices) ? (chunk.choices as { index?: unknown; delta?: unknown }[]) : [];
      const delta = choices.find((c) => (c.index ?? 0) === 0)?.delta as Record<string, unknown> | undefined;
      if (!delta) continue;
      if (typeof delta.content === 'string') {
        content = (content ?? '') + delta.content;
        if (!toolsStarted && delta.content !== '') {
          forwarded = content.length;
          onText(delta.content);
        }
      }
      if (Array.isArray(delta.tool_calls) && delta.tool_calls.length > 0) {
        toolsStarted = true;
        for (const raw of delta.tool_calls as unknown[]) mergeToolCallDelta(parts, raw);
      }
    }
  }
  const named = parts.filter((p) => p.name !== '');
  const toolCalls = parseToolCalls(
    named.map((p) => ({ id: p.id, function: { name: p.name, arguments: p.arguments } })),
  );
  if (toolCalls.length === 0 && content !== null && forwarded < content.length) onText(content.slice(forwarded));
  const written = (content ?? '').length + parts.reduce((n, p) => n + p.name.length + p.arguments.length, 0);
  const prompt = request.messages.map((m) => m.content ?? '').join('\n');
  return {
    content,
    toolCalls,
    inputTokens: typeof usage?.prompt_tokens === 'number' ? usage.prompt_tokens : countTokens(prompt),
    outputTokens: typeof usage?.completion_tokens === 'number' ? usage.completion_tokens : tokensForChars(written),
  };
}

/**
 * Adds one `tool_calls` delta to the calls so far: by its `index` (an upstream that sends none is read by id, a new
 * id opening a new call); the first id is kept, argument fragments are appended, and so are name fragments
 * (a name repeated whole in every delta, as some servers send it, is kept once).
 */
function mergeToolCallDelta(parts: ToolCallParts[], raw: unknown): void {
  if (!raw || typeof raw !== 'object') return;
  const delta = raw as { index?: unknown; id?: unknown; function?: { name?: unknown; arguments?: unknown } };
  const id = typeof delta.id === 'string' ? delta.id : '';
  let at: number;
  if (typeof delta.index === 'number' && Number.isInteger(delta.index) && delta.index >= 0 && delta.index < 128) {
    at = delta.index;
  } else {
    const known = id === '' ? -1 : parts.findIndex((p) => p.id === id);
    at = known >= 0 ? known : id !== '' || parts.length === 0 ? parts.length : parts.length - 1;
  }
  while (parts.length <= at) parts.push({ id: '', name: '', arguments: '' });
  const call = parts[at] as ToolCallParts;
  if (id !== '' && call.id === '') call.id = id;
  const name = delta.function?.name;
  if (typeof name === 'string' && name !== '' && name !== call.name) call.name += name;
  const args = delta.function?.arguments;
  if (typeof args === 'string') call.arguments += args;
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
