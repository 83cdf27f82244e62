/**
 * Run events from a stored record (src/wire/run-events.ts): each recorded step gives two events, statuses come in
 * the order a watcher would have seen them, the closing events end the stream, and an event id is a cursor: the
 * events after it are exactly those a reconnecting client missed, made the same from the same record anywhere.
 */
import type { Execution, ExecutionStep } from '../../../src/domain/execution';
import { parseCursor, runEvents, START_CURSOR, summarise } from '../../../src/wire/run-events';

function step(index: number, kind: 'plan' | 'tool', over: Partial<ExecutionStep> = {}): ExecutionStep {
  return {
    index,
    kind,
    goal: null,
    name: kind === 'plan' ? 'prism-orion-1' : 'ocr_image',
    toolCallId: kind === 'tool' ? `call_${index}` : null,
    arguments: kind === 'tool' ? { image: 'img_abc123' } : null,
    output: kind === 'tool' ? { text: 'GREENLEAF' } : null,
    error: null,
    durationMs: 3,
    inputTokens: kind === 'plan' ? 10 : 0,
    outputTokens: kind === 'plan' ? 2 : 0,
    ...over,
  };
}

function record(over: Partial<Execution>): Execution {
  return {
    id: 'e1',
    orgId: 'o',
    agentId: null,
    name: 'x',
    model: 'prism-orion-1',
    status: 'running',
    executionMode: 'agent',
    request: {} as Execution['request'],
    response: null,
    usage: { steps: 0 } as Execution['usage'],
    steps: [],
    errorMessage: null,
    callbackUrl: null,
    sessionId: null,
    attempts: 1,
    pause: null,
    createdAt: new Date(0),
    completedAt: null,
    ...over,
  };
}

const done = record({
  status: 'completed',
  response: { text: 'GREENLEAF' },
  steps: [step(0, 'plan'), step(1, 'tool'), step(2, 'plan', { output: { content: 'GREENLEAF' } })],
});

describe('run events', () => {
  it('replays a finished run from its record, in order, with unique ids', () => {
    const { events } = runEvents(done, START_CURSOR);
    expect(events.map((e) => e.type)).toEqual([
      'execution.plan',
      'execution.usage',
      'execution.tool_call',
      'execution.tool_result',
      'execution.plan',
      'execution.usage',
      'execution.answer',
      'execution.usage',
      'execution.status',
      'execution.done',
    ]);
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    expect(events[5]?.data).toMatchObject({ input_tokens: 20, output_tokens: 4, steps: 3 });
    expect(events[6]?.data.text).toBe('GREENLEAF');
  });

  it('sends after an id exactly what came after it', () => {
    const { events } = runEvents(done, START_CURSOR);
    for (const [i, event] of events.entries()) {
      const rest = runEvents(done, parseCursor(event.id)).events;
      expect(rest.map((e) => e.id)).toEqual(events.slice(i + 1).map((e) => e.id));
    }
  });

  it('follows a run as its record changes, with no event twice', () => {
    const snapshots = [
      record({ status: 'pending' }),
      record({ status: 'running', steps: [step(0, 'plan')] }),
      record({
        status: 'paused',
        steps: [step(0, 'plan')],
        pause: {
          kind: 'tool_approval',
          toolCall: { id: 'call_1', name: 'ocr_image', arguments: { image: 'x' } },
          question: null,
          goal: null,
          pausedAt: 'a',
          expiresAt: 'b',
        },
      }),
      record({ status: 'running', steps: [step(0, 'plan')] }),
      done,
    ];
    let cursor = START_CURSOR;
    const seen: string[] = [];
    for (const snapshot of snapshots) {
      const next = runEvents(snapshot, cursor);
      cursor = next.cursor;
      seen.push(
        ...next.events.map((e) => (e.type === 'execution.status' ? `status:${String(e.data.status)}` : e.type)),
      );
      // The same record again brings nothing new.
      expect(runEvents(snapshot, cursor).events).toEqual([]);
    }
    expect(seen).toEqual([
      'status:pending',
      'status:running',
      'execution.plan',
      'execution.usage',
      'status:paused',
      'status:running',
      'execution.tool_call',
      'execution.tool_result',
      'execution.plan',
      'execution.usage',
      'execution.answer',
      'execution.usage',
      'status:completed',
      'execution.done',
    ]);
  });

  it('reads unusable ids as the start, and keeps summaries short', () => {
    expect(parseCursor('nonsense')).toEqual(START_CURSOR);
    expect(parseCursor('3:weird:0')).toEqual(START_CURSOR);
    expect(parseCursor('4:paused:0')).toEqual({ half: 4, status: 'paused', final: 0 });
    expect(summarise({ text: 'x'.repeat(1000) })?.length).toBe(240);
    expect(summarise(null)).toBeNull();
  });
});
