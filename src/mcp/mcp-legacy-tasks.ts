/**
 * Long tools as tasks for 2025-11-25 clients: the revision's experimental tasks. A client that calls
 * `extract_video`, `extract_audio`, `extract_document`, `execute_agent` or `run_skill` with `params.task` gets a
 * `CreateTaskResult` at once; it polls `tasks/get`, fetches the tool's result with `tasks/result` (which waits for
 * the run, sending `notifications/tasks/status` on its stream when the status changes), pages `tasks/list` and may
 * `tasks/cancel`. The tools say so in the 2025 tool list (`execution.taskSupport: "optional"`), as the revision asks.
 *
 * The v1 SDK serves `tasks/get`, `tasks/list` and `tasks/cancel` itself over a pluggable `TaskStore`; Prism's store
 * is not a store of its own but a view of the predictions and executions it already keeps (the same records as the
 * 2026-07-28 tasks extension, mcp-tasks.ts, with the same ids): a task started through one replica is read through
 * another, and after a restart, and a task of another organisation is not found. Cancelling a task cancels its run.
 * Status reads go to the services directly (not through `get_prediction`, so a `tasks/result` waiting for a long
 * video does not spend the caller's tool-call budget); the result itself is the reading tool's, as the waiting call
 * would have returned it.
 *
 * Neither SDK has the legacy `tasks/update` (the v2 one names it only to set the `Mcp-Name` header of the
 * 2026-07-28 extension), so it is not served; a paused run is `input_required` and is answered by `resume_execution`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { isTerminal } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  ErrorCode,
  GetTaskPayloadRequestSchema,
  McpError,
  RELATED_TASK_META_KEY,
  type CallToolResult,
  type CreateTaskResult,
  type ListToolsResult,
  type Result,
  type ServerCapabilities,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../domain/account';
import type { Execution } from '../domain/execution';
import type { Prediction } from '../domain/prediction';
import type { ExecutionsService } from '../services/executions/executions.types';
import type { PredictionsService } from '../services/predictions/predictions.types';
import { toExecutionWire } from '../wire/agents.schemas';
import { toPredictionWire } from '../wire/predictions.schemas';
import {
  parseTaskId,
  stateOf,
  TaskNotCancellable,
  TaskNotFound,
  TaskReadFailed,
  type CallerTasks,
  type TaskKind,
  type TaskState,
} from './mcp-tasks';
import type { ToolExtra } from './mcp-tool';

/** The server capability: tasks for `tools/call`, listed and cancellable. */
export const LEGACY_TASKS_CAPABILITY: NonNullable<ServerCapabilities['tasks']> = {
  list: {},
  cancel: {},
  requests: { tools: { call: {} } },
};

/** Tasks per `tasks/list` page. */
const PAGE = 50;

/** The records a caller's tasks are read from. */
export interface LegacyTaskRecords {
  predictions: Pick<PredictionsService, 'get' | 'list'>;
  executions: Pick<ExecutionsService, 'get' | 'list'>;
}

/** A state in the revision's words (`ttl`, `pollInterval`). */
function legacyTask(state: TaskState): Task {
  return {
    taskId: state.taskId,
    status: state.status,
    ...(state.statusMessage ? { statusMessage: state.statusMessage } : {}),
    createdAt: state.createdAt,
    lastUpdatedAt: state.lastUpdatedAt,
    ttl: state.ttlMs,
    pollInterval: state.pollIntervalMs,
  };
}

/** A record's task, from its wire body (the body `get_prediction` / `get_execution` answer). */
function taskOf(kind: TaskKind, record: Prediction | Execution): Task {
  const wire = kind === 'prediction' ? toPredictionWire(record as Prediction) : toExecutionWire(record as Execution);
  return legacyTask(stateOf(kind, wire));
}

/** The caller's task `taskId` as it stands; null when it names no record the caller can read. */
async function readTask(records: LegacyTaskRecords, principal: Principal, taskId: string): Promise<Task | null> {
  const parsed = parseTaskId(taskId);
  if (!parsed) return null;
  try {
    const record =
      parsed.kind === 'prediction'
        ? await records.predictions.get(principal, parsed.id)
        : await records.executions.get(principal, parsed.id);
    return taskOf(parsed.kind, record);
  } catch (error) {
    if ((error as { status?: number }).status === 404) return null;
    throw error;
  }
}

/**
 * The caller's predictions and executions, newest first, merged: the cursor says how many of each were listed.
 * @throws for a cursor Prism did not write (the SDK answers -32602).
 */
async function listTasks(
  records: LegacyTaskRecords,
  principal: Principal,
  cursor: string | undefined,
): Promise<{ tasks: Task[]; nextCursor?: string }> {
  const found = /^(\d{1,9})\.(\d{1,9})$/.exec(cursor ?? '0.0');
  if (!found) throw new Error('unknown cursor');
  const skipP = Number(found[1]);
  const skipE = Number(found[2]);
  const [predictions, executions] = await Promise.all([
    records.predictions.list(principal, { skip: skipP, limit: PAGE }),
    records.executions.list(principal, { skip: skipE, limit: PAGE }),
  ]);
  const merged = [
    ...predictions.map((r) => ({ kind: 'prediction' as const, at: r.createdAt.getTime(), record: r })),
    ...executions.map((r) => ({ kind: 'execution' as const, at: r.createdAt.getTime(), record: r })),
  ]
    .sort((x, y) => y.at - x.at)
    .slice(0, PAGE);
  const listedP = merged.filter((m) => m.kind === 'prediction').length;
  const more =
    predictions.length + executions.length > PAGE || predictions.length === PAGE || executions.length === PAGE;
  return {
    tasks: merged.map((m) => taskOf(m.kind, m.record)),
    ...(more ? { nextCursor: `${skipP + listedP}.${skipE + merged.length - listedP}` } : {}),
  };
}

/** A read of the result outside a tool call: nothing to report progress to, nothing to abort. */
const QUIET: ToolExtra = { signal: new AbortController().signal, sendNotification: async () => undefined };

/** The tool's result of a finished task (the reading tool's answer). */
async function resultOf(tasks: CallerTasks, taskId: string, extra: ToolExtra): Promise<CallToolResult> {
  try {
    const task = await tasks.get(taskId, extra);
    if (!task.result) throw new McpError(ErrorCode.InvalidRequest, `Task ${taskId} has not finished`);
    return task.result;
  } catch (error) {
    throw asMcpError(error);
  }
}

/** The v1 SDK's TaskStore over the caller's records: tasks are created by tools/call only, results kept by runs. */
export function legacyTaskStore(records: LegacyTaskRecords, principal: Principal, tasks: CallerTasks): TaskStore {
  const refuse = (what: string) => async (): Promise<never> => {
    throw new McpError(ErrorCode.InvalidRequest, `${what}: a task is the run a tools/call started`);
  };
  return {
    createTask: refuse('Tasks are created by tools/call only'),
    storeTaskResult: refuse("A task's result is its run's own"),
    getTask: (taskId) => readTask(records, principal, taskId),
    getTaskResult: async (taskId): Promise<Result> => resultOf(tasks, taskId, QUIET),
    async updateTaskStatus(taskId, status) {
      if (status !== 'cancelled') throw new McpError(ErrorCode.InvalidRequest, `A task cannot be set ${status}`);
      try {
        await tasks.cancel(taskId);
      } catch (error) {
        throw asMcpError(error);
      }
    },
    listTasks: (cursor) => listTasks(records, principal, cursor),
  };
}

/**
 * Starts a `tools/call` that asked for a task: a long tool answers its task; another tool was never offered as one
 * (-32601, as the revision says of `taskSupport: "forbidden"`); a call refused before its run was stored (bad
 * arguments, no credit, a rate limit) is a JSON-RPC error carrying the tool's error text, there being no task.
 */
export async function startLegacyTask(
  tasks: CallerTasks,
  name: string,
  args: unknown,
  extra: ToolExtra,
): Promise<CreateTaskResult> {
  if (!tasks.defers(name)) {
    throw new McpError(
      ErrorCode.MethodNotFound,
      `Tool ${name.slice(0, 100)} cannot be called as a task (its execution.taskSupport is forbidden): call it without params.task.`,
    );
  }
  const started = await tasks.start(name, args, extra);
  if (started.resultType === 'task') {
    const { resultType: _created, ...state } = started as TaskState & { resultType: 'task' };
    return { task: legacyTask(state) };
  }
  const [block] = (started as CallToolResult).content;
  const text = block?.type === 'text' ? block.text : 'The call could not start.';
  // The dispatcher's protocol refusals (invalid arguments, a toolset not selected) carry their JSON-RPC code.
  const coded = /^MCP error (-\d+): ([\s\S]*)$/.exec(text);
  if (coded) throw new McpError(Number(coded[1]), coded[2] ?? text);
  throw new McpError(ErrorCode.InvalidRequest, text);
}

/**
 * `tasks/result` in Prism's words (replacing the SDK's, which would queue messages no stateless request keeps):
 * waits for the run to end, polling its record at the task's interval, and tells the client of each status change
 * on this request's stream; then answers the tool's result, tagged with its task.
 */
export function serveTaskResults(server: McpServer, store: TaskStore, tasks: CallerTasks): void {
  server.server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
    const { taskId } = request.params;
    let seen: Task['status'] | undefined;
    for (;;) {
      const task = await store.getTask(taskId);
      if (!task) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId.slice(0, 200)}`);
      if (seen !== undefined && task.status !== seen) {
        await extra.sendNotification({ method: 'notifications/tasks/status', params: task });
      }
      seen = task.status;
      if (isTerminal(task.status)) {
        const result = await resultOf(tasks, taskId, extra as unknown as ToolExtra);
        return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
      }
      await sleep(task.pollInterval ?? 1000, undefined, { signal: extra.signal });
    }
  });
}

/** The tools that may be called as tasks say so (`execution.taskSupport`); one answer per cached list. */
const withSupport = new WeakMap<ListToolsResult, ListToolsResult>();

export function withTaskSupport(list: ListToolsResult, tasks: Pick<CallerTasks, 'defers'>): ListToolsResult {
  let listed = withSupport.get(list);
  if (!listed) {
    listed = {
      ...list,
      tools: list.tools.map((tool) =>
        tasks.defers(tool.name)
          ? { ...tool, execution: { ...tool.execution, taskSupport: 'optional' as const } }
          : tool,
      ),
    };
    withSupport.set(list, listed);
  }
  return listed;
}

/** The shared tasks' refusals as the SDK's errors: an unknown task -32602, one that cannot be cancelled -32600. */
function asMcpError(error: unknown): unknown {
  if (error instanceof TaskNotFound) {
    return new McpError(ErrorCode.InvalidParams, error.message, { taskId: error.taskId });
  }
  if (error instanceof TaskNotCancellable) {
    return new McpError(ErrorCode.InvalidRequest, error.message, { taskId: error.taskId });
  }
  if (error instanceof TaskReadFailed) return new McpError(ErrorCode.InvalidRequest, error.message);
  return error;
}
