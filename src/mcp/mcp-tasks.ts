/**
 * Long tools as tasks, in the 2026-07-28 era's tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663). A
 * client that declares the extension in its request's capabilities and calls a long tool (a video, audio or
 * document extraction, `execute_agent`, `run_skill`) gets a task handle at once (`resultType: "task"`) instead of
 * waiting; it polls `tasks/get` until the task is `completed` (the tool's result inline, as the waiting call would
 * have returned it) and may `tasks/cancel` it.
 *
 * The task is not a new record: it is the prediction or execution Prism already stores (the call runs as its
 * `batch: true` form, on the job queue), and the task id names it (`prediction:<id>`, `execution:<id>`). So
 * `tasks/get` works from any replica and after a restart, reads go through the same services (a task of another
 * organisation is not found), and `get_prediction` / `get_execution` read the same runs. Clients that do not
 * declare the extension get the waiting call, as before. 2025-11-25 clients that ask for a task (`params.task`)
 * get the same tasks in their revision's words (mcp-legacy-tasks.ts).
 *
 * Cancelling a task cancels its run: an execution, or a prediction (a queued one ends at once, a running one at
 * its next page or frame; predictions/prediction-cancel.ts); a run going on another replica hears it over the
 * signal bus (with Redis). The record ends `failed` (the spec's prediction and execution statuses have no
 * `cancelled`) saying it was cancelled, billed nothing for work not done; its task reads `cancelled`.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../domain/account';
import type { ExecutionsService } from '../services/executions/executions.types';
import { CANCELLED_MESSAGE } from '../services/predictions/prediction-run';
import type { PredictionsService } from '../services/predictions/predictions.types';
import type { ToolExtra } from './mcp-tool';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The long tools, and the record each one's task is. */
const DEFERRABLE: Readonly<Record<string, TaskKind>> = {
  extract_video: 'prediction',
  extract_audio: 'prediction',
  extract_document: 'prediction',
  execute_agent: 'execution',
  run_skill: 'execution',
};
export type TaskKind = 'prediction' | 'execution';

/** The tool that reads each kind back, whose result a completed task carries. */
const READER: Readonly<Record<TaskKind, string>> = { prediction: 'get_prediction', execution: 'get_execution' };

/** How often a client should poll, and how long a task stays readable (the records are kept; a floor, not a cap). */
export const POLL_INTERVAL_MS = 1000;
export const TASK_TTL_MS = 7 * 24 * 3600 * 1000;

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export interface TaskState {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
}

/** The messages of records that were cancelled (their tasks are `cancelled`, not `completed`). */
const CANCELLED_MESSAGES = [
  CANCELLED_MESSAGE,
  'The run was cancelled.',
  'The run was cancelled while it waited for a person.',
];

/** A `tasks/get` answer: the state, and the tool's result once completed. */
export interface DetailedTask extends TaskState {
  result?: CallToolResult;
}

export interface CallerTasks {
  /** Whether a call of `name` becomes a task for a client that declared the extension. */
  defers(name: string): boolean;
  /** Starts the call as its record (batch) and answers the task handle, or the tool's own error. */
  start(name: string, args: unknown, extra: ToolExtra): Promise<CallToolResult | (TaskState & { resultType: 'task' })>;
  /** @throws TaskNotFound for an id that is not one of the caller's records. */
  get(taskId: string, extra: ToolExtra): Promise<DetailedTask>;
  /** @throws TaskNotFound, or TaskNotCancellable for a run that already ended (or cannot be stopped). */
  cancel(taskId: string): Promise<void>;
}

/** A task id that names no record the caller can read (the spec's -32602). */
export class TaskNotFound extends Error {
  constructor(readonly taskId: string) {
    super(`Task not found: ${taskId.slice(0, 200)}`);
  }
}

/** A task whose run already ended, or cannot be stopped now: the service's words. */
export class TaskNotCancellable extends Error {
  constructor(
    readonly taskId: string,
    message: string,
  ) {
    super(message);
  }
}

/** Reading a task's record failed for another reason than its absence (a rate limit, say): the tool's error text. */
export class TaskReadFailed extends Error {}

/** The tool call the caller's server answers with (the shared dispatcher of mcp-server.ts). */
type CallTool = (name: string, args: unknown, extra: ToolExtra) => Promise<CallToolResult>;

/** The services a task's cancel goes to. */
export interface TaskRuns {
  executions: Pick<ExecutionsService, 'cancel'>;
  predictions: Pick<PredictionsService, 'cancel'>;
}

export function callerTasks(callTool: CallTool, runs: TaskRuns, principal: Principal): CallerTasks {
  const read = async (taskId: string, extra: ToolExtra): Promise<{ kind: TaskKind; result: CallToolResult }> => {
    const parsed = parseTaskId(taskId);
    if (!parsed) throw new TaskNotFound(taskId);
    const result = await callTool(READER[parsed.kind], { id: parsed.id }, extra);
    if (result.isError) {
      if (/_not_found/.test(JSON.stringify(result.content))) throw new TaskNotFound(taskId);
      throw new TaskReadFailed(textOf(result));
    }
    return { kind: parsed.kind, result };
  };
  return {
    defers: (name) => name in DEFERRABLE,
    async start(name, args, extra) {
      const kind = DEFERRABLE[name];
      if (!kind) return callTool(name, args, extra);
      const queued = await callTool(name, { ...(args as Record<string, unknown>), batch: true }, extra);
      if (queued.isError) return queued;
      return { resultType: 'task', ...stateOf(kind, queued.structuredContent as unknown as RunRecord) };
    },
    async get(taskId, extra) {
      const { kind, result } = await read(taskId, extra);
      const state = stateOf(kind, result.structuredContent as unknown as RunRecord);
      return state.status === 'working' || state.status === 'input_required' ? state : { ...state, result };
    },
    async cancel(taskId) {
      const parsed = parseTaskId(taskId);
      if (!parsed) throw new TaskNotFound(taskId);
      try {
        if (parsed.kind === 'prediction') await runs.predictions.cancel(principal, parsed.id);
        else await runs.executions.cancel(principal, parsed.id);
      } catch (error) {
        const status = (error as { status?: number }).status;
        if (status === 404) throw new TaskNotFound(taskId);
        // Already finished: nothing to cancel, said as the REST cancel says it.
        if (status === 409) throw new TaskNotCancellable(taskId, (error as Error).message);
        throw error;
      }
    },
  };
}

/** The fields of a prediction or execution body a task state is made of. */
interface RunRecord {
  id: string;
  status: string;
  created_at?: string | number;
  completed_at?: string | null;
  error?: unknown;
  pause?: { question?: unknown } | null;
  usage?: { message?: string | null } | null;
}

/** A record's task state (both eras; the 2025-11-25 era renames two fields, mcp-legacy-tasks.ts). */
export function stateOf(kind: TaskKind, record: RunRecord): TaskState {
  const createdAt = isoOf(record.created_at);
  const status = statusOf(record);
  const message = status === 'input_required' ? pauseMessage(record) : undefined;
  return {
    taskId: `${kind}:${record.id}`,
    status,
    ...(message ? { statusMessage: message } : {}),
    createdAt,
    lastUpdatedAt: record.completed_at ?? new Date().toISOString(),
    ttlMs: TASK_TTL_MS,
    pollIntervalMs: POLL_INTERVAL_MS,
  };
}

/**
 * A finished run is a `completed` task whatever its outcome: its result is the tool's (a failed prediction or
 * execution is a result saying so, as the waiting call returns it); `failed` is kept for protocol errors. A paused
 * execution waits for a person; a run ended by a cancel is `cancelled` (its result says so too).
 */
function statusOf({ status, usage }: RunRecord): TaskStatus {
  const message = usage?.message ?? '';
  // A run's message may carry a note after its own words (the deterministic planner's, say).
  if (status === 'failed' && CANCELLED_MESSAGES.some((m) => message.startsWith(m))) return 'cancelled';
  if (status === 'completed' || status === 'failed') return 'completed';
  if (status === 'paused') return 'input_required';
  return 'working';
}

function pauseMessage(record: RunRecord): string {
  const question = record.pause?.question;
  return typeof question === 'string' && question
    ? question.slice(0, 500)
    : 'Waiting for a person: approve, reject or edit the paused call (resume_execution).';
}

function isoOf(value: string | number | undefined): string {
  if (typeof value === 'number') return new Date(value * 1000).toISOString();
  return value ?? new Date().toISOString();
}

/** `prediction:<id>` / `execution:<id>` as its kind and record id; null for anything else. */
export function parseTaskId(taskId: string): { kind: TaskKind; id: string } | null {
  const found = /^(prediction|execution):([A-Za-z0-9_-]{1,200})$/.exec(taskId);
  return found ? { kind: found[1] as TaskKind, id: found[2] ?? '' } : null;
}

function textOf(result: CallToolResult): string {
  const [block] = result.content;
  return block?.type === 'text' ? block.text : 'tool error';
}
