/**
 * lookup_hub_domain: finds a hub domain (e.g. `document.invoice`) and its JSON schema, or suggests close names.
 */
import { defineTool, z } from '../src/agents/sdk';

const MAX_SUGGESTIONS = 10;

export const lookupHubDomainTool = defineTool({
  name: 'lookup_hub_domain',
  description:
    'Look up a hub domain by its id (for example document.invoice or document.receipt) and return its ' +
    'description, supported input types and the JSON schema of what it extracts. When the id is unknown, returns ' +
    'found=false and the closest domain ids, so you can retry with one of them.',
  inputSchema: z.object({
    domain: z.string().min(1).describe('Domain id such as document.invoice, or words to search for (e.g. "receipt")'),
  }),
  outputSchema: z.object({
    found: z.boolean(),
    domain: z.string().nullable(),
    name: z.string().nullable(),
    description: z.string().nullable(),
    supported_inputs: z.array(z.string()),
    json_schema: z.record(z.string(), z.unknown()).nullable(),
    suggestions: z.array(z.string()),
  }),
  annotations: { title: 'Look up a hub domain', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async handler({ domain }, ctx) {
    const found = ctx.hub.find(domain.trim());
    if (found) {
      return {
        found: true,
        domain: found.domain,
        name: found.name,
        description: found.description,
        supported_inputs: found.supportedInputs,
        json_schema: found.jsonSchema,
        suggestions: [],
      };
    }
    const words = domain
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((w) => w.length > 1);
    const scored = ctx.hub
      .list()
      .map((d) => {
        const haystack = `${d.domain} ${d.name} ${d.description}`.toLowerCase();
        return { id: d.domain, score: words.filter((w) => haystack.includes(w)).length };
      })
      .filter((d) => d.score > 0)
      .sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
    return {
      found: false,
      domain: null,
      name: null,
      description: null,
      supported_inputs: [],
      json_schema: null,
      suggestions: scored.slice(0, MAX_SUGGESTIONS).map((d) => d.id),
    };
  },
});
