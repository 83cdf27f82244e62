/**
 * The mcp-servers tables' rows as both SQL dialects answer them, and their mapping to domain records: written once,
 * imported by the SQLite and the PostgreSQL stores alike, so neither backend imports the other.
 */
import type { McpServerAuth, McpServerOAuthStatus, McpServerRecord } from '../../domain/mcp-server';
import type { McpServerOAuthUpdate } from '../types/mcp-server';

export interface McpServerRow {
  id: string;
  org_id: string;
  name: string;
  url: string;
  auth_kind: string;
  secret_sealed: string | null;
  api_key_header: string | null;
  allowed_tools_json: string | null;
  timeout_ms: number;
  created_at: string | Date;
  oauth_status: string | null;
  oauth_state_hash: string | null;
  oauth_state_expires_at: number | string | null;
  oauth_client_id: string | null;
  oauth_client_secret_sealed: string | null;
}

export const toMcpServer = (r: McpServerRow): McpServerRecord => ({
  id: r.id,
  orgId: r.org_id,
  name: r.name,
  url: r.url,
  auth: r.auth_kind as McpServerAuth,
  secretSealed: r.secret_sealed,
  apiKeyHeader: r.api_key_header,
  allowedTools: r.allowed_tools_json === null ? null : (JSON.parse(r.allowed_tools_json) as string[]),
  timeoutMs: Number(r.timeout_ms),
  oauthStatus: r.oauth_status as McpServerOAuthStatus | null,
  oauthStateHash: r.oauth_state_hash,
  oauthStateExpiresAt: r.oauth_state_expires_at === null ? null : new Date(Number(r.oauth_state_expires_at)),
  oauthClientId: r.oauth_client_id,
  oauthClientSecretSealed: r.oauth_client_secret_sealed,
  createdAt: new Date(r.created_at),
});

/** The row's values in column order (id … created_at), for both dialects' inserts. */
export const mcpServerValues = (s: McpServerRecord): (string | number | null)[] => [
  s.id,
  s.orgId,
  s.name,
  s.url,
  s.auth,
  s.secretSealed,
  s.apiKeyHeader,
  s.allowedTools === null ? null : JSON.stringify(s.allowedTools),
  s.timeoutMs,
  s.createdAt.toISOString(),
  s.oauthStatus,
  s.oauthStateHash,
  s.oauthStateExpiresAt === null ? null : s.oauthStateExpiresAt.getTime(),
  s.oauthClientId,
  s.oauthClientSecretSealed,
];

export const MCP_SERVER_COLUMNS =
  'id, org_id, name, url, auth_kind, secret_sealed, api_key_header, allowed_tools_json, timeout_ms, created_at, ' +
  'oauth_status, oauth_state_hash, oauth_state_expires_at, oauth_client_id, oauth_client_secret_sealed';

/** An OAuth update's values, in the order of both dialects' UPDATE (then org id and id). */
export const oauthUpdateValues = (u: McpServerOAuthUpdate): (string | number | null)[] => [
  u.secretSealed,
  u.oauthStatus,
  u.oauthStateHash,
  u.oauthStateExpiresAt === null ? null : u.oauthStateExpiresAt.getTime(),
];
