/**
 * PostgreSQL EvaluationStore: run records with their per-item details, and the items of a source (stored responses
 * with the newest feedback on each) read in one query.
 */
import type pg from 'pg';
import type { EvaluationItem, EvaluationRun } from '../../domain/evaluation';
import {
  toItem,
  toRun,
  toSourceItem,
  type ItemRow,
  type RunRow,
  type SourceRow,
} from '../../stores/rows/evaluations.rows';
import type { EvaluationStore, SourceQuery } from '../../stores/types/evaluation';
import { withTransaction } from './database';

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

/** The newest feedback on each row of `alias` (an entity of `type`), as fb_id, fb_response, fb_notes. */
const NEWEST_FEEDBACK = (alias: string, type: string): string =>
  `LEFT JOIN LATERAL (SELECT f.id AS fb_id, f.response_json AS fb_response, f.notes AS fb_notes FROM feedback f
      WHERE f.org_id = ${alias}.org_id AND f.entity_type = '${type}' AND f.entity_id = ${alias}.id
      ORDER BY f.created_at DESC, f.seq DESC LIMIT 1) fb_${alias} ON TRUE`;

/** $1 org, $2 source name, $3/$4 the date range (either may be null), $5 the limit. */
const RANGE = (alias: string): string =>
  `($3::timestamptz IS NULL OR ${alias}.created_at >= $3) AND ($4::timestamptz IS NULL OR ${alias}.created_at <= $4)`;

const PREDICTION_COLUMNS = `'request' AS entity_type, p.id, p.status, p.response_json, p.created_at,
  fb_p.fb_id, fb_p.fb_response, fb_p.fb_notes`;
const EXECUTION_COLUMNS = `'agent_execution' AS entity_type, e.id, e.status, e.response_json, e.created_at,
  fb_e.fb_id, fb_e.fb_response, fb_e.fb_notes`;

const NAMES_SKILL = (alias: string): string =>
  `EXISTS (SELECT 1 FROM json_array_elements(
       CASE WHEN json_typeof(${alias}.request_json->'skills') = 'array' THEN ${alias}.request_json->'skills'
            ELSE '[]'::json END) s
     WHERE s->>'name' = $2 OR s->>'id' = $2
        OR s->>'id' IN (SELECT k.id FROM skills k WHERE k.name = $2 AND (k.org_id = $1 OR k.org_id IS NULL)))`;

const BY_DOMAIN = `SELECT ${PREDICTION_COLUMNS} FROM predictions p ${NEWEST_FEEDBACK('p', 'request')}
  WHERE p.org_id = $1 AND p.domain = $2 AND ${RANGE('p')} ORDER BY p.created_at DESC, p.seq DESC LIMIT $5`;

const BY_SKILL = `SELECT * FROM (
    SELECT ${PREDICTION_COLUMNS} FROM predictions p ${NEWEST_FEEDBACK('p', 'request')}
     WHERE p.org_id = $1 AND ${RANGE('p')} AND ${NAMES_SKILL('p')}
    UNION ALL
    SELECT ${EXECUTION_COLUMNS} FROM executions e ${NEWEST_FEEDBACK('e', 'agent_execution')}
     WHERE e.org_id = $1 AND ${RANGE('e')} AND ${NAMES_SKILL('e')}
  ) items ORDER BY created_at DESC, id LIMIT $5`;

// An execution of a named agent is stored as `<name>:<version>`: the agent row says which agent ran it.
const BY_AGENT = `SELECT ${EXECUTION_COLUMNS} FROM executions e JOIN agents a ON a.id = e.agent_id AND a.org_id = e.org_id
    ${NEWEST_FEEDBACK('e', 'agent_execution')}
  WHERE e.org_id = $1 AND a.name = $2 AND ($6::text IS NULL OR a.version = $6) AND ${RANGE('e')}
  ORDER BY e.created_at DESC, e.seq DESC LIMIT $5`;

/** A new evaluation run's row. */
const INSERT_EVALUATION = `INSERT INTO evaluations (id, org_id, kind, parent_id, source_type, source_id,
   source_label, source_version, status, config_json, accuracy, api_completion_rate, total_items,
   total_with_feedback, data_from, data_to, results_json, error_message, created_at, completed_at)
 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`;

/** The INSERT's parameters, in its column order. */
const evaluationValues = (run: EvaluationRun): unknown[] => [
  run.id,
  run.orgId,
  run.kind,
  run.parentId,
  run.sourceType,
  run.sourceId,
  run.sourceLabel,
  run.sourceVersion,
  run.status,
  JSON.stringify(run.config),
  run.accuracy,
  run.apiCompletionRate,
  run.totalItems,
  run.totalWithFeedback,
  iso(run.dataFrom),
  iso(run.dataTo),
  JSON.stringify(run.results),
  run.errorMessage,
  run.createdAt.toISOString(),
  iso(run.completedAt),
];

export function createPostgresEvaluationStore(pool: pg.Pool): EvaluationStore {
  const runs = async (sql: string, params: unknown[]) => (await pool.query<RunRow>(sql, params)).rows.map(toRun);
  const getAny = async (id: string) => (await runs('SELECT * FROM evaluations WHERE id = $1', [id]))[0] ?? null;

  return {
    async insert(run) {
      await pool.query(INSERT_EVALUATION, evaluationValues(run));
      return run;
    },
    async get(orgId, id) {
      return (await runs('SELECT * FROM evaluations WHERE org_id = $1 AND id = $2', [orgId, id]))[0] ?? null;
    },
    getById: getAny,
    async list(orgId, query) {
      const where = `WHERE org_id = $1 AND ($2::timestamptz IS NULL OR created_at >= $2)
        AND ($3::timestamptz IS NULL OR created_at <= $3)`;
      const params = [orgId, iso(query.createdFrom), iso(query.createdTo)];
      const order = query.descending ? 'DESC' : 'ASC';
      const data = await runs(
        `SELECT * FROM evaluations ${where} ORDER BY created_at ${order}, seq ${order} LIMIT $4 OFFSET $5`,
        [...params, query.limit, query.offset],
      );
      const { rows } = await pool.query<{ n: number }>(`SELECT COUNT(*) AS n FROM evaluations ${where}`, params);
      return { data, count: rows[0]?.n ?? 0 };
    },
    async start(id) {
      return (
        (
          await runs(
            `UPDATE evaluations SET status = 'running', attempts = attempts + 1
              WHERE id = $1 AND status IN ('pending', 'running') RETURNING *`,
            [id],
          )
        )[0] ?? null
      );
    },
    async finish(id, outcome, items: EvaluationItem[]) {
      const finished = await withTransaction(pool, async (client) => {
        const { rowCount } = await client.query(
          `UPDATE evaluations SET status = $2, accuracy = $3, api_completion_rate = $4, total_items = $5,
             total_with_feedback = $6, data_from = $7, data_to = $8, results_json = $9, error_message = $10,
             completed_at = $11
           WHERE id = $1 AND status = 'running'`,
          [
            id,
            outcome.status,
            outcome.accuracy,
            outcome.apiCompletionRate,
            outcome.totalItems,
            outcome.totalWithFeedback,
            iso(outcome.dataFrom),
            iso(outcome.dataTo),
            JSON.stringify(outcome.results),
            outcome.errorMessage,
            outcome.completedAt.toISOString(),
          ],
        );
        if (rowCount === 0) return false;
        if (items.length > 0) {
          await client.query(
            `INSERT INTO evaluation_items (evaluation_id, position, entity_type, entity_id, detail_json)
             SELECT $1, i.position, i.entity_type, i.entity_id, i.detail::json
               FROM unnest($2::int[], $3::text[], $4::text[], $5::text[]) AS i(position, entity_type, entity_id, detail)`,
            [
              id,
              items.map((i) => i.position),
              items.map((i) => i.entityType),
              items.map((i) => i.entityId),
              items.map((i) => JSON.stringify(i.detail)),
            ],
          );
        }
        return true;
      });
      return finished ? getAny(id) : null;
    },
    async items(orgId, id, { offset, limit }) {
      const { rows } = await pool.query<ItemRow>(
        `SELECT i.position, i.entity_type, i.entity_id, i.detail_json FROM evaluation_items i
           JOIN evaluations r ON r.id = i.evaluation_id
          WHERE r.org_id = $1 AND i.evaluation_id = $2 ORDER BY i.position LIMIT $3 OFFSET $4`,
        [orgId, id, limit, offset],
      );
      return rows.map(toItem);
    },
    async allItems(id) {
      const { rows } = await pool.query<ItemRow>(
        `SELECT position, entity_type, entity_id, detail_json FROM evaluation_items WHERE evaluation_id = $1
          ORDER BY position`,
        [id],
      );
      return rows.map(toItem);
    },
    async delete(orgId, id) {
      const { rowCount } = await pool.query('DELETE FROM evaluations WHERE org_id = $1 AND id = $2', [orgId, id]);
      return (rowCount ?? 0) > 0;
    },
    unfinished: () =>
      runs(`SELECT * FROM evaluations WHERE status IN ('pending', 'running') ORDER BY created_at, seq`, []),
    async sourceItems(orgId, query: SourceQuery) {
      const params: unknown[] = [orgId, query.sourceId, iso(query.dataFrom), iso(query.dataTo), query.maxItems];
      const sql =
        query.sourceType === 'request_domain' ? BY_DOMAIN : query.sourceType === 'skill' ? BY_SKILL : BY_AGENT;
      if (query.sourceType === 'agent') params.push(query.sourceVersion);
      const { rows } = await pool.query<SourceRow>(sql, params);
      return rows.map(toSourceItem);
    },
    async sourceCounts(orgId) {
      const { rows } = await pool.query<{ type: RunRow['source_type']; label: string; count: number }>(
        `SELECT source_type AS type, source_label AS label, COUNT(*) AS count FROM evaluations WHERE org_id = $1
          GROUP BY source_type, source_label ORDER BY count DESC, source_type COLLATE "C", source_label COLLATE "C"`,
        [orgId],
      );
      return rows;
    },
    completed: (orgId, query) =>
      runs(
        `SELECT * FROM evaluations WHERE org_id = $1 AND status = 'completed'
            AND ($2::text IS NULL OR source_type = $2) AND ($3::text IS NULL OR source_label = $3)
          ORDER BY created_at DESC, seq DESC LIMIT $4`,
        [orgId, query.sourceType, query.sourceLabel, query.limit],
      ),
  };
}
