/**
 * What the skills service may ask of persistence about skill versions, scoped to an organisation plus the public set.
 */
import type { StoredBytes } from '../../domain/file';
import type { SkillRecord } from '../../domain/skill';

/** How a skill version was made. */
export type SkillSource = 'zip' | 'prompt' | 'session' | 'builtin';

/**
 * Whose skills a read may see: `orgId`'s plus the public ones; `orgId: null` (a guest) sees public ones only.
 * Where an organisation and the public set both hold a name, the organisation's skill wins.
 */
export interface SkillScope {
  orgId: string | null;
}

export type SkillOrder = 'created_at' | 'updated_at' | 'name';

export interface SkillListQuery {
  limit: number;
  offset: number;
  orderBy: SkillOrder;
  descending: boolean;
  /** Only the latest version of each name. */
  grouped: boolean;
}

export interface SkillStore {
  /**
   * Inserts a version and records its zip blob in one transaction. When the scope already holds the same bytes under
   * the same name, nothing is written and that record is returned (`created: false`).
   */
  insert(
    record: SkillRecord,
    source: SkillSource,
    content: StoredBytes,
  ): Promise<{ record: SkillRecord; created: boolean }>;
  get(scope: SkillScope, id: string): Promise<SkillRecord | null>;
  /** A version by id whatever its organisation: only for signed download links, whose signature is the credential. */
  getBySignedId(id: string): Promise<SkillRecord | null>;
  /**
   * A version by name: `latest`, an exact `skill_version` string, or a 1-based revision number (`"3"`: the third
   * version created under that name).
   */
  findByName(scope: SkillScope, name: string, version: string): Promise<SkillRecord | null>;
  list(scope: SkillScope, query: SkillListQuery): Promise<SkillRecord[]>;
}
