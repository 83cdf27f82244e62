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

/** The three resource requests as plain functions, shared by the 2025 server (below) and the 2026 one. */
export interface ResourceHandlers {
  list(): Promise<{ resources: Resource[] }>;
  templates(): { resourceTemplates: ResourceTemplate[] };
  /** @throws McpError -32002 for a URI no kind knows or a reader's NotFoundError. */
  read(uri: string): Promise<ReadResourceResult>;
}

export function resourceHandlers(kinds: readonly ResourceKind[]): ResourceHandlers {
  return {
    list: async () => ({ resources: (await Promise.all(kinds.map(async (kind) => kind.list()))).flat() }),
    templates: () => ({ resourceTemplates: kinds.map((kind) => kind.template) }),
    async read(uri) {
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
    },
  };
}

export function registerResources(server: McpServer, kinds: readonly ResourceKind[]): void {
  const handlers = resourceHandlers(kinds);
  server.server.registerCapabilities({ resources: {} });
  server.server.setRequestHandler(ListResourcesRequestSchema, () => handlers.list());
  server.server.setRequestHandler(ListResourceTemplatesRequestSchema, () => handlers.templates());
  server.server.setRequestHandler(ReadResourceRequestSchema, (request) => handlers.read(request.params.uri));
}
