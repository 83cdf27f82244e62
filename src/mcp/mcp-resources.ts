/**
 * Resources: each hub domain's JSON schema at `hub://domains/{domain}/schema`, listed, so a client can attach a
 * schema to a conversation without a tool call. Open to anonymous callers, as the hub is.
 */
import { NotFoundError } from '../domain/errors';
import type { HubService } from '../services/hub/hub.service';
import { segmentMatcher, type ResourceKind } from './mcp-resource-handlers';

const MIME = 'application/schema+json';

export const domainSchemaUri = (domain: string): string => `hub://domains/${encodeURIComponent(domain)}/schema`;

export function hubResources(hub: HubService): ResourceKind {
  return {
    template: {
      name: 'hub_domain_schema',
      uriTemplate: 'hub://domains/{domain}/schema',
      title: 'Hub domain schema',
      description: 'The JSON schema a hub domain extracts into',
      mimeType: MIME,
    },
    match: segmentMatcher('hub://domains/{domain}/schema'),
    list: () =>
      hub.list().map((d) => ({
        uri: domainSchemaUri(d.domain),
        name: d.domain,
        title: d.name,
        description: d.description,
        mimeType: MIME,
      })),
    read(uri, { domain = '' }) {
      if (!hub.find(domain)) throw new NotFoundError('domain', domain);
      const schema = hub.schema(domain);
      return { contents: [{ uri, mimeType: MIME, text: JSON.stringify(schema.json_schema) }] };
    },
  };
}
