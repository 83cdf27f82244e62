/**
 * One chat turn of an agent model (`prism-orion-1`/`-2` and their variants) on the agent runtime: the thread's
 * stored history and the caller's new messages become a chat task (earlier messages as the conversation, the last
 * user message as the request, every attachment of the thread as a named input the tools read), the skills named
 * in the call's top-level `skills` key are resolved as for executions, and the runtime's loop runs with every tool
 * under the agent limits. The gateway bills the turn like any chat completion and then commits it, so a turn that
 * failed or could not be paid for leaves the thread as it was. A streamed turn (`run` with `onText`) stores exactly
 * the text the client was sent, so the stream and the history agree byte for byte.
 *
 * A turn may pause for the person (a tool in the call's `require_approval`, or a skill-graph state that asks a
 * question): the reply is then the question, the run's checkpoint is kept, and the assistant message records the
 * pause (`meta.pause`). The next turn's user message is the answer ("yes", "no, because…", other arguments as a JSON
 * object, or the answer to the question): the paused run continues from its checkpoint with it.
 *
 * A second message to a chat whose turn is still running follows the call's `multitask_strategy` (chat-turn-lanes.ts):
 * enqueue (default), reject, interrupt (the running turn stops; its user message stays in the thread) or rollback
 * (it stops and leaves nothing); the stopped turn's caller gets 409 `turn_interrupted`.
 *
 * Which of the caller's messages are new: on a new thread, all of them; on a stored one, those after the last
 * assistant message of the request (clients that resend the whole conversation and clients that send only the new
 * message both work).
 */
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../domain/account';
import type { ChatAttachment, ChatRole } from '../../domain/chat';
import { BadRequestError } from '../../domain/errors';
import type { ExecutionInput } from '../../domain/execution';
import type { ParsedSkill, SkillResolver } from '../../domain/skill';
import type { Logger } from '../../lib/logger';
import { RunFailure, type AgentRuntime, type RunResult, type RunSpec } from '../../agents/agent-runtime';
import { DETERMINISTIC_MESSAGE } from '../../agents/planners/deterministic.planner';
import type { ChatTurn, PauseDecision, PlannerInput, PlannerTask, RunPause, ToolContext } from '../../agents/sdk';
import type { ToolRegistry } from '../../agents/tool-registry';
import type { ArtifactsService } from '../artifacts.service';
import type { FilesService } from '../files.service';
import type { ToolContextFactory } from '../tool-context';
import { normaliseInputsIn } from '../executions/execution-inputs';
import type { PlannerDirectory, ResolvedPlanner } from '../executions/executions.types';
import { elementsOf, plannerTokens } from '../executions/execution-usage';
import { resolveSkills, skillRefsOf, type SkillEntryWire } from '../executions/execution-skills';
import type { ChatsService, OpenedThread, TurnMessage } from './chats.service';
import {
  createChatTurnLanes,
  turnStoppedError,
  type ChatMultitaskStrategy,
  type ChatTurnLanes,
  type TurnSlot,
} from './chat-turn-lanes';

export interface AgentChatDeps {
  chats: ChatsService;
  runtime: AgentRuntime;
  tools: ToolRegistry;
  toolContext: ToolContextFactory;
  planners: PlannerDirectory;
  skills: SkillResolver | null;
  files: Pick<FilesService, 'get'>;
  artifacts: Pick<ArtifactsService, 'write' | 'read'>;
  limits: { maxSteps: number; deadlineMs: number };
  logger: Logger;
}

/** One entry of a run's trace (a planner round or a tool call). */
type LoopTraceEntry = RunFailure['trace'][number];

/** A chat message as clients send it (OpenAI chat shape). */
export interface AgentChatMessage {
  role: string;
  content?: unknown;
}

export interface AgentChatRequest {
  /** The agent model as requested, variant included (`prism-orion-1:auto`). */
  model: string;
  messages: readonly AgentChatMessage[];
  sessionId: string | null;
  makePublic?: boolean | undefined;
  sessionToken?: string | null | undefined;
  skills: SkillEntryWire[];
  /** From `response_format` (json_schema); null for a free reply. */
  responseSchema: Record<string, unknown> | null;
  /**
   * `response_format` asked for JSON (`json_object` or `json_schema`): without a schema of its own, a skill's
   * schema then shapes the reply. Otherwise the reply is text and skills' schemas only guide the planner.
   */
  jsonReply: boolean;
  /** Tools whose calls wait for the person's approval (the body's `require_approval`); empty for none. */
  requireApproval?: string[];
  /** What this message does when the chat has a turn in progress (default `enqueue`). */
  multitaskStrategy?: ChatMultitaskStrategy | undefined;
}

/** A turn that stopped to ask the person: the run to continue and what it asked (kept in `meta.pause`). */
export interface ChatPause {
  run: string;
  /** Steps of the run so far, billed with the turn that asked (the answering turn bills only what follows). */
  steps?: number;
  kind: RunPause['kind'];
  tool: string | null;
  arguments: Record<string, unknown> | null;
  question: string | null;
}

export interface AgentChatReply {
  /** Set when the turn asks the person before going on (the content is the question). */
  pause?: ChatPause;
  content: string;
  /** Planner tokens (a language model's own counts; estimated from the words for the deterministic planner). */
  promptTokens: number;
  completionTokens: number;
  /** Of the completion tokens, those spent on `reasoning_effort` (set by the gateway). */
  reasoningTokens?: number;
  steps: number;
  elementsProcessed: number;
  elementType: string | null;
  /** What the caller should know about how the turn was answered (the deterministic planner's limits), or null. */
  message: string | null;
  /** Which planner answered: the catalogue model id, or `deterministic-planner`. */
  plannedBy: string;
  /** A language-model run that ended without an answer: the reason (the gateway reports it as an error). */
  failure: string | null;
  /**
   * Which limit ended a failed run after its planner used tokens: `steps` (PRISM_AGENT_MAX_STEPS planning rounds) or
   * `spending` (the turn's budget would not cover another round). The gateway bills such a turn for what it used,
   * up to its hold; null otherwise.
   */
  limit: 'steps' | 'spending' | null;
}

/** What a turn may spend: the gateway's hold, asked before each planner round. */
export interface TurnBudget {
  /** Whether the hold covers a turn that has used these planner tokens. */
  covers(inputTokens: number, outputTokens: number): boolean;
  /** The amount held, in dollars (for the message). */
  dollars: number;
}

export interface AgentChatTurn {
  sessionId: string;
  /**
   * Runs the turn; nothing is stored yet. With `onText`, a reply that is not JSON is passed on as the planner writes
   * it (the runtime's reply gate decides which text); the reply's `content` is then exactly the text passed on, or
   * (when nothing was, e.g. the deterministic planner answered whole) the whole answer.
   */
  run(signal: ToolContext['signal'], onText?: (delta: string) => void, budget?: TurnBudget): Promise<AgentChatReply>;
  /** Stores the caller's new messages and the reply (with its billed usage) in the thread. */
  commit(reply: AgentChatReply, usage: Record<string, unknown>): Promise<void>;
  /** Gives the chat to its next turn (after commit, or when the turn failed or was never run); idempotent. */
  close(): void;
}

export interface AgentChat {
  /**
   * Opens the thread of the call (checking the caller may continue it) and checks the model and the messages.
   * @throws NotFoundError `chat_not_found`, PermissionDeniedError, 404 `model_not_found`, 400 `missing_input`.
   */
  open(principal: Principal, request: AgentChatRequest): Promise<AgentChatTurn>;
}

const ROLES: Record<string, ChatRole | undefined> = {
  system: 'system',
  developer: 'system',
  user: 'user',
  assistant: 'assistant',
};

const FAMILY_TYPE: Record<string, ChatAttachment['type']> = {
  image: 'image',
  document: 'document',
  video: 'video',
  audio: 'audio',
};

/** About four characters per token, as the gateway estimates when nothing counted them. */
const estimateTokens = (text: string): number => (text.length === 0 ? 0 : Math.ceil(text.length / 4));

export function createAgentChat(deps: AgentChatDeps): AgentChat {
  const lanes = createChatTurnLanes();
  return { open: (principal, request) => openTurn(deps, lanes, principal, request) };
}

/** A caller's message this turn adds, with its index in the request (for error params). */
interface FreshMessage {
  message: AgentChatMessage;
  index: number;
}

/** What opening a turn found out, which its run and its commit read. */
interface OpenTurn {
  deps: AgentChatDeps;
  principal: Principal;
  request: AgentChatRequest;
  opened: OpenedThread;
  slot: TurnSlot;
  fresh: FreshMessage[];
  resolved: ResolvedPlanner;
  deterministic: boolean;
  /**
   * What the thread records as having planned the turn: the model asked for, or the deterministic planner that
   * stood in for it (on every path, so streamed and non-streamed turns of one thread say the same).
   */
  plannerName: string;
  /** The thread's last turn asked the person something: this turn's message is the answer. */
  asked: ChatPause | null;
  answer: AgentChatMessage | undefined;
  /** The caller's new messages as the thread stores them (set by the run). */
  stored: TurnMessage[];
}

/** One run of a turn on the runtime. */
interface TurnRun {
  turn: OpenTurn;
  /** The runtime's execution id: the paused run's when this run continues it. */
  id: string;
  /** Stops the run: the caller left, a newer message stopped the turn, or the budget would not cover a round. */
  stop: AbortController;
  /** Planner tokens counted by the budget check so far. */
  spent: { input: number; output: number };
  /** The pause this run continues (its checkpoint exists); null for a new task. */
  resuming: ChatPause | null;
  task: PlannerTask;
}

/**
 * Opens the thread of the call (checking the caller may continue it), takes the chat's lane and checks the model
 * and the messages; see {@link AgentChat.open}.
 */
export async function openTurn(
  deps: AgentChatDeps,
  lanes: ChatTurnLanes,
  principal: Principal,
  request: AgentChatRequest,
): Promise<AgentChatTurn> {
  const resolved = deps.planners.resolve(request.model);
  if (request.requireApproval?.length) deps.tools.select(request.requireApproval, 'require_approval');
  const strategy = request.multitaskStrategy ?? 'enqueue';
  // A named chat's lane is taken before the thread is read: an enqueued turn reads what the turn before it left.
  const named = request.sessionId ? await lanes.enter(request.sessionId, strategy) : null;
  const opened = await deps.chats
    .open(principal, {
      sessionId: request.sessionId,
      makePublic: request.makePublic,
      sessionToken: request.sessionToken,
    })
    .catch((error: unknown) => {
      named?.release();
      throw error;
    });
  const slot: TurnSlot = named ?? (await lanes.enter(opened.sessionId, strategy));
  const fresh = newMessages(request.messages, opened.existing !== null);
  if (!fresh.some(({ message }) => ROLES[message.role] === 'user')) {
    slot.release();
    throw new BadRequestError('The chat turn has no new user message.', 'missing_input', 'messages');
  }
  const deterministic = resolved.planner.kind === 'deterministic';
  const turn: OpenTurn = {
    deps,
    principal,
    request,
    opened,
    slot,
    fresh,
    resolved,
    deterministic,
    plannerName: deterministic ? resolved.planner.servedBy : resolved.modelId,
    asked: pendingPause(opened),
    answer: fresh.findLast(({ message }) => ROLES[message.role] === 'user')?.message,
    stored: [],
  };
  return {
    sessionId: opened.sessionId,
    run: (outer, onText, budget) => runTurn(turn, outer, onText, budget),
    commit: (reply, usage) => commitTurn(turn, reply, usage),
    close: () => slot.release(),
  };
}

/** Runs the turn; nothing is stored yet (see {@link AgentChatTurn.run}). */
export async function runTurn(
  turn: OpenTurn,
  outer: ToolContext['signal'],
  onText?: (delta: string) => void,
  budget?: TurnBudget,
): Promise<AgentChatReply> {
  const { deps, principal, request, opened } = turn;
  // The run stops when the caller leaves, or (with a budget) before a planner round its hold cannot pay for.
  const stop = new AbortController();
  const onOuter = (): void => stop.abort();
  if (outer.aborted) stop.abort();
  else outer.addEventListener('abort', onOuter, { once: true });
  const signal: ToolContext['signal'] = stop.signal;
  // A newer message on the chat (interrupt, rollback) stops the run as the caller leaving would.
  turn.slot.onStop(() => stop.abort());
  // A pause whose checkpoint is gone (the thread went on elsewhere) is not resumed: the message is a new task.
  const asked = turn.asked;
  const resuming = asked !== null && (await deps.runtime.hasCheckpoint(asked.run)) ? asked : null;
  const turnId = resuming ? resuming.run : `chat-${randomUUID()}`;
  let keep = false;
  const skills = await resolveSkills(
    deps.skills,
    deps.artifacts,
    principal,
    await skillRefsOf(deps.artifacts, principal, turnId, request.skills),
  );
  const ctxFor = (s: ToolContext['signal']): ToolContext =>
    deps.toolContext.create(principal, { sessionId: opened.sessionId, signal: s, skills });
  const familyOf = async (source: string): Promise<string> => (await ctxFor(signal).media.load(source)).family;
  turn.stored = await storedForm(deps, principal, opened.sessionId, turn.fresh, familyOf);
  const task = chatTask(opened, turn.stored, request, skills);
  const run: TurnRun = { turn, id: turnId, stop, spent: { input: 0, output: 0 }, resuming, task };
  // A JSON reply must pass the schema check before it is shown, so it is never streamed.
  const streamText = onText && !request.jsonReply && task.responseSchema === null ? onText : null;
  try {
    const result = await deps.runtime.run(runSpecOf(run, skills, ctxFor, streamText, budget));
    if (result.pause) {
      // The checkpoint stays for the next turn, whose message answers the question asked here.
      keep = true;
      const pause = { ...chatPauseOf(turnId, result.pause), steps: result.trace.length };
      return { ...replyOf(run, askText(pause), result.trace, null, turn.plannerName, null), pause };
    }
    return answerOf(run, result);
  } catch (error) {
    return await failureReply(run, error, outer);
  } finally {
    outer.removeEventListener('abort', onOuter);
    if (!keep) await deps.runtime.discard(turnId).catch(() => undefined);
  }
}

/** What the runtime runs for a turn: the task, skills, tools and limits, and a continued pause's decision. */
function runSpecOf(
  run: TurnRun,
  skills: ParsedSkill[],
  context: (signal: ToolContext['signal']) => ToolContext,
  streamText: ((delta: string) => void) | null,
  budget: TurnBudget | undefined,
): RunSpec {
  const { deps, request, resolved, answer } = run.turn;
  const { resuming } = run;
  return {
    executionId: run.id,
    task: run.task,
    skills: skills.map((s) => ({
      name: s.record.name,
      description: s.record.description,
      instructions: s.instructions,
    })),
    tools: deps.tools.select(null),
    planner: resolved.planner,
    context,
    maxSteps: deps.limits.maxSteps,
    deadlineMs: deps.limits.deadlineMs,
    signal: run.stop.signal,
    resume: resuming !== null,
    approvals: {
      // The call the person answers still waits for approval, whatever this turn's request asks.
      tools: [...(request.requireApproval ?? []), ...(resuming?.tool ? [resuming.tool] : [])],
      questions: skills.find((s) => (s.config?.graphStates.length ?? 0) > 0)?.config?.pauses ?? {},
    },
    ...(resuming ? { decision: decisionFromWords(textOf(answer?.content), resuming) } : {}),
    ...(streamText ? { onText: streamText } : {}),
    ...(budget ? { onTrace: (entries: LoopTraceEntry[]) => checkBudget(run, entries, budget) } : {}),
  };
}

/** The reply of a run that answered: the text the client read (or the whole answer) and what to know of it. */
function answerOf(run: TurnRun, result: RunResult): AgentChatReply {
  const whole = run.task.responseSchema || result.final === null ? JSON.stringify(result.response) : result.final;
  // What the client read is what the thread keeps (text an earlier round showed included).
  const content = result.streamed !== '' ? result.streamed : whole;
  const notes: string[] = [];
  if (run.turn.deterministic) notes.push(DETERMINISTIC_MESSAGE);
  if (result.schemaErrors.length > 0) {
    notes.push(`The reply does not fully match the schema: ${result.schemaErrors.join('; ')}.`);
  }
  return replyOf(run, content, result.trace, notes.join(' ') || null, run.turn.plannerName, null);
}

/**
 * A run that threw. A turn a newer message stopped is 409 `turn_interrupted`; a run that failed is a reply (the
 * deterministic planner's refusal, or a failure the gateway reports, with the limit that ended it).
 */
async function failureReply(run: TurnRun, error: unknown, outer: ToolContext['signal']): Promise<AgentChatReply> {
  const { deps, request, opened, slot, stored } = run.turn;
  if (slot.stoppedBy) {
    // Interrupted: the caller's message stays in the thread (the next turn reads it); rolled back: nothing.
    if (slot.stoppedBy === 'interrupt' && stored.length > 0) {
      await deps.chats.append(
        opened,
        request.model,
        stored.map((m) => ({ ...m, meta: { ...(m.meta ?? {}), interrupted: true } })),
      );
    }
    throw turnStoppedError(opened.sessionId, slot.stoppedBy);
  }
  if (!(error instanceof RunFailure)) throw error;
  // The deterministic planner's refusals are answers: they say what it cannot do and what to configure.
  if (run.turn.deterministic) {
    const text = `No upstream language model is configured for ${request.model}. ${error.message}`;
    return replyOf(run, text, error.trace, DETERMINISTIC_MESSAGE, null, null);
  }
  const rounds = error.trace.filter((e) => e.kind === 'plan').length;
  const limit =
    run.stop.signal.reason instanceof RunFailure && !outer.aborted
      ? 'spending'
      : rounds >= deps.limits.maxSteps
        ? 'steps'
        : null;
  return replyOf(run, '', error.trace, null, run.turn.plannerName, error.message, limit);
}

/**
 * After each planner round that called tools: another round follows, assumed to cost what this one did (the
 * transcript only grows). When the hold would not cover it, the turn stops here, before the tools and the next
 * round. A round that answers is never thrown away for its cost: the gateway bills it, never more than the hold.
 */
function checkBudget(run: TurnRun, entries: LoopTraceEntry[], limit: TurnBudget): void {
  const { stop, spent } = run;
  for (const entry of entries) {
    if (entry.kind !== 'plan' || stop.signal.aborted) continue;
    spent.input += entry.inputTokens;
    spent.output += entry.outputTokens;
    if (entry.output !== null) continue;
    if (limit.covers(spent.input + entry.inputTokens, spent.output + entry.outputTokens)) continue;
    stop.abort(
      new RunFailure(
        `The turn reached its spending limit: another planner round would cost more than the ` +
          `$${limit.dollars.toFixed(4)} held for it. It is billed what its planner used, at most that amount; ` +
          'add credits or raise max_tokens (the hold grows with it) to let a turn plan longer.',
        [],
      ),
    );
  }
}

/** The turn's reply with its usage: planner tokens (estimated for the deterministic planner), steps, elements. */
function replyOf(
  run: TurnRun,
  text: string,
  trace: RunFailure['trace'],
  message: string | null,
  plannedBy: string | null,
  failure: string | null,
  limit: AgentChatReply['limit'] = null,
): AgentChatReply {
  const { deterministic, resolved } = run.turn;
  const t = run.task;
  // A resumed run's trace starts with the steps the asking turn was billed for: this turn counts the rest.
  const own = trace.slice(run.resuming?.steps ?? 0);
  const steps = own.map((entry, index) => ({ ...entry, index }));
  const elements = elementsOf(steps);
  const used = plannerTokens(own);
  // A run stopped inside a round can have a checkpoint that lags the rounds the budget already counted.
  const counted = {
    prompt: Math.max(used.inputTokens, run.spent.input),
    completion: Math.max(used.outputTokens, run.spent.output),
  };
  const words = [...(t.chat?.history ?? []).map((h) => h.content), t.prompt ?? ''].join('\n');
  return {
    content: text,
    promptTokens: deterministic ? estimateTokens(words) : counted.prompt,
    completionTokens: deterministic ? estimateTokens(text) : counted.completion,
    steps: steps.length,
    elementsProcessed: elements.elements_processed,
    elementType: elements.element_type,
    message,
    plannedBy: plannedBy ?? resolved.planner.servedBy,
    failure,
    limit,
  };
}

/** Stores the caller's new messages and the reply (with its billed usage) in the thread. */
export async function commitTurn(turn: OpenTurn, reply: AgentChatReply, usage: Record<string, unknown>): Promise<void> {
  const { request } = turn;
  await turn.deps.chats.append(turn.opened, request.model, [
    ...turn.stored,
    {
      role: 'assistant',
      content: reply.content,
      attachments: [],
      meta: {
        model: request.model,
        planned_by: reply.plannedBy,
        usage,
        ...(reply.pause ? { pause: reply.pause } : {}),
      },
    },
  ]);
}

/** The pause the thread's last assistant message asked about, if it is the thread's last message. */
function pendingPause(opened: OpenedThread): ChatPause | null {
  const last = opened.history.at(-1);
  const pause = last?.role === 'assistant' ? (last.meta?.pause as ChatPause | undefined) : undefined;
  return pause && typeof pause.run === 'string' ? pause : null;
}

function chatPauseOf(run: string, pause: RunPause): ChatPause {
  return pause.kind === 'tool_approval'
    ? { run, kind: pause.kind, tool: pause.toolCall.name, arguments: pause.toolCall.arguments, question: null }
    : { run, kind: pause.kind, tool: null, arguments: null, question: pause.question };
}

/** What the turn asks the person. */
function askText(pause: ChatPause): string {
  if (pause.kind === 'question') return pause.question ?? '';
  return (
    `Before I go on I need your approval to call ${pause.tool ?? 'a tool'} with ${JSON.stringify(pause.arguments)}. ` +
    'Reply "yes" to approve, "no" with a reason to refuse, or send the arguments to use instead as a JSON object.'
  );
}

const APPROVE = /^\s*(yes|y|ok|okay|approve[ds]?|go ahead|sure|do it)\b/i;

/**
 * The person's reply as a decision: an answer to a question; for a tool call, yes-words approve, a JSON object
 * edits the arguments, and anything else refuses it with the reply as the reason the planner reads.
 */
export function decisionFromWords(text: string, pause: ChatPause): PauseDecision {
  if (pause.kind === 'question') return { action: 'answer', text };
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    try {
      const parsed = JSON.parse(trimmed) as unknown;
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
        return { action: 'edit', arguments: parsed as Record<string, unknown> };
      }
    } catch {
      // Not JSON after all: words.
    }
  }
  if (APPROVE.test(trimmed)) return { action: 'approve' };
  return { action: 'reject', reason: trimmed || 'the person said no' };
}

/** The text of a chat message's content (string, or the text parts). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as unknown[])
    .map((part) =>
      part && typeof part === 'object' && typeof (part as Part).text === 'string' ? (part as Part).text : '',
    )
    .join('\n');
}

/** The caller's messages this turn adds, with their index in the request (for error params). */
function newMessages(messages: readonly AgentChatMessage[], continuing: boolean): FreshMessage[] {
  const indexed = messages.map((message, index) => ({ message, index }));
  const kept = indexed.filter(({ message }) => ROLES[message.role] !== undefined);
  if (!continuing) return kept;
  const lastAssistant = kept.findLastIndex(({ message }) => message.role === 'assistant');
  return kept.slice(lastAssistant + 1);
}

type Part = Record<string, unknown>;

/** A chat content part in the form the execution input normaliser reads (null: not media). */
function asInputPart(part: Part): Part | null {
  switch (part.type) {
    case 'image_url':
    case 'video_url':
    case 'audio_url':
    case 'document_url':
    case 'file_url':
      return part;
    case 'input_image':
      return { type: 'image_url', image_url: part.image_url };
    case 'input_file':
      return part;
    case 'file': {
      const file = (part.file as Part | undefined) ?? {};
      if (typeof file.file_id === 'string') return { type: 'input_file', file_id: file.file_id };
      const url = typeof file.file_data === 'string' ? file.file_data : file.file_url;
      return { type: 'file_url', file_url: { url } };
    }
    case 'input_audio': {
      const audio = (part.input_audio as Part | undefined) ?? {};
      const data = typeof audio.data === 'string' ? audio.data : '';
      const format = typeof audio.format === 'string' ? audio.format : 'wav';
      const url = data.startsWith('data:') ? data : `data:audio/${format};base64,${data}`;
      return { type: 'audio_url', audio_url: { url } };
    }
    default:
      return null;
  }
}

/** The new messages as stored: their text, and their media kept as references under the session. */
async function storedForm(
  deps: AgentChatDeps,
  principal: Principal,
  sessionId: string,
  fresh: FreshMessage[],
  familyOf: (source: string) => Promise<string>,
): Promise<TurnMessage[]> {
  const out: TurnMessage[] = [];
  for (const { message, index } of fresh) {
    const role = ROLES[message.role] ?? 'user';
    const texts: string[] = [];
    const media: Record<string, unknown> = {};
    if (typeof message.content === 'string') texts.push(message.content);
    else if (Array.isArray(message.content)) {
      (message.content as unknown[]).forEach((raw, p) => {
        if (!raw || typeof raw !== 'object') return;
        const part = raw as Part;
        if (typeof part.text === 'string') texts.push(part.text);
        const input = asInputPart(part);
        if (input) media[String(p)] = input;
      });
    }
    const normalised = await normaliseInputsIn(deps, principal, { sessionId }, media, `messages.${index}.content`);
    const attachments: ChatAttachment[] = [];
    for (const attachment of Object.values(normalised).flatMap(attachmentsOf)) {
      // A file id or extension-less URL says nothing of its kind: the bytes do (read once, when stored).
      const type = attachment.type === 'file' ? FAMILY_TYPE[await familyOf(attachment.source)] : attachment.type;
      attachments.push({ type: type ?? 'file', source: attachment.source });
    }
    out.push({ role, content: texts.join('\n'), attachments });
  }
  return out;
}

function attachmentsOf(input: ExecutionInput): ChatAttachment[] {
  if (input.kind === 'list') return input.items.flatMap(attachmentsOf);
  if (input.kind !== 'media') return [];
  return [{ type: FAMILY_TYPE[input.family] ?? 'file', source: input.source }];
}

/**
 * The task of the turn: the last user message is the request, everything before it the conversation, and every
 * attachment of the thread an input named after the message that carried it (`message3.image1`).
 */
function chatTask(
  opened: OpenedThread,
  fresh: TurnMessage[],
  request: Pick<AgentChatRequest, 'responseSchema' | 'jsonReply'>,
  skills: Awaited<ReturnType<typeof resolveSkills>>,
): PlannerTask {
  const all: TurnMessage[] = [...opened.history, ...fresh];
  const inputs: PlannerInput[] = [];
  const described: ChatTurn[] = [];
  for (const [i, message] of all.entries()) {
    const slots: string[] = [];
    for (const [j, attachment] of message.attachments.entries()) {
      const family = attachment.type === 'file' ? 'unknown' : attachment.type;
      const slot = `message${i}.${attachment.type}${j}`;
      inputs.push({ slot, kind: 'media', family, source: attachment.source });
      slots.push(`[attached ${attachment.type}: input ${slot}]`);
    }
    described.push({ role: message.role, content: [message.content, ...slots].filter(Boolean).join(' ') });
  }
  const lastUser = described.findLastIndex((m) => m.role === 'user');
  const skillSchema = skills.find((s) => s.schema)?.schema ?? null;
  const goals = skills.find((s) => (s.config?.graphStates.length ?? 0) > 0)?.config?.graphStates ?? [];
  return {
    prompt: described[lastUser]?.content ?? null,
    inputs,
    responseSchema: request.responseSchema ?? (request.jsonReply ? skillSchema : null),
    goals,
    chat: { history: described.filter((_, i) => i !== lastUser) },
  };
}
