/**
 * PostgreSQL OAuthStore (migration 010): the MCP authorization server's clients, consent requests, codes and tokens,
 * shared by every replica (a code issued on one is redeemed on another). Single use is one statement each:
 * `DELETE … RETURNING` for requests and codes, a conditional `UPDATE` for token revocation, so two replicas racing
 * on the same code or refresh token get one winner. Rows and insert values map through the SQLite store's
 * mappers.
 */
import type pg from 'pg';
import {
  codeValues,
  toCode,
  toRequest,
  tokenValues,
  toToken,
  TOKEN_KEEP_S,
  type CodeRow,
  type RequestRow,
  type TokenRow,
} from '../../stores/rows/oauth.rows';
import type { OAuthStore } from '../../stores/types';
import { withTransaction } from './database';

export function createPostgresOAuthStore(pool: pg.Pool): OAuthStore {
  const nowS = (): number => Math.floor(Date.now() / 1000);

  return {
    async insertClient(clientId, info) {
      await pool.query('INSERT INTO oauth_clients (client_id, info_json, created_at) VALUES ($1, $2, $3)', [
        clientId,
        JSON.stringify(info),
        new Date().toISOString(),
      ]);
    },
    async getClient(clientId) {
      const { rows } = await pool.query<{ info_json: string }>(
        'SELECT info_json FROM oauth_clients WHERE client_id = $1',
        [clientId],
      );
      return rows[0] ? (JSON.parse(rows[0].info_json) as Record<string, unknown>) : null;
    },
    async insertRequest(idHash, record) {
      await pool.query('DELETE FROM oauth_requests WHERE expires_at <= $1', [nowS()]);
      await pool.query(
        'INSERT INTO oauth_requests (id_hash, client_id, csrf_hash, params_json, expires_at) VALUES ($1, $2, $3, $4, $5)',
        [idHash, record.clientId, record.csrfHash, JSON.stringify(record.params), record.expiresAt],
      );
    },
    async getRequest(idHash, now) {
      const { rows } = await pool.query<RequestRow>(
        'SELECT client_id, csrf_hash, params_json, expires_at FROM oauth_requests WHERE id_hash = $1 AND expires_at > $2',
        [idHash, now],
      );
      return rows[0] ? toRequest(rows[0]) : null;
    },
    async takeRequest(idHash) {
      const result = await pool.query('DELETE FROM oauth_requests WHERE id_hash = $1', [idHash]);
      return result.rowCount === 1;
    },
    async insertCode(codeHash, r, now) {
      await pool.query('DELETE FROM oauth_codes WHERE expires_at <= $1', [now]);
      await pool.query(
        `INSERT INTO oauth_codes (code_hash, grant_id, client_id, org_id, user_id, key_id, scopes, resource,
           code_challenge, redirect_uri, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        codeValues(codeHash, r),
      );
    },
    async getCode(codeHash, now) {
      const { rows } = await pool.query<CodeRow>(
        'SELECT * FROM oauth_codes WHERE code_hash = $1 AND expires_at > $2 AND redeemed_at IS NULL',
        [codeHash, now],
      );
      return rows[0] ? toCode(rows[0]) : null;
    },
    async takeCode(codeHash, now) {
      // One UPDATE: of two replicas exchanging the same code at once, only one gets a row back.
      const { rows } = await pool.query<CodeRow>(
        `UPDATE oauth_codes SET redeemed_at = $2 WHERE code_hash = $1 AND expires_at > $2 AND redeemed_at IS NULL
         RETURNING *`,
        [codeHash, now],
      );
      return rows[0] ? toCode(rows[0]) : null;
    },
    async redeemedGrant(codeHash, now) {
      const { rows } = await pool.query<{ grant_id: string }>(
        'SELECT grant_id FROM oauth_codes WHERE code_hash = $1 AND expires_at > $2 AND redeemed_at IS NOT NULL',
        [codeHash, now],
      );
      return rows[0]?.grant_id ?? null;
    },
    async insertTokens(tokens) {
      await pool.query('DELETE FROM oauth_tokens WHERE expires_at <= $1', [nowS() - TOKEN_KEEP_S]);
      await withTransaction(pool, async (client) => {
        for (const t of tokens) {
          await client.query(
            `INSERT INTO oauth_tokens (token_hash, kind, grant_id, client_id, org_id, user_id, key_id, scopes, resource,
               expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
            tokenValues(t),
          );
        }
      });
    },
    async findToken(tokenHash, kind, now) {
      const { rows } = await pool.query<TokenRow>(
        `SELECT t.kind, t.grant_id, t.client_id, t.org_id, t.user_id, t.key_id, t.scopes, t.resource, t.expires_at,
                t.revoked_at, o.tier, u.is_superuser
           FROM oauth_tokens t
           JOIN organisations o ON o.id = t.org_id
           JOIN users u ON u.id = t.user_id
           LEFT JOIN api_keys k ON k.id = t.key_id
          WHERE t.token_hash = $1 AND t.kind = $2 AND t.expires_at > $3
            AND (t.key_id IS NULL OR (k.id IS NOT NULL AND k.revoked_at IS NULL))`,
        [tokenHash, kind, now],
      );
      return rows[0] ? toToken(rows[0]) : null;
    },
    async revokeToken(tokenHash, now) {
      const result = await pool.query(
        'UPDATE oauth_tokens SET revoked_at = $1 WHERE token_hash = $2 AND revoked_at IS NULL',
        [now, tokenHash],
      );
      return result.rowCount === 1;
    },
    async revokeGrant(grantId, now) {
      await pool.query('UPDATE oauth_tokens SET revoked_at = $1 WHERE grant_id = $2 AND revoked_at IS NULL', [
        now,
        grantId,
      ]);
    },
  };
}
