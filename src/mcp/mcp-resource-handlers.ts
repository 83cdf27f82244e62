/**
 * `resources/list`, `resources/templates/list` and `resources/read` answered by Prism itself rather than by the
 * SDK's `registerResource`, for two protocol details the SDK gets wrong for a stateless server:
 * - it advertises `resources.listChanged: true`, a notification a per-request server can never send;
 * - an unknown resource answers -32602 or -32603, where the spec's code is -32002 (Resource not found).
 * Each resource kind is a URI template with a matcher, a lister and a reader; a URI no kind matches, or a reader's
 * NotFoundError, is -32002 with the URI in `data`.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
} from '@modelcontextprotocol/sdk/types.js';
import { NotFoundError } from '../domain/errors';

/** JSON-RPC code of the MCP spec for a resource that does not exist. */
export const RESOURCE_NOT_FOUND = -32002;

export interface ResourceKind {
  template: ResourceTemplate;
  /** The URI's variables (decoded) when it is one of this kind's, else null. */
  match(uri: string): Record<string, string> | null;
  list(): Promise<Resource[]> | Resource[];
  read(uri: string, variables: Record<string, string>): Promise<ReadResourceResult> | ReadResourceResult;
}

/** A matcher for a template of `{name}` segments (each one path segment, percent-decoded). */
export function segmentMatcher(template: string): (uri: string) => Record<string, string> | null {
  const names: string[] = [];
  const source = template
    .split(/(\{[a-z_]+\})/)
    .map((part) => {
      const name = /^\{([a-z_]+)\}$/.exec(part)?.[1];
      if (!name) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(name);
      return '([^/]+)';
    })
    .join('');
  const pattern = new RegExp(`^${source}$`);
  return (uri) => {
    const found = pattern.exec(uri);
    if (!found) return null;
    try {
      return Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(found[i + 1] ?? '')]));
    } catch {
      return null;
    }
  };
}

const notFound = (uri: string): McpError => new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, { uri });

export function registerResources(server: McpServer, kinds: readonly ResourceKind[]): void {
  server.server.registerCapabilities({ resources: {} });
  server.server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: (await Promise.all(kinds.map(async (kind) => kind.list()))).flat(),
  }));
  server.server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: kinds.map((kind) => kind.template),
  }));
  server.server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const { uri } = request.params;
    for (const kind of kinds) {
      const variables = kind.match(uri);
      if (!variables) continue;
      try {
        return await kind.read(uri, variables);
      } catch (error) {
        if (error instanceof NotFoundError) throw notFound(uri);
        throw error;
      }
    }
    throw notFound(uri);
  });
}
