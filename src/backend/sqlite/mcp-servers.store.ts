/** SQLite McpServerStore: an organisation's remote MCP servers (one row each, unique by name per organisation). */

import type { McpServerStore } from '../../stores/types/mcp-server';
import type { SqliteDatabase } from './database';
import {
  type McpServerRow,
  toMcpServer,
  oauthUpdateValues,
  mcpServerValues,
  MCP_SERVER_COLUMNS,
} from '../../stores/rows/mcp-servers.rows';

export function createSqliteMcpServerStore(db: SqliteDatabase): McpServerStore {
  const insertRow = db.prepare(
    `INSERT INTO mcp_servers (${MCP_SERVER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
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
  const claim = db.prepare(
    `UPDATE mcp_servers SET oauth_refresh_owner = ?, oauth_refresh_until = ?
     WHERE org_id = ? AND id = ? AND (oauth_refresh_until IS NULL OR oauth_refresh_until <= ?)`,
  );
  const finishWith = db.prepare(
    `UPDATE mcp_servers SET secret_sealed = ?, oauth_status = ?, oauth_state_hash = ?, oauth_state_expires_at = ?,
       oauth_refresh_owner = NULL, oauth_refresh_until = NULL
     WHERE org_id = ? AND id = ? AND oauth_refresh_owner = ?`,
  );
  const release = db.prepare(
    `UPDATE mcp_servers SET oauth_refresh_owner = NULL, oauth_refresh_until = NULL
     WHERE org_id = ? AND id = ? AND oauth_refresh_owner = ?`,
  );
  return {
    claimRefresh: (orgId, id, owner, now, until) =>
      Promise.resolve(claim.run(owner, until.getTime(), orgId, id, now.getTime()).changes === 1),
    finishRefresh: (orgId, id, owner, update) =>
      Promise.resolve(
        (update === null
          ? release.run(orgId, id, owner)
          : finishWith.run(...oauthUpdateValues(update), orgId, id, owner)
        ).changes === 1,
      ),
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
