/**
 * The langgraph tables' rows as both SQL dialects answer them, and their mapping to domain records: written once,
 * imported by the SQLite and the PostgreSQL stores alike, so neither backend imports the other.
 */
import type { LangGraphDoc, LangGraphDocKind } from '../types';

export interface LangGraphDocRow {
  org_id: string;
  kind: LangGraphDocKind;
  id: string;
  parent: string;
  body_json: string | Record<string, unknown>;
  vector: Buffer | null;
  created_at: string | Date;
  updated_at: string | Date;
  expires_at: string | Date | null;
}

export const vectorBytes = (vector: Float32Array | null): Buffer | null =>
  vector === null ? null : Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);

export const toLangGraphDoc = (r: LangGraphDocRow): LangGraphDoc => ({
  orgId: r.org_id,
  kind: r.kind,
  id: r.id,
  parent: r.parent,
  body: typeof r.body_json === 'string' ? (JSON.parse(r.body_json) as Record<string, unknown>) : r.body_json,
  vector:
    r.vector === null ? null : new Float32Array(new Uint8Array(r.vector).buffer, 0, Math.floor(r.vector.length / 4)),
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
  expiresAt: r.expires_at === null ? null : new Date(r.expires_at),
});

/** `%` and `_` in a namespace are literal in a LIKE prefix. */
export const likePrefix = (prefix: string): string => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}.%`;
