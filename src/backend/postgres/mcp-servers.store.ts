/** PostgreSQL McpServerStore: an organisation's remote MCP servers (one row each, unique by name per organisation). */
import type pg from 'pg';
import {
  MCP_SERVER_COLUMNS,
  mcpServerValues,
  oauthUpdateValues,
  toMcpServer,
  type McpServerRow,
} from '../../stores/rows/mcp-servers.rows';
import type { McpServerStore } from '../../stores/types/mcp-server';

export function createPostgresMcpServerStore(pool: pg.Pool): McpServerStore {
  return {
    async insert(record) {
      const { rowCount } = await pool.query(
        `INSERT INTO mcp_servers (${MCP_SERVER_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
         ON CONFLICT (org_id, name) DO NOTHING`,
        mcpServerValues(record),
      );
      return rowCount === 1;
    },
    async list(orgId) {
      const { rows } = await pool.query<McpServerRow>(
        'SELECT * FROM mcp_servers WHERE org_id = $1 ORDER BY created_at DESC, seq DESC',
        [orgId],
      );
      return rows.map(toMcpServer);
    },
    async get(orgId, id) {
      const row = (
        await pool.query<McpServerRow>('SELECT * FROM mcp_servers WHERE org_id = $1 AND id = $2', [orgId, id])
      ).rows[0];
      return row ? toMcpServer(row) : null;
    },
    async findByNames(orgId, names) {
      const { rows } = await pool.query<McpServerRow>(
        'SELECT * FROM mcp_servers WHERE org_id = $1 AND name = ANY($2::text[])',
        [orgId, [...new Set(names)]],
      );
      return rows.map(toMcpServer);
    },
    async updateOAuth(orgId, id, update) {
      const { rowCount } = await pool.query(
        `UPDATE mcp_servers SET secret_sealed = $1, oauth_status = $2, oauth_state_hash = $3, oauth_state_expires_at = $4
         WHERE org_id = $5 AND id = $6`,
        [...oauthUpdateValues(update), orgId, id],
      );
      return rowCount === 1;
    },
    async claimRefresh(orgId, id, owner, now, until) {
      const { rowCount } = await pool.query(
        `UPDATE mcp_servers SET oauth_refresh_owner = $1, oauth_refresh_until = $2
         WHERE org_id = $3 AND id = $4 AND (oauth_refresh_until IS NULL OR oauth_refresh_until <= $5)`,
        [owner, until.getTime(), orgId, id, now.getTime()],
      );
      return rowCount === 1;
    },
    async finishRefresh(orgId, id, owner, update) {
      const { rowCount } =
        update === null
          ? await pool.query(
              `UPDATE mcp_servers SET oauth_refresh_owner = NULL, oauth_refresh_until = NULL
               WHERE org_id = $1 AND id = $2 AND oauth_refresh_owner = $3`,
              [orgId, id, owner],
            )
          : await pool.query(
              `UPDATE mcp_servers SET secret_sealed = $1, oauth_status = $2, oauth_state_hash = $3,
                 oauth_state_expires_at = $4, oauth_refresh_owner = NULL, oauth_refresh_until = NULL
               WHERE org_id = $5 AND id = $6 AND oauth_refresh_owner = $7`,
              [...oauthUpdateValues(update), orgId, id, owner],
            );
      return rowCount === 1;
    },
    async takeOAuthState(stateHash, now) {
      const { rows } = await pool.query<McpServerRow>(
        `UPDATE mcp_servers SET oauth_state_hash = NULL, oauth_state_expires_at = NULL
         WHERE oauth_state_hash = $1 AND oauth_state_expires_at > $2 RETURNING *`,
        [stateHash, now.getTime()],
      );
      return rows[0] ? toMcpServer(rows[0]) : null;
    },
    async delete(orgId, id) {
      const { rowCount } = await pool.query('DELETE FROM mcp_servers WHERE org_id = $1 AND id = $2', [orgId, id]);
      return rowCount === 1;
    },
  };
}
