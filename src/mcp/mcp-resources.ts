/**
 * Resources: each hub domain's JSON schema at `hub://domains/{domain}/schema`, listed, so a client can attach a
 * schema to a conversation without a tool call. Open to anonymous callers, as the hub is.
 */
import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { NotFoundError } from '../domain/errors';
import type { HubService } from '../services/hub/hub.service';

export const domainSchemaUri = (domain: string): string => `hub://domains/${encodeURIComponent(domain)}/schema`;

export function registerHubResources(server: McpServer, hub: HubService): void {
  server.registerResource(
    'hub_domain_schema',
    new ResourceTemplate('hub://domains/{domain}/schema', {
      list: () => ({
        resources: hub.list().map((d) => ({
          uri: domainSchemaUri(d.domain),
          name: d.domain,
          title: d.name,
          description: d.description,
          mimeType: 'application/schema+json',
        })),
      }),
    }),
    {
      title: 'Hub domain schema',
      description: 'The JSON schema a hub domain extracts into',
      mimeType: 'application/schema+json',
    },
    (uri, variables) => {
      const domain = decodeURIComponent(String(variables.domain));
      if (!hub.find(domain)) throw new NotFoundError('domain', domain);
      const schema = hub.schema(domain);
      return {
        contents: [{ uri: uri.href, mimeType: 'application/schema+json', text: JSON.stringify(schema.json_schema) }],
      };
    },
  );
}
