/**
 * recall: searches the organisation's long-term memory (what `remember` kept, or a LangGraph client put under the
 * same namespace) by meaning, best match first.
 */
import { defineTool, z } from '../src/agents/sdk';

export const recallTool = defineTool({
  name: 'recall',
  description:
    'Search long-term memory for notes kept earlier (facts, preferences, decisions) that relate to a question. ' +
    'Returns the closest notes first with a similarity score; an empty list means nothing relevant was kept.',
  inputSchema: z.object({
    query: z.string().min(1).max(2000).describe('What you want to know, in words'),
    limit: z.number().int().min(1).max(20).default(5).describe('How many notes at most'),
  }),
  outputSchema: z.object({
    memories: z.array(z.object({ key: z.string(), text: z.string(), score: z.number(), updated_at: z.string() })),
  }),
  annotations: { title: 'Recall notes', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async handler({ query, limit }, ctx) {
    const found = await ctx.memory.recall(query, limit);
    return {
      memories: found.map((m) => ({
        key: m.key,
        text: typeof m.value.text === 'string' ? m.value.text : JSON.stringify(m.value),
        score: Math.round(m.score * 1000) / 1000,
        updated_at: m.updatedAt,
      })),
    };
  },
});
