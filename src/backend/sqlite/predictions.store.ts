/**
 * SQLite PredictionStore: prediction records, the blobs their inputs live in, and webhook delivery outcomes.
 *
 * Status changes are compare-and-set (`WHERE status IN (...)`), so a job runner and a restart sweep can never
 * both move the same record.
 */
import { type Prediction } from '../../domain/prediction';
import type { PredictionStore, StoredBytes } from '../../stores/types';
import { createBlobRecorder } from './blob-rows';
import type { SqliteDatabase } from './database';
import { transitionRow } from './status-update';
import { type PredictionRow, toPrediction } from '../../stores/rows/predictions.rows';
import {
  deliveryValues,
  insertDeliverySql,
  PREDICTION_DELIVERIES,
  selectDeliveriesSql,
  SQLITE_PLACEHOLDER,
  toDeliveryFields,
  type DeliveryRow,
} from '../../stores/rows/deliveries.rows';

export function createSqlitePredictionStore(db: SqliteDatabase): PredictionStore {
  const recordBlob = createBlobRecorder(db);
  const insertRow = db.prepare(
    `INSERT INTO predictions (id, org_id, kind, model, domain, status, request_json, inputs_json, response_json,
                              usage_json, error_message, callback_url, attempts, created_at, updated_at, completed_at)
     VALUES (@id, @org_id, @kind, @model, @domain, @status, @request_json, @inputs_json, @response_json,
             @usage_json, @error_message, @callback_url, @attempts, @created_at, @created_at, @completed_at)`,
  );
  const insertInput = db.prepare(
    'INSERT INTO prediction_inputs (prediction_id, position, sha256, content_type, filename) VALUES (?, ?, ?, ?, ?)',
  );
  const byOrgAndId = db.prepare<[string, string], PredictionRow>(
    'SELECT * FROM predictions WHERE org_id = ? AND id = ?',
  );
  const byId = db.prepare<[string], PredictionRow>('SELECT * FROM predictions WHERE id = ?');
  const page = db.prepare<[string, number, number], PredictionRow>(
    'SELECT * FROM predictions WHERE org_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?',
  );
  const unfinished = db.prepare<[], PredictionRow>(
    `SELECT * FROM predictions WHERE status IN ('pending', 'enqueued', 'running') ORDER BY created_at, rowid`,
  );
  const insertDelivery = db.prepare(insertDeliverySql(PREDICTION_DELIVERIES, SQLITE_PLACEHOLDER));
  const deliveries = db.prepare<[string], DeliveryRow>(selectDeliveriesSql(PREDICTION_DELIVERIES, SQLITE_PLACEHOLDER));

  const insertTx = db.transaction((p: Prediction, bytes: StoredBytes[]) => {
    const now = new Date().toISOString();
    for (const b of bytes) recordBlob(b, now);
    insertRow.run({
      id: p.id,
      org_id: p.orgId,
      kind: p.kind,
      model: p.model,
      domain: p.domain,
      status: p.status,
      request_json: JSON.stringify(p.request),
      inputs_json: JSON.stringify(p.inputs),
      response_json: p.response === null || p.response === undefined ? null : JSON.stringify(p.response),
      usage_json: JSON.stringify(p.usage),
      error_message: p.errorMessage,
      callback_url: p.callbackUrl,
      attempts: p.attempts,
      created_at: p.createdAt.toISOString(),
      completed_at: p.completedAt?.toISOString() ?? null,
    });
    p.inputs.forEach((input, position) =>
      insertInput.run(p.id, position, input.sha256, input.contentType, input.filename),
    );
  });

  return {
    async insert(prediction, inputBytes) {
      insertTx(prediction, inputBytes);
      return prediction;
    },
    async get(orgId, id) {
      const row = byOrgAndId.get(orgId, id);
      return row ? toPrediction(row) : null;
    },
    async getById(id) {
      const row = byId.get(id);
      return row ? toPrediction(row) : null;
    },
    async list(orgId, { skip, limit }) {
      return page.all(orgId, limit, skip).map(toPrediction);
    },
    async transition(id, from, to, update = {}, claim) {
      const row = transitionRow<PredictionRow>(
        db,
        'predictions',
        { id, from, to, claim },
        {
          response_json:
            'response' in update
              ? update.response === null || update.response === undefined
                ? null
                : JSON.stringify(update.response)
              : undefined,
          usage_json: update.usage ? JSON.stringify(update.usage) : undefined,
          error_message: 'errorMessage' in update ? (update.errorMessage ?? null) : undefined,
          completed_at: 'completedAt' in update ? (update.completedAt?.toISOString() ?? null) : undefined,
          attempts: update.attempts,
        },
      );
      return row ? toPrediction(row) : null;
    },
    async unfinished() {
      return unfinished.all().map(toPrediction);
    },
    async recordDelivery(d) {
      insertDelivery.run(...deliveryValues(d.predictionId, d));
    },
    async deliveries(predictionId) {
      return deliveries.all(predictionId).map((r) => ({ predictionId: r.subject_id, ...toDeliveryFields(r) }));
    },
  };
}
