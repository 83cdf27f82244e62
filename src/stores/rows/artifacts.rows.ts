/**
 * The artifacts tables' rows as both SQL dialects answer them, and their mapping to domain records: written once,
 * imported by the SQLite and the PostgreSQL stores alike, so neither backend imports the other.
 */
import type { ArtifactKind, ArtifactRecord } from '../../domain/artifact';

export interface ArtifactRow {
  object_id: string;
  org_id: string;
  execution_id: string | null;
  session_id: string | null;
  kind: ArtifactKind;
  filename: string;
  mime_type: string;
  sha256: string;
  size_bytes: number;
  created_at: string;
}

export const toArtifact = (r: ArtifactRow): ArtifactRecord => ({
  objectId: r.object_id,
  orgId: r.org_id,
  executionId: r.execution_id,
  sessionId: r.session_id,
  kind: r.kind,
  filename: r.filename,
  mimeType: r.mime_type,
  sha256: r.sha256,
  sizeBytes: r.size_bytes,
  createdAt: new Date(r.created_at),
});
