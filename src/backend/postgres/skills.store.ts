/**
 * PostgreSQL SkillStore: skill versions scoped to an organisation plus the public set (org_id NULL), where an
 * organisation's skill wins over a public one of the same name. The same bytes under the same name in one scope
 * are one version: the unique index decides, so two replicas uploading them at once still make one.
 */
import type pg from 'pg';
import { toSkill, type SkillRow } from '../../stores/rows/skills.rows';
import type { SkillOrder, SkillStore } from '../../stores/types';
import { recordBlob } from './blob-rows';
import { withTransaction } from './database';

/** $1 is the caller's organisation (null: a guest, public skills only). */
const VISIBLE = '(org_id = $1 OR org_id IS NULL)';
const PREFERRED = '(org_id IS NULL), created_at DESC, seq DESC';
const COLUMNS: Record<SkillOrder, string> = {
  created_at: 'created_at',
  updated_at: 'updated_at',
  name: 'name COLLATE "C"',
};

export function createPostgresSkillStore(pool: pg.Pool): SkillStore {
  const first = async (sql: string, params: unknown[]) => {
    const row = (await pool.query<SkillRow>(sql, params)).rows[0];
    return row ? toSkill(row) : null;
  };
  const same = 'SELECT * FROM skills WHERE org_id IS NOT DISTINCT FROM $1 AND name = $2 AND content_hash = $3';

  return {
    async insert(record, source, content) {
      const { row, created } = await withTransaction(pool, async (client) => {
        const existing = (await client.query<SkillRow>(same, [record.orgId, record.name, content.sha256])).rows[0];
        if (existing) return { row: existing, created: false };
        await recordBlob(client, content, record.createdAt.toISOString());
        const inserted = await client.query<SkillRow>(
          `INSERT INTO skills (id, org_id, name, skill_version, description, is_public, status, source, content_hash,
                               size_bytes, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT DO NOTHING RETURNING *`,
          [
            record.id,
            record.orgId,
            record.name,
            record.skillVersion,
            record.description,
            record.isPublic,
            record.status,
            source,
            content.sha256,
            content.bytes,
            record.createdAt.toISOString(),
            record.updatedAt.toISOString(),
          ],
        );
        if (inserted.rows[0]) return { row: inserted.rows[0], created: true };
        // Another writer stored the same bytes under this name a moment ago: that is the version.
        const raced = (await client.query<SkillRow>(same, [record.orgId, record.name, content.sha256])).rows[0];
        if (!raced) throw new Error('skill insert returned no row');
        return { row: raced, created: false };
      });
      return { record: toSkill(row), created };
    },
    get: (scope, id) => first(`SELECT * FROM skills WHERE id = $2 AND ${VISIBLE}`, [scope.orgId, id]),
    getBySignedId: (id) => first('SELECT * FROM skills WHERE id = $1', [id]),
    findByName(scope, name, version) {
      if (version === 'latest') {
        return first(`SELECT * FROM skills WHERE name = $2 AND ${VISIBLE} ORDER BY ${PREFERRED} LIMIT 1`, [
          scope.orgId,
          name,
        ]);
      }
      if (/^[1-9]\d{0,8}$/.test(version)) {
        return first(
          `SELECT * FROM skills WHERE name = $2
              AND org_id IS NOT DISTINCT FROM
                  (SELECT org_id FROM skills WHERE name = $2 AND ${VISIBLE} ORDER BY ${PREFERRED} LIMIT 1)
            ORDER BY created_at ASC, seq ASC LIMIT 1 OFFSET $3`,
          [scope.orgId, name, Number(version) - 1],
        );
      }
      return first(
        `SELECT * FROM skills WHERE name = $2 AND skill_version = $3 AND ${VISIBLE} ORDER BY ${PREFERRED} LIMIT 1`,
        [scope.orgId, name, version],
      );
    },
    async list(scope, query) {
      const dir = query.descending ? 'DESC' : 'ASC';
      const order = `ORDER BY ${COLUMNS[query.orderBy]} ${dir}, seq ${dir}`;
      const sql = query.grouped
        ? `SELECT * FROM (
             SELECT *, ROW_NUMBER() OVER (PARTITION BY name ORDER BY ${PREFERRED}) AS rn FROM skills WHERE ${VISIBLE}
           ) s WHERE rn = 1 ${order} LIMIT $2 OFFSET $3`
        : `SELECT * FROM skills WHERE ${VISIBLE} ${order} LIMIT $2 OFFSET $3`;
      const { rows } = await pool.query<SkillRow>(sql, [scope.orgId, query.limit, query.offset]);
      return rows.map(toSkill);
    },
  };
}
