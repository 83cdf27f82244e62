/**
 * Wire shapes of remote MCP servers registered for agents (`/v1/agent/mcp-servers`, docs/agents.md): the register
 * body and the one mapper from a server to JSON, which never carries the key or an OAuth token (only whether there
 * is a key, and where an OAuth sign-in stands).
 */
import { z } from 'zod';
import type { RemoteMcpTool } from '../lib/remote-mcp-client';
import type { McpServerView, RegisterMcpServer } from '../services/agent-mcp/mcp-servers.service';

export const registerMcpServerBodySchema = z.object({
  name: z.string().min(1).max(32),
  url: z.string().min(1).max(2048),
  /** Sent as `Authorization: Bearer <key>`, or in `api_key_header` as it is. */
  api_key: z.string().min(1).max(4096).nullish(),
  api_key_header: z.string().min(1).max(64).nullish(),
  /** The tools agents may call (by the server's names); absent: all it lists. */
  allowed_tools: z.array(z.string().min(1).max(128)).max(100).nullish(),
  /** The limit of one call, in seconds (default PRISM_AGENT_MCP_TIMEOUT_S). */
  timeout_s: z.number().positive().max(600).nullish(),
  /**
   * `{type: 'oauth'}`: a person signs in once through the server's consent page (the answer's authorization_url).
   * `client_id` (and `client_secret` for a confidential client): the client the server's operator issued, for an
   * authorization server without dynamic registration; the secret is stored encrypted, never returned.
   */
  auth: z
    .object({
      type: z.literal('oauth'),
      client_id: z.string().min(1).max(512).nullish(),
      client_secret: z.string().min(1).max(4096).nullish(),
    })
    .refine((auth) => !auth.client_secret || auth.client_id, {
      message: 'client_secret comes with client_id',
      path: ['client_secret'],
    })
    .nullish(),
});

/** The query a person's browser brings back to the OAuth callback. */
export const oauthCallbackQuerySchema = z.object({
  state: z.string().min(1).max(200),
  code: z.string().min(1).max(4096).optional(),
  error: z.string().max(200).optional(),
});

export const mcpServerIdParamsSchema = z.object({ id: z.string().min(1).max(200) });

export function toRegisterMcpServer(body: z.output<typeof registerMcpServerBodySchema>): RegisterMcpServer {
  return {
    name: body.name,
    url: body.url,
    apiKey: body.api_key ?? null,
    apiKeyHeader: body.api_key_header ?? null,
    allowedTools: body.allowed_tools ?? null,
    timeoutMs: body.timeout_s === null || body.timeout_s === undefined ? null : Math.round(body.timeout_s * 1000),
    oauth: body.auth?.type === 'oauth',
    oauthClient: body.auth?.client_id
      ? { clientId: body.auth.client_id, clientSecret: body.auth.client_secret ?? null }
      : null,
  };
}

export function toMcpServerWire(server: McpServerView) {
  return {
    id: server.id,
    object: 'mcp_server' as const,
    name: server.name,
    url: server.url,
    auth: server.auth,
    has_api_key: server.hasSecret,
    api_key_header: server.apiKeyHeader,
    allowed_tools: server.allowedTools,
    timeout_s: server.timeoutMs / 1000,
    /** `pending`, `signed_in` or `needs_sign_in` for an OAuth server; null otherwise. Tokens are never returned. */
    oauth_status: server.oauthStatus,
    /** The pre-registered OAuth client's id (null: Prism registered itself); its secret is never returned. */
    oauth_client_id: server.oauthClientId,
    has_client_secret: server.hasClientSecret,
    ...(server.authorizationUrl ? { authorization_url: server.authorizationUrl } : {}),
    created_at: server.createdAt.toISOString(),
  };
}

/** A server's tool as agents see it: the name a run calls it by, and its own. */
export function toRemoteToolWire(server: McpServerView, tool: RemoteMcpTool) {
  return {
    name: `${server.name}__${tool.name}`,
    remote_name: tool.name,
    description: tool.description,
    input_schema: tool.inputSchema,
  };
}
