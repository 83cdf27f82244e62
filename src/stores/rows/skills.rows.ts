/**
 * The skills tables' rows as both SQL dialects answer them, and their mapping to domain records: written once,
 * imported by the SQLite and the PostgreSQL stores alike, so neither backend imports the other.
 */
import type { SkillRecord, SkillStatus } from '../../domain/skill';

export interface SkillRow {
  id: string;
  org_id: string | null;
  name: string;
  skill_version: string;
  description: string;
  is_public: number;
  status: SkillStatus;
  content_hash: string;
  size_bytes: number;
  created_at: string;
  updated_at: string;
}

export const toSkill = (r: SkillRow): SkillRecord => ({
  id: r.id,
  name: r.name,
  skillVersion: r.skill_version,
  description: r.description,
  orgId: r.org_id,
  isPublic: r.is_public === 1,
  status: r.status,
  contentHash: r.content_hash,
  sizeBytes: r.size_bytes,
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
});
