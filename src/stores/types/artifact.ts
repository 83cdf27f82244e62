/**
 * What the artifacts service asks of persistence: artifact rows (the blob row of their bytes is written in the same
 * transaction, so the start-up sweep keeps them). Every read is scoped by organisation.
 */
import type { ArtifactRecord } from '../../domain/artifact';
import type { StoredBytes } from '../../domain/file';

export interface ArtifactScope {
  executionId?: string | undefined;
  sessionId?: string | undefined;
}

export interface ArtifactStore {
  /** @returns false when the object id is taken (the caller draws another). */
  insert(artifact: ArtifactRecord, content: StoredBytes): Promise<boolean>;
  get(orgId: string, objectId: string): Promise<ArtifactRecord | null>;
  /** By filename within an execution or session (the newest with that name). */
  findByFilename(orgId: string, scope: ArtifactScope, filename: string): Promise<ArtifactRecord | null>;
  /** Oldest first, within an execution or session. */
  list(orgId: string, scope: ArtifactScope, page: { offset: number; limit: number }): Promise<ArtifactRecord[]>;
  count(orgId: string, scope: ArtifactScope): Promise<number>;
}
