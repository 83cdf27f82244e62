/**
 * The agent loop on its own (LangGraph + the lean SQLite saver on an in-memory database, a scripted planner, a real tool
 * registry): skill-graph states are followed in order and name their steps, the step limit fails the run with a
 * message, and a compiled program binds arguments to inputs and earlier outputs.
 */
import { createAgentRuntime, RunFailure } from '../../../src/agents/agent-runtime';
import { BUILTIN_GRAPHS } from '../../../agent-graphs';
import { compileProgram, resolveValue } from '../../../src/agents/program/program-compiler';
import { defineTool, z, type PlannerModel, type PlanStep, type ToolContext } from '../../../src/agents/sdk';
import { createToolRegistry } from '../../../src/agents/tool-registry';
import { createLogger } from '../../../src/lib/logger';
import { openDatabase } from '../../../src/backend/sqlite/database';
import { LeanSqliteSaver } from '../../../src/backend/sqlite/graph-checkpoints';

const upper = defineTool({
  name: 'upper_text',
  description: 'Returns the text in upper case (test tool).',
  inputSchema: z.object({ text: z.string() }),
  outputSchema: z.object({ text: z.string() }),
  annotations: { readOnlyHint: true },
  handler: async ({ text }) => ({ text: text.toUpperCase() }),
});
const tools = createToolRegistry([upper]);

function scripted(steps: Omit<PlanStep, 'usage'>[]): PlannerModel & { goals: (string | null)[] } {
  const goals: (string | null)[] = [];
  let i = 0;
  return {
    kind: 'language-model',
    servedBy: 'scripted',
    goals,
    async plan(request) {
      goals.push(request.goal);
      const step = steps[Math.min(i, steps.length - 1)] as Omit<PlanStep, 'usage'>;
      i += 1;
      return { ...step, usage: { inputTokens: 1, outputTokens: 1, costMicros: 0 } };
    },
  };
}

describe('agent loop', () => {
  const db = openDatabase(':memory:');
  const runtime = createAgentRuntime({
    tools,
    graphs: BUILTIN_GRAPHS,
    checkpointer: new LeanSqliteSaver(db),
    logger: createLogger('silent'),
  });
  const base = {
    skills: [],
    tools: tools.list(),
    context: () => ({}) as ToolContext,
    deadlineMs: 10_000,
    resume: false,
  };
  afterAll(() => db.close());

  it('follows skill-graph states in order and names each step after its state', async () => {
    const planner = scripted([
      { content: null, toolCalls: [{ id: 'c1', name: 'upper_text', arguments: { text: 'abc' } }] },
      { content: 'read done', toolCalls: [] },
      { content: '{"value": "ABC"}', toolCalls: [] },
    ]);
    const result = await runtime.run({
      ...base,
      executionId: 'goals-1',
      task: { prompt: null, inputs: [], responseSchema: null, goals: ['read', 'extract'] },
      planner,
      maxSteps: 10,
    });
    expect(result.response).toEqual({ value: 'ABC' });
    expect(planner.goals).toEqual(['read', 'read', 'extract']);
    expect(result.trace.map((t) => `${t.kind}:${t.goal}`)).toEqual([
      'plan:read',
      'tool:read',
      'plan:read',
      'plan:extract',
    ]);
    expect(result.trace[1]?.output).toEqual({ text: 'ABC' });
  });

  it('fails with a message at the step limit, keeping the steps taken', async () => {
    const planner = scripted([
      { content: null, toolCalls: [{ id: 'c', name: 'upper_text', arguments: { text: 'x' } }] },
    ]);
    const failure = await runtime
      .run({
        ...base,
        executionId: 'limit-1',
        task: { prompt: null, inputs: [], responseSchema: null, goals: [] },
        planner,
        maxSteps: 3,
      })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RunFailure);
    expect((failure as RunFailure).message).toMatch(/after 3 planning steps/);
    expect((failure as RunFailure).trace.filter((t) => t.kind === 'tool')).toHaveLength(3);
  });

  it('asks a language model again when its answer breaks the schema', async () => {
    const planner = scripted([
      { content: '{"n": "three"}', toolCalls: [] },
      { content: '{"n": 3}', toolCalls: [] },
    ]);
    const schema = { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] };
    const result = await runtime.run({
      ...base,
      executionId: 'schema-1',
      task: { prompt: null, inputs: [], responseSchema: schema, goals: [] },
      planner,
      maxSteps: 5,
    });
    expect(result.response).toEqual({ n: 3 });
    expect(result.schemaErrors).toEqual([]);
  });

  it('compiles a trace into a program bound to inputs and earlier outputs', () => {
    const program = compileProgram(
      [{ slot: 'doc', kind: 'media', family: 'image', source: 'file-1' }],
      [
        {
          tool: 'ocr_image',
          arguments: { image: 'file-1' },
          output: { layout_id: 'lay_aaaaaa', text: 'ACME' },
          goal: null,
        },
        {
          tool: 'fill_json_schema',
          arguments: { layout_ids: ['lay_aaaaaa'] },
          output: { data: { company: 'ACME' } },
          goal: null,
        },
      ],
      { company: 'ACME' },
    );
    expect(program.steps[0]?.args).toEqual({ $object: { image: { $ref: 'inputs.doc.source' } } });
    expect(program.steps[1]?.args).toEqual({
      $object: { layout_ids: { $array: [{ $ref: 'steps.s1.output.layout_id' }] } },
    });
    expect(program.response).toEqual({ $ref: 'steps.s2.output.data' });
    const scope = { inputs: { doc: { source: 'file-2' } }, steps: { s1: { output: { layout_id: 'lay_bbbbbb' } } } };
    expect(resolveValue(program.steps[0]?.args ?? { $literal: null }, scope)).toEqual({ image: 'file-2' });
    expect(resolveValue(program.steps[1]?.args ?? { $literal: null }, scope)).toEqual({ layout_ids: ['lay_bbbbbb'] });
  });
});
