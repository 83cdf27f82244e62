/**
 * Hub tools: the domain catalogue and each domain's schema, open to anonymous callers as the REST hub is.
 * MCP wants an object for structured content, so the domain list comes as `{ domains: [...] }`.
 */
import { z } from 'zod';
import { domainInfoSchema, toDomainInfo } from '../../wire/hub.schemas';
import type { HubService } from '../../services/hub/hub.service';
import { defineMcpTool, type McpTool } from '../mcp-tool';

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

export function hubTools(hub: HubService): McpTool[] {
  return [
    defineMcpTool({
      name: 'list_hub_domains',
      title: 'List hub domains',
      description:
        'Extraction domains (document.invoice, image.receipt, …) as GET /v1/hub/domains, optionally filtered.',
      input: z.object({
        contains: z.string().min(1).optional().describe('Substring of the domain id'),
        input: z.enum(['image', 'document', 'video', 'audio']).optional().describe('Input kind the domain takes'),
      }),
      output: z.object({ version: z.string(), domains: z.array(domainInfoSchema) }),
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
      description: 'The JSON schema a hub domain extracts into (POST /v1/hub/schema).',
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
