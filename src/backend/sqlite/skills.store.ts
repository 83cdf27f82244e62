/**
 * SQLite SkillStore: skill versions, each visible to its organisation, public ones (org_id NULL) to everyone.
 *
 * The record and its `blobs` row are written in one transaction after the zip is on disk, so a crash leaves at
 * most an unreferenced blob (swept at start), never a record without its bytes. Where an organisation and the
 * public set share a name, reads by name prefer the organisation's versions.
 */
import type { SkillRecord } from '../../domain/skill';
import type { SkillListQuery, SkillOrder, SkillSource, SkillStore, StoredBytes } from '../../stores/types';
import { createBlobRecorder } from './blob-rows';
import type { SqliteDatabase } from './database';
import { type SkillRow, toSkill } from '../../stores/rows/skills.rows';

const VISIBLE = '(org_id = @org OR org_id IS NULL)';
/** Organisation's versions before public ones, then newest first. */
const PREFERRED = '(org_id IS NULL), created_at DESC, rowid DESC';
const COLUMNS: Record<SkillOrder, string> = { created_at: 'created_at', updated_at: 'updated_at', name: 'name' };

type Params = Record<string, string | number | null>;

export function createSqliteSkillStore(db: SqliteDatabase): SkillStore {
  const recordBlob = createBlobRecorder(db);
  const insertRow = db.prepare<Params, SkillRow>(
    `INSERT INTO skills (id, org_id, name, skill_version, description, is_public, status, source, content_hash,
                         size_bytes, created_at, updated_at)
     VALUES (@id, @org, @name, @version, @description, @isPublic, @status, @source, @hash, @size, @created, @updated)
     RETURNING *`,
  );
  const sameContent = db.prepare<Params, SkillRow>(
    'SELECT * FROM skills WHERE org_id IS @org AND name = @name AND content_hash = @hash',
  );
  const byId = db.prepare<Params, SkillRow>(`SELECT * FROM skills WHERE id = @id AND ${VISIBLE}`);
  const anyScope = db.prepare<Params, SkillRow>('SELECT * FROM skills WHERE id = @id');
  const latest = db.prepare<Params, SkillRow>(
    `SELECT * FROM skills WHERE name = @name AND ${VISIBLE} ORDER BY ${PREFERRED} LIMIT 1`,
  );
  const exactVersion = db.prepare<Params, SkillRow>(
    `SELECT * FROM skills WHERE name = @name AND skill_version = @version AND ${VISIBLE} ORDER BY ${PREFERRED} LIMIT 1`,
  );
  const revision = db.prepare<Params, SkillRow>(
    `SELECT * FROM skills WHERE name = @name
        AND org_id IS (SELECT org_id FROM skills WHERE name = @name AND ${VISIBLE} ORDER BY ${PREFERRED} LIMIT 1)
      ORDER BY created_at ASC, rowid ASC LIMIT 1 OFFSET @offset`,
  );
  const listStatements = new Map<string, ReturnType<typeof db.prepare<Params, SkillRow>>>();
  const listStatement = (query: SkillListQuery) => {
    const key = `${query.orderBy}:${query.descending}:${query.grouped}`;
    let statement = listStatements.get(key);
    if (!statement) {
      const dir = query.descending ? 'DESC' : 'ASC';
      const order = `ORDER BY ${COLUMNS[query.orderBy]} ${dir}, rid ${dir}`;
      statement = db.prepare<Params, SkillRow>(
        query.grouped
          ? `SELECT * FROM (
               SELECT *, rowid AS rid,
                      ROW_NUMBER() OVER (PARTITION BY name ORDER BY ${PREFERRED}) AS rank
                 FROM skills WHERE ${VISIBLE})
              WHERE rank = 1 ${order} LIMIT @limit OFFSET @offset`
          : `SELECT *, rowid AS rid FROM skills WHERE ${VISIBLE} ${order} LIMIT @limit OFFSET @offset`,
      );
      listStatements.set(key, statement);
    }
    return statement;
  };

  const insertTx = db.transaction(
    (record: SkillRecord, source: SkillSource, content: StoredBytes): { row: SkillRow; created: boolean } => {
      const existing = sameContent.get({ org: record.orgId, name: record.name, hash: content.sha256 });
      if (existing) return { row: existing, created: false };
      recordBlob(content, record.createdAt.toISOString());
      const row = insertRow.get({
        id: record.id,
        org: record.orgId,
        name: record.name,
        version: record.skillVersion,
        description: record.description,
        isPublic: record.isPublic ? 1 : 0,
        status: record.status,
        source,
        hash: content.sha256,
        size: content.bytes,
        created: record.createdAt.toISOString(),
        updated: record.updatedAt.toISOString(),
      });
      if (!row) throw new Error('skill insert returned no row');
      return { row, created: true };
    },
  );

  return {
    async insert(record, source, content) {
      const { row, created } = insertTx(record, source, content);
      return { record: toSkill(row), created };
    },
    async get(scope, id) {
      const row = byId.get({ id, org: scope.orgId });
      return row ? toSkill(row) : null;
    },
    async getBySignedId(id) {
      const row = anyScope.get({ id });
      return row ? toSkill(row) : null;
    },
    async findByName(scope, name, version) {
      const params = { name, org: scope.orgId };
      let row: SkillRow | undefined;
      if (version === 'latest') row = latest.get(params);
      else if (/^[1-9]\d{0,8}$/.test(version)) row = revision.get({ ...params, offset: Number(version) - 1 });
      else row = exactVersion.get({ ...params, version });
      return row ? toSkill(row) : null;
    },
    async list(scope, query) {
      return listStatement(query).all({ org: scope.orgId, limit: query.limit, offset: query.offset }).map(toSkill);
    },
  };
}
