/**
 * remember: keeps a note in the organisation's long-term memory (the LangGraph store, docs/langgraph.md), so a
 * later run, of this agent or another, can recall it by meaning.
 */
import { createHash } from 'node:crypto';
import { defineTool, z } from '../src/agents/sdk';

export const rememberTool = defineTool({
  name: 'remember',
  description:
    'Keep a fact, preference or decision in long-term memory so later conversations and runs can recall it. ' +
    'Write one self-contained sentence (who, what). Give a key to replace an earlier note on the same subject ' +
    '(for example "ada-drink"); without one, the same text is kept once.',
  inputSchema: z.object({
    text: z.string().min(1).max(4000).describe('The note, as one self-contained sentence'),
    key: z
      .string()
      .regex(/^[A-Za-z0-9._:-]{1,128}$/)
      .optional()
      .describe('A short id for the subject; remembering again under it replaces the note'),
  }),
  outputSchema: z.object({ key: z.string(), namespace: z.array(z.string()) }),
  annotations: { title: 'Remember a note', readOnlyHint: false, idempotentHint: true, openWorldHint: false },
  async handler({ text, key }, ctx) {
    const id = key ?? `note-${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
    await ctx.memory.remember(id, { text, ...(ctx.executionId ? { execution_id: ctx.executionId } : {}) });
    return { key: id, namespace: ctx.memory.namespace };
  },
});
