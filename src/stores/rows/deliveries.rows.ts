/**
 * Webhook deliveries, written once for both record kinds and both SQL dialects: a prediction's attempts live in
 * `webhook_deliveries`, an execution's in `execution_webhook_deliveries`, with the same columns but the record's id.
 * The statements are built here with the dialect's placeholder (`?` on SQLite, `$n` on PostgreSQL), the record's id
 * read back as `subject_id`, so each store's `recordDelivery` and `deliveries` are one line of its own driver.
 */
import type { WebhookDelivery } from '../types/prediction';

/** One delivery table: its name and the column that holds the record's id. */
export interface DeliveryTable {
  table: 'webhook_deliveries' | 'execution_webhook_deliveries';
  idColumn: 'prediction_id' | 'execution_id';
}

export const PREDICTION_DELIVERIES: DeliveryTable = { table: 'webhook_deliveries', idColumn: 'prediction_id' };
export const EXECUTION_DELIVERIES: DeliveryTable = {
  table: 'execution_webhook_deliveries',
  idColumn: 'execution_id',
};

/** A delivery as both dialects answer the SELECT below. */
export interface DeliveryRow {
  subject_id: string;
  url: string;
  attempt: number;
  status_code: number | null;
  outcome: WebhookDelivery['outcome'];
  error: string | null;
  created_at: string;
}

/** A delivery's fields apart from the record's id (whose name differs by record kind). */
export type DeliveryFields = Omit<WebhookDelivery, 'predictionId'>;

/** The n-th (1-based) placeholder of a dialect. */
export type Placeholder = (n: number) => string;
export const SQLITE_PLACEHOLDER: Placeholder = () => '?';
export const POSTGRES_PLACEHOLDER: Placeholder = (n) => `$${n}`;

export const insertDeliverySql = (t: DeliveryTable, p: Placeholder): string =>
  `INSERT INTO ${t.table} (${t.idColumn}, url, attempt, status_code, outcome, error, created_at) VALUES (${[
    1, 2, 3, 4, 5, 6, 7,
  ]
    .map(p)
    .join(', ')})`;

export const selectDeliveriesSql = (t: DeliveryTable, p: Placeholder): string =>
  `SELECT ${t.idColumn} AS subject_id, url, attempt, status_code, outcome, error, created_at FROM ${t.table} ` +
  `WHERE ${t.idColumn} = ${p(1)} ORDER BY id`;

/** The INSERT's parameters, in its column order. */
export const deliveryValues = (subjectId: string, d: DeliveryFields): unknown[] => [
  subjectId,
  d.url,
  d.attempt,
  d.statusCode,
  d.outcome,
  d.error,
  d.createdAt.toISOString(),
];

export const toDeliveryFields = (r: DeliveryRow): DeliveryFields => ({
  url: r.url,
  attempt: r.attempt,
  statusCode: r.status_code,
  outcome: r.outcome,
  error: r.error,
  createdAt: new Date(r.created_at),
});
