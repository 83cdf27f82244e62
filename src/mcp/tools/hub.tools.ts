/**
 * Hub tools: the domain catalogue and each domain's schema, open to anonymous callers as the REST hub is.
 * MCP wants an object for structured content, so the domain list comes as `{ domains: [...] }`.
 */
import { z } from 'zod';
import type { HubDomain, HubService } from '../../services/hub/hub.service';
import { defineMcpTool, type McpTool } from '../mcp-tool';

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

const domainInfo = z.object({
  domain: z.string(),
  name: z.string(),
  description: z.string(),
  supported_inputs: z.array(z.string()),
  tags: z.array(z.string()),
  sample_data: z.array(z.string()),
  schema_hash: z.string(),
});

/** The entry of `GET /v1/hub/domains`. */
export const toDomainInfo = (d: HubDomain): z.output<typeof domainInfo> => ({
  domain: d.domain,
  name: d.name,
  description: d.description,
  supported_inputs: d.supportedInputs,
  tags: d.tags,
  sample_data: d.sampleData,
  schema_hash: d.schemaHash,
});

export function hubTools(hub: HubService): McpTool[] {
  return [
    defineMcpTool({
      name: 'list_hub_domains',
      title: 'List hub domains',
      description:
        'The extraction domains Prism knows (document.invoice, image.receipt, …), as GET /v1/hub/domains. ' +
        'Optionally filtered by a substring of the domain name or by supported input (image, document, video, audio).',
      input: z.object({
        contains: z.string().min(1).optional().describe('Keep domains whose id contains this text'),
        input: z.enum(['image', 'document', 'video', 'audio']).optional().describe('Keep domains taking this input'),
      }),
      output: z.object({ version: z.string(), domains: z.array(domainInfo) }),
      annotations: READ_ONLY,
      needsAccount: false,
      async run(args) {
        const domains = hub
          .list()
          .filter((d) => args.contains === undefined || d.domain.includes(args.contains))
          .filter((d) => args.input === undefined || d.supportedInputs.includes(args.input))
          .map(toDomainInfo);
        return { version: hub.version, domains };
      },
    }),
    defineMcpTool({
      name: 'get_domain_schema',
      title: 'Get a domain schema',
      description: 'The JSON schema a hub domain extracts into, as POST /v1/hub/schema answers.',
      input: z.object({ domain: z.string().min(1), gql_stmt: z.string().min(1).optional() }),
      output: z.object({
        domain: z.string(),
        description: z.string(),
        schema_version: z.string(),
        schema_hash: z.string(),
        gql_stmt: z.string(),
        json_schema: z.record(z.string(), z.unknown()),
      }),
      annotations: READ_ONLY,
      needsAccount: false,
      run: async (args) => hub.schema(args.domain, args.gql_stmt ?? null),
    }),
  ];
}
