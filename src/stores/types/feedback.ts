/**
 * What the feedback service may ask of persistence about feedback on predictions and executions.
 */
import type { FeedbackEntityType, FeedbackRecord } from '../../domain/feedback';

export interface FeedbackStore {
  insert(record: FeedbackRecord): Promise<FeedbackRecord>;
  list(
    orgId: string,
    entity: { type: FeedbackEntityType; id: string },
    page: { limit: number; offset: number },
  ): Promise<FeedbackRecord[]>;
}
