/**
 * What the predictions and webhooks services may ask of persistence about predictions and their webhook deliveries.
 */
import type { StoredBytes } from '../../domain/file';
import type { Prediction, PredictionUsage, Status } from '../../domain/prediction';

/** Fields a status change may set together with the new status. */
export interface PredictionUpdate {
  response?: unknown;
  usage?: PredictionUsage;
  errorMessage?: string | null;
  completedAt?: Date | null;
  attempts?: number;
}

export interface PredictionStore {
  /** Inserts the record and references its input blobs (recording the blobs) in one transaction. */
  insert(prediction: Prediction, inputBytes: StoredBytes[]): Promise<Prediction>;
  get(orgId: string, id: string): Promise<Prediction | null>;
  /** For the job runner, which works across organisations. */
  getById(id: string): Promise<Prediction | null>;
  list(orgId: string, page: { skip: number; limit: number }): Promise<Prediction[]>;
  /**
   * Moves the record to `to` only if it is in one of `from` (compare-and-set); returns the updated record, or
   * null when another writer moved it first.
   * @param claim when given, the record must also still have these `attempts` (the claim a worker took it with):
   *   a worker whose run another replica took over, after its lease ran out, then finishes nothing.
   */
  transition(
    id: string,
    from: readonly Status[],
    to: Status,
    update?: PredictionUpdate,
    claim?: number,
  ): Promise<Prediction | null>;
  /** Records that were not finished when the process stopped: pending/enqueued (batch) and running. */
  unfinished(): Promise<Prediction[]>;
  recordDelivery(delivery: WebhookDelivery): Promise<void>;
  deliveries(predictionId: string): Promise<WebhookDelivery[]>;
}

export interface WebhookDelivery {
  predictionId: string;
  url: string;
  attempt: number;
  statusCode: number | null;
  outcome: 'delivered' | 'failed' | 'gave_up';
  error: string | null;
  createdAt: Date;
}
