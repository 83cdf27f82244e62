/**
 * The deterministic planner serves only what a reading or a filled schema answers: its first
 * step either reads the inputs or refuses, by the rule docs/offline-agents.md states.
 */
import { createDeterministicPlanner } from '../../../src/agents/planners/deterministic.planner';
import { PlannerRefusal, type PlannerTask, type PlanStep } from '../../../src/agents/sdk';

const TOOLS = ['ocr_image', 'read_document', 'fill_json_schema'].map((name) => ({
  name,
  description: name,
  parameters: { type: 'object' },
}));
const SCHEMA = { type: 'object', properties: { total: { type: ['number', 'null'] } } };
const IMAGE = { slot: 'receipt', kind: 'media' as const, family: 'image' as const, source: 'img_1' };

function firstStep(task: Partial<PlannerTask>): Promise<PlanStep> {
  const full: PlannerTask = { prompt: null, inputs: [IMAGE], responseSchema: null, goals: [], ...task };
  return createDeterministicPlanner().plan({
    task: full,
    messages: [],
    tools: TOOLS,
    responseSchema: full.responseSchema,
    goal: null,
    signal: new AbortController().signal,
  });
}

describe('deterministic planner: what it serves', () => {
  it.each([null, 'Read this receipt', 'OCR the scan.', 'Transcribe it', 'Extract the text', 'give me the raw text'])(
    'reads the inputs for %p without a schema',
    async (prompt) => {
      const step = await firstStep({ prompt });
      expect(step.toolCalls.map((c) => c.name)).toEqual(['ocr_image']);
    },
  );

  it.each(['What is the total?', 'Which store issued this receipt?', 'Extract the receipt fields'])(
    'reads the inputs for %p when a schema names what to fill',
    async (prompt) => {
      const step = await firstStep({ prompt, responseSchema: SCHEMA });
      expect(step.toolCalls.map((c) => c.name)).toEqual(['ocr_image']);
    },
  );

  it('reads a chat turn that is only an attachment (the attachment note is not the user’s words)', async () => {
    const step = await firstStep({ prompt: '[attached image: input message0.image0]', chat: { history: [] } });
    expect(step.toolCalls.map((c) => c.name)).toEqual(['ocr_image']);
  });
});

describe('deterministic planner: what it refuses', () => {
  it.each([
    'Which store issued this receipt?',
    'What is the total?',
    'Thanks!',
    'Read it and tell me the total?',
    'Extract the receipt fields',
  ])('%p without a schema: says what it can do and what to configure', async (prompt) => {
    const refusal = firstStep({ prompt });
    await expect(refusal).rejects.toBeInstanceOf(PlannerRefusal);
    await expect(refusal).rejects.toThrow(`cannot answer "${prompt}"`);
    await expect(refusal).rejects.toThrow(/config\.json_schema.*PRISM_MODELS_FILE/);
  });

  it('points a chat turn at response_format, and quotes only the user’s words', async () => {
    const refusal = firstStep({
      prompt: 'And the total? [attached image: input message0.image0]',
      chat: { history: [] },
    });
    await expect(refusal).rejects.toThrow('cannot answer "And the total?"');
    await expect(refusal).rejects.toThrow(/response_format \{type: "json_schema"\}/);
  });

  it('refuses what needs language even with a schema', async () => {
    await expect(firstStep({ prompt: 'Summarize this receipt', responseSchema: SCHEMA })).rejects.toThrow(
      /asks to "Summarize", which needs a language model/,
    );
  });
});
