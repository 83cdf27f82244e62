/**
 * Wire shapes of artifacts: the `GET /v1/artifacts` query (spec bounds: limit 1..1000 default 100, offset >= 0)
 * and the metadata record of one artifact.
 */
import { z } from 'zod';
import type { ArtifactRecord } from '../domain/artifact';
import { queryInt } from './common.schemas';

export const artifactsQuerySchema = z.object({
  session_id: z.string().min(1).nullish(),
  execution_id: z.string().min(1).nullish(),
  object_id: z.string().min(1).nullish(),
  filename: z.string().min(1).nullish(),
  limit: queryInt({ min: 1, max: 1000, default: 100 }),
  offset: queryInt({ min: 0, default: 0 }),
});

export function toArtifactWire(a: ArtifactRecord) {
  return {
    object_id: a.objectId,
    filename: a.filename,
    source: 'store',
    kind: a.kind,
    mime_type: a.mimeType,
    size_bytes: a.sizeBytes,
    execution_id: a.executionId,
    session_id: a.sessionId,
    created_at: a.createdAt.toISOString(),
  };
}
