/**
 * Run events (docs/agent-runs.md): the typed events a client following an execution receives, made from the stored
 * record alone, so every replica makes the same events with the same ids from the same record. An event id is a
 * cursor, `<half-steps>:<status>:<final>`: how many half-steps were sent (each recorded step is two events: a plan
 * step and its usage, or a tool call and its result), the last status sent, and how far the closing events got. A
 * client that reconnects with `Last-Event-ID` gets exactly what comes after it.
 */
import type { Execution, ExecutionStep } from '../domain/execution';
import { isTerminal, STATUSES, type Status } from '../domain/prediction';
import { toExecutionWire, toPauseWire } from './agents.schemas';

export const RUN_EVENT_TYPES = [
  'execution.status',
  'execution.plan',
  'execution.usage',
  'execution.tool_call',
  'execution.tool_result',
  'execution.answer',
  'execution.done',
] as const;
export type RunEventType = (typeof RUN_EVENT_TYPES)[number];

export interface RunEvent {
  id: string;
  type: RunEventType;
  data: Record<string, unknown>;
}

/** Where a client is in the stream. */
export interface RunCursor {
  half: number;
  status: Status | null;
  /** Closing events sent (answer, usage, status, done): 0 until the run ends. */
  final: number;
}

export const START_CURSOR: RunCursor = { half: 0, status: null, final: 0 };

const encode = (c: RunCursor): string => `${c.half}:${c.status ?? '-'}:${c.final}`;

/** The cursor an event id names; the start for a missing or unreadable id (the client then gets everything). */
export function parseCursor(id: string | undefined): RunCursor {
  const match = /^(\d{1,9}):([a-z]+|-):([0-4])$/.exec(id ?? '');
  if (!match) return START_CURSOR;
  const status = match[2] === '-' ? null : (match[2] as Status);
  if (status !== null && !STATUSES.includes(status)) return START_CURSOR;
  return { half: Number(match[1]), status, final: Number(match[3]) };
}

/** A short, bounded account of a tool's output for the stream (the `steps.json` artifact has it whole). */
export function summarise(output: Record<string, unknown> | null): string | null {
  if (output === null) return null;
  const text = JSON.stringify(output);
  return text.length <= 240 ? text : `${text.slice(0, 237)}...`;
}

/** The events of `record` after `cursor`, and the cursor after them. */
export function runEvents(record: Execution, cursor: RunCursor): { events: RunEvent[]; cursor: RunCursor } {
  const events: RunEvent[] = [];
  let at = { ...cursor };
  const push = (type: RunEventType, data: Record<string, unknown>, next: RunCursor): void => {
    at = next;
    events.push({ id: encode(at), type, data: { type, execution_id: record.id, ...data } });
  };
  const statusEvent = (): void =>
    push(
      'execution.status',
      { status: record.status, ...(record.pause ? { pause: toPauseWire(record.pause) } : {}) },
      { ...at, status: record.status },
    );
  const ended = isTerminal(record.status);
  // A run going on says so before its steps; a paused or finished one after them.
  if (!ended && record.status !== at.status && record.status !== 'paused') statusEvent();
  const tokens = { input: 0, output: 0 };
  for (const step of record.steps.slice(0, Math.floor(at.half / 2))) {
    tokens.input += step.inputTokens;
    tokens.output += step.outputTokens;
  }
  for (let half = at.half; half < record.steps.length * 2; half += 1) {
    const step = record.steps[Math.floor(half / 2)] as ExecutionStep;
    const first = half % 2 === 0;
    if (first) {
      tokens.input += step.inputTokens;
      tokens.output += step.outputTokens;
    }
    const next = { ...at, half: half + 1 };
    if (step.kind === 'plan' && first) {
      push(
        'execution.plan',
        { index: step.index, goal: step.goal, model: step.name, answered: step.output !== null },
        next,
      );
    } else if (step.kind === 'plan') {
      push(
        'execution.usage',
        { index: step.index, input_tokens: tokens.input, output_tokens: tokens.output, steps: step.index + 1 },
        next,
      );
    } else if (first) {
      push(
        'execution.tool_call',
        {
          index: step.index,
          goal: step.goal,
          name: step.name,
          tool_call_id: step.toolCallId,
          arguments: step.arguments,
        },
        next,
      );
    } else {
      push(
        'execution.tool_result',
        {
          index: step.index,
          name: step.name,
          tool_call_id: step.toolCallId,
          error: step.error,
          summary: summarise(step.output),
          duration_ms: step.durationMs,
        },
        next,
      );
    }
  }
  if (record.status === 'paused' && at.status !== 'paused') statusEvent();
  if (!ended) return { events, cursor: at };
  // The closing events, in order: the answer text, the final usage, the status, the whole record.
  if (at.final < 1) {
    const text = answerText(record);
    if (text === null) at = { ...at, final: 1 };
    else push('execution.answer', { text }, { ...at, final: 1 });
  }
  if (at.final < 2) push('execution.usage', { usage: record.usage }, { ...at, final: 2 });
  if (at.final < 3) {
    push(
      'execution.status',
      { status: record.status, error: record.errorMessage },
      { ...at, status: record.status, final: 3 },
    );
  }
  if (at.final < 4) push('execution.done', { execution: toExecutionWire(record) }, { ...at, final: 4 });
  return { events, cursor: at };
}

/** The planner's final text (the answer), from the last plan step that answered; null when the run did not. */
function answerText(record: Execution): string | null {
  if (record.status !== 'completed') return null;
  const last = [...record.steps].reverse().find((s) => s.kind === 'plan' && s.output !== null);
  const content = last?.output?.content;
  if (typeof content === 'string' && content !== '') return content;
  return record.response ? JSON.stringify(record.response) : null;
}

/** One SSE frame. */
export function sseFrame(event: RunEvent): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event.data)}\n\n`;
}

/**
 * A piece of the answer as the planner writes it, sent live to the client that started the run with `stream: true`
 * (`execution.answer.delta`). It has no id: it is not stored, so a reconnect cannot replay it; the stored
 * `execution.answer` at the end has the whole text.
 */
export function deltaFrame(executionId: string, delta: string): string {
  const data = { type: 'execution.answer.delta', execution_id: executionId, delta };
  return `event: execution.answer.delta\ndata: ${JSON.stringify(data)}\n\n`;
}
