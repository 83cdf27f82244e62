/** SQLite McpServerStore: an organisation's remote MCP servers (one row each, unique by name per organisation). */
import type { McpServerAuth, McpServerOAuthStatus, McpServerRecord } from '../../domain/mcp-server';
import type { McpServerOAuthUpdate, McpServerStore } from '../../stores/types/mcp-server';
import type { SqliteDatabase } from './database';

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
];

export const MCP_SERVER_COLUMNS =
  'id, org_id, name, url, auth_kind, secret_sealed, api_key_header, allowed_tools_json, timeout_ms, created_at, ' +
  'oauth_status, oauth_state_hash, oauth_state_expires_at';

/** An OAuth update's values, in the order of both dialects' UPDATE (then org id and id). */
export const oauthUpdateValues = (u: McpServerOAuthUpdate): (string | number | null)[] => [
  u.secretSealed,
  u.oauthStatus,
  u.oauthStateHash,
  u.oauthStateExpiresAt === null ? null : u.oauthStateExpiresAt.getTime(),
];

export function createSqliteMcpServerStore(db: SqliteDatabase): McpServerStore {
  const insertRow = db.prepare(
    `INSERT INTO mcp_servers (${MCP_SERVER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (org_id, name) DO NOTHING`,
  );
  const all = db.prepare<[string], McpServerRow>(
    'SELECT * FROM mcp_servers WHERE org_id = ? ORDER BY created_at DESC, rowid DESC',
  );
  const byId = db.prepare<[string, string], McpServerRow>('SELECT * FROM mcp_servers WHERE org_id = ? AND id = ?');
  const byName = db.prepare<[string, string], McpServerRow>('SELECT * FROM mcp_servers WHERE org_id = ? AND name = ?');
  const remove = db.prepare('DELETE FROM mcp_servers WHERE org_id = ? AND id = ?');
  const updateOAuth = db.prepare(
    `UPDATE mcp_servers SET secret_sealed = ?, oauth_status = ?, oauth_state_hash = ?, oauth_state_expires_at = ?
     WHERE org_id = ? AND id = ?`,
  );
  const takeState = db.prepare<[string, number], McpServerRow>(
    `UPDATE mcp_servers SET oauth_state_hash = NULL, oauth_state_expires_at = NULL
     WHERE oauth_state_hash = ? AND oauth_state_expires_at > ? RETURNING *`,
  );
  return {
    insert: (record) => Promise.resolve(insertRow.run(...mcpServerValues(record)).changes === 1),
    list: (orgId) => Promise.resolve(all.all(orgId).map(toMcpServer)),
    get(orgId, id) {
      const row = byId.get(orgId, id);
      return Promise.resolve(row ? toMcpServer(row) : null);
    },
    findByNames(orgId, names) {
      const rows = [...new Set(names)].map((name) => byName.get(orgId, name)).filter((r) => r !== undefined);
      return Promise.resolve(rows.map(toMcpServer));
    },
    delete: (orgId, id) => Promise.resolve(remove.run(orgId, id).changes === 1),
    updateOAuth: (orgId, id, update) =>
      Promise.resolve(updateOAuth.run(...oauthUpdateValues(update), orgId, id).changes === 1),
    takeOAuthState(stateHash, now) {
      const row = takeState.get(stateHash, now.getTime());
      return Promise.resolve(row ? toMcpServer(row) : null);
    },
  };
}
