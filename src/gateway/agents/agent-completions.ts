/**
 * Chat completions on the agent models (`prism-orion-1`, `prism-orion-2`, their `:auto`/`:fast`/`:pro`/`:lite`
 * variants, and the `vlmrun-orion-*` names real clients send): the turn runs on the agent runtime (its tools, the
 * call's skills, the thread's attachments) through the AgentChat service, and comes back as an ordinary chat
 * completion — JSON, or SSE chunks with the usage chunk last when asked — billed like any chat model: a hold
 * before the work, the planner's tokens at the agent model's prices (at least the minimum) after it. Every reply
 * names its thread: `session_id` in the body and in each chunk, and the `X-Session-Id` header.
 *
 * Streaming (`stream: true`): the reply's text is streamed as the planner writes it, through a bounded queue
 * (lib/text-queue.ts: the runtime's callback never waits for a slow client, and what waits is at most the reply's
 * text) to the SSE writer. What streams is the runtime's rule (agents/reply-stream.ts): a chat reply that is not
 * JSON, from the planner rounds that may be the final answer; a JSON reply (`response_format`) must pass the schema
 * check first and is sent whole at the end, as is the deterministic planner's answer. Status and headers are
 * committed when the first text arrives or when the run ends, whichever comes first, so a run that fails before
 * any text is still a JSON error with its status. Then: the role chunk, the text chunks as they come, and once the
 * run is over, billed (hold → settle) and stored (`turn.commit`), any text not yet sent, the `stop` chunk and the
 * usage chunk. A failure after the first text (the upstream dies, the run's deadline) ends the stream with the SSE
 * writer's error frame, the same `data: {"error": …}` then `[DONE]` every gateway stream ends with: the hold is
 * released, nothing is billed, and the thread records nothing of the turn (as for any failed turn: the partial text
 * is not a finished answer, and a retry sends the same user message again). The client leaving cancels the run
 * and releases the hold, for streams and JSON calls alike.
 */
import type { Principal } from '../../domain/account';
import { BadRequestError, ClientDisconnectedError, SchemaInvalidError } from '../../domain/errors';
import { schemaProblem } from '../../lib/json-schema';
import { CancelController, type CancelSignal } from '../../lib/cancel';
import { TextQueue } from '../../lib/text-queue';
import type { AgentChat, AgentChatReply, AgentChatRequest, TurnBudget } from '../../services/chats/agent-chat';
import { CHAT_MULTITASK_STRATEGIES } from '../../services/chats/chat-turn-lanes';
import type { SkillEntryWire } from '../../services/executions/execution-skills';
import {
  maxCallMicros,
  microsToDollars,
  priceCall,
  type Biller,
  type ChargeResult,
  type Hold,
  type Payer,
} from '../../metering/billing';
import { CapabilityViolationError, ModelNotServingError, SpendingLimitError, UpstreamError } from '../gateway-errors';
import { countTokens, mediaParts, textOf, type ChatMessage } from '../message-inputs';
import { plannerModelFor } from './agent-planner';
import type { ModelCatalogue } from '../catalogue/model-catalogue';
import type { CatalogueModel } from '../catalogue/model.types';
import type { RequestQueue } from '../../metering/request-queue';
import { completionId, DEFAULT_COMPLETION_BUDGET, REASONING_TOKENS } from '../chat/chat-usage';

type Json = Record<string, unknown>;

/** The agent model ids chat completions run on the agent runtime (real clients' `vlmrun-` names included). */

/** The header that carries the thread id, on the way in (as an alternative to `session_id`) and out. */
export const SESSION_HEADER = 'x-session-id';

export interface AgentCompletionsDeps {
  catalogue: ModelCatalogue;
  biller: Biller;
  queue: RequestQueue;
  agentChat: AgentChat;
}

export interface AgentCompletionContext {
  requestId: string;
  signal: CancelSignal;
  payer: Payer;
  /** The `X-Session-Id` request header, if sent. */
  sessionHeader: string | null;
}

export type AgentOutcome =
  | { stream: false; body: Json; headers: Record<string, string> }
  | { stream: true; batches: AsyncIterable<Json[]>; headers: Record<string, string> };

/** Planner rounds an agent turn is assumed to take when reserving: each re-reads the growing transcript. */
const RESERVED_ROUNDS = 4;
/** Prompt tokens one attachment and the tools' descriptions are assumed to add when reserving. */
const MEDIA_PART_TOKENS = 1024;
const TOOL_SPEC_TOKENS = 2048;

export function createAgentCompletions(deps: AgentCompletionsDeps) {
  const { catalogue, biller, queue } = deps;

  function modelFor(requested: string): { name: string; model: CatalogueModel } {
    const name = requested.replace(/^vlmrun-orion-/, 'prism-orion-');
    const model = plannerModelFor(catalogue, name) ?? catalogue.resolve(name);
    if (!model.serving) throw new ModelNotServingError(model.id);
    return { name, model };
  }

  function reservation(model: CatalogueModel, body: Json): number {
    const messages = body.messages as ChatMessage[];
    const prompt = countTokens(textOf(messages)) + mediaParts(messages).length * MEDIA_PART_TOKENS + TOOL_SPEC_TOKENS;
    const budget = [body.max_completion_tokens, body.max_tokens].find(
      (v): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0,
    );
    return maxCallMicros(model.pricing, prompt * RESERVED_ROUNDS, Math.min(budget ?? DEFAULT_COMPLETION_BUDGET, 1e7));
  }

  return {
    async complete(
      principal: Principal,
      requested: string,
      body: Json,
      context: AgentCompletionContext,
    ): Promise<AgentOutcome> {
      const { name, model } = modelFor(requested);
      for (const param of ['method', 'method_params'] as const) {
        if (body[param] != null) {
          throw new CapabilityViolationError(
            `'${requested}' is an agent model and has no methods; ${param} is not read`,
            param,
          );
        }
      }
      if (body.tools != null) {
        throw new CapabilityViolationError(
          `'${requested}' runs Prism's own tools on the agent runtime; client-side function tools are not supported`,
          'tools',
        );
      }
      const request = agentRequest(name, body, context.sessionHeader);
      const turn = await deps.agentChat.open(principal, request);
      const headers = { [SESSION_HEADER]: turn.sessionId };
      // The chat's next turn waits for this one (multitask_strategy enqueue) until it is stored or has failed.
      const hold = await biller.reserve(context.payer, reservation(model, body)).catch((error: unknown) => {
        turn.close();
        throw error;
      });
      const lane = catalogue.upstreamTarget(model) ? 'upstream' : 'local';
      const provider = catalogue.provider(model);
      // Cancels the run when the client goes away, or when the stream is closed before the run is over.
      const cancel = new CancelController();
      cancel.follow(context.signal);
      const text = body.stream === true ? new TextQueue() : null;

      /** Runs, bills and stores the turn; a failure (or the client leaving) releases the hold and stores nothing. */
      const finished = (async (): Promise<{ reply: AgentChatReply; usage: Json }> => {
        let reply: AgentChatReply;
        let billed: ChargeResult;
        try {
          try {
            const onText = text ? (delta: string) => text.push(delta) : undefined;
            reply = await queue.run(lane, () => turn.run(cancel.signal, onText, budgetOf(model, hold)), cancel.signal);
          } finally {
            text?.close();
          }
          if (cancel.signal.aborted) throw new ClientDisconnectedError();
          if (reply.failure !== null) {
            // A turn ended by the step limit or its spending limit used planner rounds the caller asked for: it is
            // billed for them (never more than its hold); other failures are not billed.
            if (reply.limit !== null && reply.promptTokens + reply.completionTokens > 0) {
              await hold.settle({
                pricing: model.pricing,
                usage: { promptTokens: reply.promptTokens, completionTokens: reply.completionTokens },
                reason: `chat.completions ${name} ${context.requestId} (${reply.limit} limit)`,
                capMicros: hold.micros,
              });
            }
            throw reply.limit === 'spending'
              ? new SpendingLimitError(reply.failure)
              : new UpstreamError(provider, reply.failure);
          }
          // The turn stores its content; a stream must have shown exactly its beginning (agent-chat makes it so).
          if (text && !reply.content.startsWith(text.text)) throw new Error('The streamed text is not the reply');
          const reasoning = REASONING_TOKENS[String(body.reasoning_effort)] ?? 0;
          reply = { ...reply, completionTokens: reply.completionTokens + reasoning, reasoningTokens: reasoning };
          // The hold is the ceiling: a turn never debits more than was held for it, so no wallet goes below zero.
          billed = await hold.settle({
            pricing: model.pricing,
            usage: { promptTokens: reply.promptTokens, completionTokens: reply.completionTokens },
            reason: `chat.completions ${name} ${context.requestId}`,
            capMicros: hold.micros,
          });
        } catch (error) {
          hold.release();
          throw error;
        }
        const usage = usageOf(reply, billed);
        await turn.commit(reply, usage);
        return { reply, usage };
      })().finally(() => turn.close());
      const id = completionId();
      const created = Math.floor(Date.now() / 1000);
      if (text === null) {
        const { reply, usage } = await finished;
        return {
          stream: false,
          headers,
          body: {
            id,
            object: 'chat.completion',
            created,
            model: name,
            session_id: turn.sessionId,
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content: reply.content },
                finish_reason: 'stop',
                logprobs: null,
              },
            ],
            usage,
          },
        };
      }
      // Nothing is committed to the client until the first text or the end of the run: a run that fails before
      // any text is still a JSON error with its status.
      finished.catch(() => undefined);
      await Promise.race([text.firstText(), finished]);
      const includeUsage = (body.stream_options as Json | undefined)?.include_usage === true;
      const base = { id, object: 'chat.completion.chunk', created, model: name, session_id: turn.sessionId };
      return { stream: true, headers, batches: chunksOf(base, text, finished, includeUsage, cancel) };
    },
  };
}

/** The call's agent-chat fields; wrong types were refused by the route's schema already. */
function agentRequest(model: string, body: Json, sessionHeader: string | null): AgentChatRequest {
  const fromBody = typeof body.session_id === 'string' ? body.session_id : null;
  if (fromBody !== null && sessionHeader !== null && fromBody !== sessionHeader) {
    throw new BadRequestError(
      'session_id and the X-Session-Id header name different chats; send one, or the same id in both.',
      null,
      'session_id',
    );
  }
  const format = body.response_format as Json | undefined;
  const nested = (format?.json_schema as Json | undefined)?.schema ?? format?.schema;
  const problem = format?.type === 'json_schema' && nested != null ? schemaProblem(nested) : null;
  if (problem) throw new SchemaInvalidError('response_format', problem);
  return {
    model,
    messages: body.messages as ChatMessage[],
    sessionId: fromBody ?? sessionHeader,
    makePublic: typeof body.public === 'boolean' ? body.public : undefined,
    sessionToken:
      typeof body.session_token === 'string' || body.session_token === null ? body.session_token : undefined,
    skills: Array.isArray(body.skills) ? (body.skills as SkillEntryWire[]) : [],
    responseSchema: format?.type === 'json_schema' && nested && typeof nested === 'object' ? (nested as Json) : null,
    jsonReply: format?.type === 'json_schema' || format?.type === 'json_object',
    requireApproval: Array.isArray(body.require_approval)
      ? body.require_approval.filter((t): t is string => typeof t === 'string')
      : [],
    multitaskStrategy: CHAT_MULTITASK_STRATEGIES.find((s) => s === body.multitask_strategy),
  };
}

/** The turn's budget: its hold, asked before each planner round (agent-chat stops the turn when it runs out). */
function budgetOf(model: CatalogueModel, hold: Hold): TurnBudget {
  return {
    dollars: microsToDollars(hold.micros),
    covers: (promptTokens, completionTokens) =>
      priceCall(model.pricing, { promptTokens, completionTokens }).costMicros <= hold.micros,
  };
}

function usageOf(reply: AgentChatReply, charge: ChargeResult): Json {
  return {
    prompt_tokens: reply.promptTokens,
    completion_tokens: reply.completionTokens,
    total_tokens: reply.promptTokens + reply.completionTokens,
    completion_tokens_details: { reasoning_tokens: reply.reasoningTokens ?? 0 },
    cost: microsToDollars(charge.costMicros),
    credits_used: microsToDollars(charge.costMicros),
    steps: reply.steps,
    elements_processed: reply.elementsProcessed,
    element_type: reply.elementType,
    planned_by: reply.plannedBy,
    message: reply.message,
  };
}

/**
 * The SSE chunks of a streamed turn: the role chunk, each batch of text as the runtime passes it on (everything
 * waiting goes in one batch), then, once the turn is billed and stored, any text not streamed (all of it when the
 * planner answered whole), the finish chunk and the usage chunk. A failed turn throws here, which the SSE writer
 * turns into its error frame. Closed early (the client left), it cancels the run.
 */
async function* chunksOf(
  base: Json,
  text: TextQueue,
  finished: Promise<{ reply: AgentChatReply; usage: Json }>,
  includeUsage: boolean,
  cancel: CancelController,
): AsyncIterable<Json[]> {
  const delta = (content: string): Json => ({
    ...base,
    choices: [{ index: 0, delta: { content }, finish_reason: null }],
  });
  let started = false;
  const head = (): Json[] => {
    if (started) return [];
    started = true;
    return [{ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }];
  };
  let done = false;
  try {
    for (;;) {
      const pieces = text.take();
      if (pieces.length > 0) yield [...head(), ...pieces.map(delta)];
      else if (text.isClosed) break;
      else await text.ready();
    }
    const { reply, usage } = await finished;
    done = true;
    const rest = reply.content.slice(text.text.length);
    const chunks = [...head(), ...(rest.match(/[^\n]*\n?/g)?.filter(Boolean) ?? []).map(delta)];
    chunks.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    if (includeUsage) chunks.push({ ...base, choices: [], usage });
    yield chunks;
  } finally {
    if (!done) cancel.abort();
  }
}
