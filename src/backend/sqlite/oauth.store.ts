/**
 * SQLite OAuthStore (migration 010): the MCP authorization server's clients, consent requests, codes and tokens.
 * Token reads join the sign-in key, the user and the organisation, so a revoked key ends its tokens at once and a
 * tier change applies to the next call.
 */

import type { OAuthStore } from '../../stores/types';
import type { SqliteDatabase } from './database';
import {
  type TokenRow,
  type RequestRow,
  type CodeRow,
  TOKEN_KEEP_S,
  toToken,
  tokenValues,
  toRequest,
  toCode,
  codeValues,
} from '../../stores/rows/oauth.rows';

export function createSqliteOAuthStore(db: SqliteDatabase): OAuthStore {
  const insertClient = db.prepare('INSERT INTO oauth_clients (client_id, info_json, created_at) VALUES (?, ?, ?)');
  const getClient = db.prepare<[string], { info_json: string }>(
    'SELECT info_json FROM oauth_clients WHERE client_id = ?',
  );
  const insertRequest = db.prepare(
    'INSERT INTO oauth_requests (id_hash, client_id, csrf_hash, params_json, expires_at) VALUES (?, ?, ?, ?, ?)',
  );
  const getRequest = db.prepare<[string, number], RequestRow>(
    'SELECT client_id, csrf_hash, params_json, expires_at FROM oauth_requests WHERE id_hash = ? AND expires_at > ?',
  );
  const deleteRequest = db.prepare('DELETE FROM oauth_requests WHERE id_hash = ?');
  const insertCode = db.prepare(
    `INSERT INTO oauth_codes (code_hash, grant_id, client_id, org_id, user_id, key_id, scopes, resource,
       code_challenge, redirect_uri, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const sweepCodes = db.prepare('DELETE FROM oauth_codes WHERE expires_at <= ?');
  const sweepRequests = db.prepare('DELETE FROM oauth_requests WHERE expires_at <= ?');
  const sweepTokens = db.prepare('DELETE FROM oauth_tokens WHERE expires_at <= ?');
  const getCode = db.prepare<[string, number], CodeRow>(
    'SELECT * FROM oauth_codes WHERE code_hash = ? AND expires_at > ? AND redeemed_at IS NULL',
  );
  const redeemCode = db.prepare<[number, string, number], CodeRow>(
    `UPDATE oauth_codes SET redeemed_at = ? WHERE code_hash = ? AND expires_at > ? AND redeemed_at IS NULL
     RETURNING *`,
  );
  const redeemedGrant = db.prepare<[string, number], { grant_id: string }>(
    'SELECT grant_id FROM oauth_codes WHERE code_hash = ? AND expires_at > ? AND redeemed_at IS NOT NULL',
  );
  const insertToken = db.prepare(
    `INSERT INTO oauth_tokens (token_hash, kind, grant_id, client_id, org_id, user_id, key_id, scopes, resource,
       expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const findToken = db.prepare<[string, string, number], TokenRow>(
    `SELECT t.kind, t.grant_id, t.client_id, t.org_id, t.user_id, t.key_id, t.scopes, t.resource, t.expires_at,
            t.revoked_at, o.tier, u.is_superuser
       FROM oauth_tokens t
       JOIN organisations o ON o.id = t.org_id
       JOIN users u ON u.id = t.user_id
       LEFT JOIN api_keys k ON k.id = t.key_id
      WHERE t.token_hash = ? AND t.kind = ? AND t.expires_at > ?
        AND (t.key_id IS NULL OR (k.id IS NOT NULL AND k.revoked_at IS NULL))`,
  );
  const revokeToken = db.prepare('UPDATE oauth_tokens SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL');
  const revokeGrant = db.prepare('UPDATE oauth_tokens SET revoked_at = ? WHERE grant_id = ? AND revoked_at IS NULL');

  const insertTokens = db.transaction((tokens: Parameters<OAuthStore['insertTokens']>[0]) => {
    for (const t of tokens) insertToken.run(tokenValues(t));
  });

  return {
    async insertClient(clientId, info) {
      insertClient.run(clientId, JSON.stringify(info), new Date().toISOString());
    },
    async getClient(clientId) {
      const row = getClient.get(clientId);
      return row ? (JSON.parse(row.info_json) as Record<string, unknown>) : null;
    },
    async insertRequest(idHash, record) {
      sweepRequests.run(Math.floor(Date.now() / 1000));
      insertRequest.run(idHash, record.clientId, record.csrfHash, JSON.stringify(record.params), record.expiresAt);
    },
    async getRequest(idHash, now) {
      const row = getRequest.get(idHash, now);
      return row ? toRequest(row) : null;
    },
    async takeRequest(idHash) {
      return deleteRequest.run(idHash).changes === 1;
    },
    async insertCode(codeHash, r, now) {
      sweepCodes.run(now);
      insertCode.run(codeValues(codeHash, r));
    },
    async getCode(codeHash, now) {
      const row = getCode.get(codeHash, now);
      return row ? toCode(row) : null;
    },
    async takeCode(codeHash, now) {
      const row = redeemCode.get(now, codeHash, now);
      return row ? toCode(row) : null;
    },
    async redeemedGrant(codeHash, now) {
      return redeemedGrant.get(codeHash, now)?.grant_id ?? null;
    },
    async insertTokens(tokens) {
      sweepTokens.run(Math.floor(Date.now() / 1000) - TOKEN_KEEP_S);
      insertTokens(tokens);
    },
    async findToken(tokenHash, kind, now) {
      const row = findToken.get(tokenHash, kind, now);
      return row ? toToken(row) : null;
    },
    async revokeToken(tokenHash, now) {
      return revokeToken.run(now, tokenHash).changes === 1;
    },
    async revokeGrant(grantId, now) {
      revokeGrant.run(now, grantId);
    },
  };
}
