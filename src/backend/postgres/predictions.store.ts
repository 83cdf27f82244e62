/**
 * PostgreSQL PredictionStore: prediction records, the blobs their inputs live in, and webhook delivery outcomes.
 * Status changes are compare-and-set, so a job runner on one replica and a restart sweep on another can never both
 * move the same record.
 */
import type pg from 'pg';
import { toPrediction, type PredictionRow } from '../../stores/rows/predictions.rows';
import {
  deliveryValues,
  insertDeliverySql,
  POSTGRES_PLACEHOLDER,
  PREDICTION_DELIVERIES,
  selectDeliveriesSql,
  toDeliveryFields,
  type DeliveryRow,
} from '../../stores/rows/deliveries.rows';
import type { PredictionStore } from '../../stores/types';
import { recordBlob } from './blob-rows';
import { withTransaction } from './database';
import { jsonOrNull, transitionRow } from './status-update';

export function createPostgresPredictionStore(pool: pg.Pool): PredictionStore {
  const rows = async (sql: string, params: unknown[]): Promise<PredictionRow[]> =>
    (await pool.query<PredictionRow>(sql, params)).rows;

  return {
    async insert(p, inputBytes) {
      await withTransaction(pool, async (client) => {
        const now = new Date().toISOString();
        for (const b of inputBytes) await recordBlob(client, b, now);
        await client.query(
          `INSERT INTO predictions (id, org_id, kind, model, domain, status, request_json, inputs_json, response_json,
                                    usage_json, error_message, callback_url, attempts, created_at, updated_at,
                                    completed_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14, $15)`,
          [
            p.id,
            p.orgId,
            p.kind,
            p.model,
            p.domain,
            p.status,
            JSON.stringify(p.request),
            JSON.stringify(p.inputs),
            jsonOrNull(p.response),
            JSON.stringify(p.usage),
            p.errorMessage,
            p.callbackUrl,
            p.attempts,
            p.createdAt.toISOString(),
            p.completedAt?.toISOString() ?? null,
          ],
        );
        if (p.inputs.length > 0) {
          await client.query(
            `INSERT INTO prediction_inputs (prediction_id, position, sha256, content_type, filename)
             SELECT $1, i.position - 1, i.sha256, i.content_type, i.filename
               FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS i(sha256, content_type, filename, position)`,
            [p.id, p.inputs.map((i) => i.sha256), p.inputs.map((i) => i.contentType), p.inputs.map((i) => i.filename)],
          );
        }
      });
      return p;
    },
    async get(orgId, id) {
      const [row] = await rows('SELECT * FROM predictions WHERE org_id = $1 AND id = $2', [orgId, id]);
      return row ? toPrediction(row) : null;
    },
    async getById(id) {
      const [row] = await rows('SELECT * FROM predictions WHERE id = $1', [id]);
      return row ? toPrediction(row) : null;
    },
    async list(orgId, { skip, limit }) {
      return (
        await rows(
          'SELECT * FROM predictions WHERE org_id = $1 ORDER BY created_at DESC, seq DESC LIMIT $2 OFFSET $3',
          [orgId, limit, skip],
        )
      ).map(toPrediction);
    },
    async transition(id, from, to, update = {}, claim) {
      const row = await transitionRow<PredictionRow>(
        pool,
        'predictions',
        { id, from, to, claim },
        {
          response_json: 'response' in update ? jsonOrNull(update.response) : undefined,
          usage_json: update.usage ? JSON.stringify(update.usage) : undefined,
          error_message: 'errorMessage' in update ? (update.errorMessage ?? null) : undefined,
          completed_at: 'completedAt' in update ? (update.completedAt?.toISOString() ?? null) : undefined,
          attempts: update.attempts,
        },
      );
      return row ? toPrediction(row) : null;
    },
    async unfinished() {
      return (
        await rows(
          `SELECT * FROM predictions WHERE status IN ('pending', 'enqueued', 'running') ORDER BY created_at, seq`,
          [],
        )
      ).map(toPrediction);
    },
    async recordDelivery(d) {
      await pool.query(
        insertDeliverySql(PREDICTION_DELIVERIES, POSTGRES_PLACEHOLDER),
        deliveryValues(d.predictionId, d),
      );
    },
    async deliveries(predictionId) {
      const { rows: found } = await pool.query<DeliveryRow>(
        selectDeliveriesSql(PREDICTION_DELIVERIES, POSTGRES_PLACEHOLDER),
        [predictionId],
      );
      return found.map((r) => ({ predictionId: r.subject_id, ...toDeliveryFields(r) }));
    },
  };
}
