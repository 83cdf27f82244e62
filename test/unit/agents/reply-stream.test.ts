/**
 * Which planner text a streamed chat reply shows (the reply gate of src/agents/reply-stream.ts), on its own and in
 * the runtime (a scripted planner that writes its content through `onText` in pieces), and the bounded text queue
 * the gateway puts between the runtime and the SSE writer.
 */
import { createAgentRuntime } from '../../../src/agents/agent-runtime';
import { BUILTIN_GRAPHS } from '../../../agent-graphs';
import { createReplyStream, HOLD_BACK_CHARS } from '../../../src/agents/reply-stream';
import type { PlannerModel, PlanStep, PlannerTask, ToolContext } from '../../../src/agents/sdk';
import { defineTool, z } from '../../../src/agents/sdk';
import { createToolRegistry } from '../../../src/agents/tool-registry';
import { createLogger } from '../../../src/lib/logger';
import { TextQueue } from '../../../src/lib/text-queue';
import { openDatabase } from '../../../src/backend/sqlite/database';
import { LeanSqliteSaver } from '../../../src/backend/sqlite/graph-checkpoints';

const long = (word: string): string => `${word} `.repeat(Math.ceil(HOLD_BACK_CHARS / (word.length + 1)) + 1);

describe('reply gate', () => {
  const gate = () => {
    const shown: string[] = [];
    return { shown, stream: createReplyStream((d) => shown.push(d)) };
  };

  it('drops a short preamble of a round that calls tools, and sends a short answer when its round ends', () => {
    const { shown, stream } = gate();
    const tools = stream.round();
    tools.onText('Let me look.');
    tools.end(true);
    const answer = stream.round();
    answer.onText('It is ');
    answer.onText('26.22.');
    expect(shown).toEqual([]);
    answer.end(false);
    expect(shown).toEqual(['It is 26.22.']);
    expect(stream.sent).toBe('It is 26.22.');
  });

  it('streams a round once it passes the hold-back, delta by delta', () => {
    const { shown, stream } = gate();
    const round = stream.round();
    const opening = long('word');
    round.onText(opening.slice(0, 10));
    round.onText(opening.slice(10));
    round.onText('then ');
    round.onText('more');
    round.end(false);
    expect(shown).toEqual([opening, 'then ', 'more']);
    expect(stream.sent).toBe(`${opening}then more`);
  });

  it('keeps text a tool round showed, and separates the next round from it by a blank line', () => {
    const { shown, stream } = gate();
    const first = stream.round();
    const preamble = long('checking');
    first.onText(preamble);
    first.onText('still');
    first.end(true);
    const answer = stream.round();
    answer.onText('Done.');
    answer.end(false);
    expect(stream.sent).toBe(`${preamble}still\n\nDone.`);
    expect(shown.join('')).toBe(stream.sent);
  });

  it('ignores text after a round has ended', () => {
    const { shown, stream } = gate();
    const round = stream.round();
    round.end(false);
    round.onText('late');
    expect(shown).toEqual([]);
  });
});

describe('the runtime streams only what can be the answer', () => {
  const tools = createToolRegistry([
    defineTool({
      name: 'echo_text',
      description: 'Returns the text it is given (test tool).',
      inputSchema: z.object({ text: z.string() }),
      outputSchema: z.object({ text: z.string() }),
      annotations: { readOnlyHint: true },
      handler: async ({ text }) => ({ text }),
    }),
  ]);
  const db = openDatabase(':memory:');
  const runtime = createAgentRuntime({
    tools,
    graphs: BUILTIN_GRAPHS,
    checkpointer: new LeanSqliteSaver(db),
    logger: createLogger('silent'),
  });
  afterAll(() => db.close());

  /** A planner that writes each step's content through `onText` in two pieces, and records whether it was asked. */
  function writing(steps: Omit<PlanStep, 'usage'>[]): PlannerModel & { asked: boolean[] } {
    const asked: boolean[] = [];
    let i = 0;
    return {
      kind: 'language-model',
      servedBy: 'scripted',
      asked,
      async plan(request) {
        asked.push(request.onText !== undefined);
        const step = steps[Math.min(i, steps.length - 1)] as Omit<PlanStep, 'usage'>;
        i += 1;
        const text = step.content ?? '';
        if (step.toolCalls.length === 0) {
          request.onText?.(text.slice(0, 3));
          request.onText?.(text.slice(3));
        }
        return { ...step, usage: { inputTokens: 1, outputTokens: 1, costMicros: 0 } };
      },
    };
  }

  const run = (id: string, task: PlannerTask, planner: PlannerModel, shown: string[]) =>
    runtime.run({
      executionId: id,
      task,
      skills: [],
      tools: tools.list(),
      planner,
      context: () => ({}) as ToolContext,
      maxSteps: 10,
      deadlineMs: 10_000,
      resume: false,
      onText: (d) => shown.push(d),
    });
  const chat = { history: [] };

  it('a chat task: the final round is streamed, and `streamed` is exactly what was passed on', async () => {
    const shown: string[] = [];
    const planner = writing([
      { content: null, toolCalls: [{ id: 'c1', name: 'echo_text', arguments: { text: 'x' } }] },
      { content: 'The answer.', toolCalls: [] },
    ]);
    const result = await run(
      'stream-1',
      { prompt: 'q', inputs: [], responseSchema: null, goals: [], chat },
      planner,
      shown,
    );
    expect(planner.asked).toEqual([true, true]);
    expect(shown.join('')).toBe('The answer.');
    expect(result.streamed).toBe('The answer.');
    expect(result.final).toBe('The answer.');
  });

  it("a skill graph's earlier states are hand-offs: only the last state's rounds may stream", async () => {
    const shown: string[] = [];
    const planner = writing([
      { content: 'read done', toolCalls: [] },
      { content: 'Final words.', toolCalls: [] },
    ]);
    const result = await run(
      'stream-2',
      { prompt: 'q', inputs: [], responseSchema: null, goals: ['read', 'answer'], chat },
      planner,
      shown,
    );
    expect(planner.asked).toEqual([false, true]);
    expect(result.streamed).toBe('Final words.');
  });

  it('nothing streams for a task with a response schema; a task that is not a chat streams when its caller asks', async () => {
    const shown: string[] = [];
    const schema = { type: 'object', properties: { a: { type: 'number' } } };
    const json = writing([{ content: '{"a": 1}', toolCalls: [] }]);
    const schemaRun = await run(
      'stream-3',
      { prompt: 'q', inputs: [], responseSchema: schema, goals: [], chat },
      json,
      shown,
    );
    expect(json.asked).toEqual([false]);
    expect(shown).toEqual([]);
    expect(schemaRun.streamed).toBe('');

    // An execution run with `stream: true` (no chat, no schema) shows its answer as it is written.
    const plain = writing([{ content: 'text', toolCalls: [] }]);
    const plainRun = await run('stream-4', { prompt: 'q', inputs: [], responseSchema: null, goals: [] }, plain, shown);
    expect(plain.asked).toEqual([true]);
    expect(plainRun.streamed).toBe('text');
    expect(shown.join('')).toBe('text');
  });
});

describe('text queue', () => {
  it('never blocks the producer, joins text beyond its piece limit, and hands over all that waits at once', async () => {
    const queue = new TextQueue(3);
    const first = queue.firstText();
    for (const piece of ['a', 'b', 'c', 'd', 'e']) queue.push(piece);
    await first;
    expect(queue.take()).toEqual(['a', 'b', 'cde']);
    expect(queue.take()).toEqual([]);
    expect(queue.text).toBe('abcde');
  });

  it('wakes a waiting consumer on text and on close; nothing is added after close', async () => {
    const queue = new TextQueue();
    const ready = queue.ready();
    queue.push('x');
    await ready;
    expect(queue.take()).toEqual(['x']);
    const closed = queue.ready();
    queue.close();
    await closed;
    queue.push('late');
    expect(queue.isClosed).toBe(true);
    expect(queue.take()).toEqual([]);
    expect(queue.text).toBe('x');
  });
});
