/**
 * Artifacts: bytes an agent run or a tool produced (page renders, frames, OCR text, layouts, CSV, JSON), owned by an
 * organisation and filed under an execution or a session. Object ids follow the hosted platform's
 * `<prefix>_<6 chars>` references so clients that parse them (`img_a1b2c3`) keep working.
 */

export const ARTIFACT_KINDS = ['image', 'video', 'audio', 'document', 'text', 'json', 'csv', 'layout'] as const;
export type ArtifactKind = (typeof ARTIFACT_KINDS)[number];

/** The object-id prefix of each kind. */
export const ARTIFACT_PREFIX: Readonly<Record<ArtifactKind, string>> = {
  image: 'img',
  video: 'vid',
  audio: 'aud',
  document: 'doc',
  text: 'txt',
  json: 'json',
  csv: 'csv',
  layout: 'lay',
};

export interface ArtifactRecord {
  objectId: string;
  orgId: string;
  executionId: string | null;
  sessionId: string | null;
  kind: ArtifactKind;
  filename: string;
  /** Exact media type without parameters (clients compare it verbatim). */
  mimeType: string;
  sha256: string;
  sizeBytes: number;
  createdAt: Date;
}
