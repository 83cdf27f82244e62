/**
 * SQLite EvaluationStore: runs, their items, and the source query that joins stored predictions or executions
 * with the newest feedback on each (the feedback index `(org_id, entity_type, entity_id, created_at)` serves the
 * correlated lookups).
 */
import type { EvaluationItem, EvaluationRun, SourceItem } from '../../domain/evaluation';
import type {
  EvaluationListQuery,
  EvaluationOutcome,
  EvaluationStore,
  SourceQuery,
} from '../../stores/types/evaluation';
import type { SqliteDatabase } from './database';
import {
  type SourceRow,
  type RunRow,
  type ItemRow,
  toSourceItem,
  toRun,
  toItem,
} from '../../stores/rows/evaluations.rows';
const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

/** The newest feedback on the row `alias` of entity type `type`: id, response and notes. */
const feedbackColumns = (alias: string, type: string): string =>
  ['id', 'response_json', 'notes']
    .map(
      (column) =>
        `(SELECT f.${column} FROM feedback f WHERE f.org_id = ${alias}.org_id AND f.entity_type = '${type}'
           AND f.entity_id = ${alias}.id ORDER BY f.created_at DESC, f.rowid DESC LIMIT 1)
         AS fb_${column === 'response_json' ? 'response' : column}`,
    )
    .join(',\n');

const RANGE = (alias: string): string =>
  `(@from IS NULL OR ${alias}.created_at >= @from) AND (@to IS NULL OR ${alias}.created_at <= @to)`;

const PREDICTION_COLUMNS = `'request' AS entity_type, p.id, p.status, p.response_json, p.created_at, ${feedbackColumns('p', 'request')}`;
const EXECUTION_COLUMNS = `'agent_execution' AS entity_type, e.id, e.status, e.response_json, e.created_at,
  ${feedbackColumns('e', 'agent_execution')}`;

/** Skill references of a request or execution that name the skill (by name, or by the id of one of its versions). */
const NAMES_SKILL = (alias: string): string =>
  `EXISTS (SELECT 1 FROM json_each(${alias}.request_json, '$.skills') s
     WHERE json_extract(s.value, '$.name') = @name OR json_extract(s.value, '$.id') = @name
        OR json_extract(s.value, '$.id') IN
           (SELECT k.id FROM skills k WHERE k.name = @name AND (k.org_id = @org OR k.org_id IS NULL)))`;

/** The store's statements, prepared once per database. */
function prepareStatements(db: SqliteDatabase) {
  return {
    insert: db.prepare(
      `INSERT INTO evaluations (id, org_id, kind, parent_id, source_type, source_id, source_label, source_version,
         status, config_json, accuracy, api_completion_rate, total_items, total_with_feedback, data_from, data_to,
         results_json, error_message, created_at, completed_at)
       VALUES (@id, @org_id, @kind, @parent_id, @source_type, @source_id, @source_label, @source_version, @status,
         @config_json, @accuracy, @api_completion_rate, @total_items, @total_with_feedback, @data_from, @data_to,
         @results_json, @error_message, @created_at, @completed_at)`,
    ),
    getOne: db.prepare<[string, string], RunRow>('SELECT * FROM evaluations WHERE org_id = ? AND id = ?'),
    getAny: db.prepare<[string], RunRow>('SELECT * FROM evaluations WHERE id = ?'),
    start: db.prepare<[string], RunRow>(
      `UPDATE evaluations SET status = 'running', attempts = attempts + 1
        WHERE id = ? AND status IN ('pending', 'running') RETURNING *`,
    ),
    finish: db.prepare(
      `UPDATE evaluations SET status = @status, accuracy = @accuracy, api_completion_rate = @api_completion_rate,
         total_items = @total_items, total_with_feedback = @total_with_feedback, data_from = @data_from,
         data_to = @data_to, results_json = @results_json, error_message = @error_message, completed_at = @completed_at
       WHERE id = @id AND status = 'running'`,
    ),
    insertItem: db.prepare(
      'INSERT INTO evaluation_items (evaluation_id, position, entity_type, entity_id, detail_json) VALUES (?, ?, ?, ?, ?)',
    ),
    itemsPage: db.prepare<[string, string, number, number], ItemRow>(
      `SELECT i.position, i.entity_type, i.entity_id, i.detail_json FROM evaluation_items i
         JOIN evaluations r ON r.id = i.evaluation_id
        WHERE r.org_id = ? AND i.evaluation_id = ? ORDER BY i.position LIMIT ? OFFSET ?`,
    ),
    allItems: db.prepare<[string], ItemRow>(
      'SELECT position, entity_type, entity_id, detail_json FROM evaluation_items WHERE evaluation_id = ? ORDER BY position',
    ),
    remove: db.prepare('DELETE FROM evaluations WHERE org_id = ? AND id = ?'),
    unfinished: db.prepare<[], RunRow>(`SELECT * FROM evaluations WHERE status IN ('pending', 'running')`),
    sourceCounts: db.prepare<[string], { type: EvaluationRun['sourceType']; label: string; count: number }>(
      `SELECT source_type AS type, source_label AS label, COUNT(*) AS count FROM evaluations WHERE org_id = ?
        GROUP BY source_type, source_label ORDER BY count DESC, type, label`,
    ),
    completed: db.prepare<Record<string, unknown>, RunRow>(
      `SELECT * FROM evaluations WHERE org_id = @org AND status = 'completed'
          AND (@type IS NULL OR source_type = @type) AND (@label IS NULL OR source_label = @label)
        ORDER BY created_at DESC, rowid DESC LIMIT @limit`,
    ),
    byDomain: db.prepare<Record<string, unknown>, SourceRow>(
      `SELECT ${PREDICTION_COLUMNS} FROM predictions p
        WHERE p.org_id = @org AND p.domain = @name AND ${RANGE('p')}
        ORDER BY p.created_at DESC, p.rowid DESC LIMIT @limit`,
    ),
    bySkill: db.prepare<Record<string, unknown>, SourceRow>(
      `SELECT * FROM (
         SELECT ${PREDICTION_COLUMNS} FROM predictions p WHERE p.org_id = @org AND ${RANGE('p')} AND ${NAMES_SKILL('p')}
         UNION ALL
         SELECT ${EXECUTION_COLUMNS} FROM executions e WHERE e.org_id = @org AND ${RANGE('e')} AND ${NAMES_SKILL('e')}
       ) ORDER BY created_at DESC, id LIMIT @limit`,
    ),
    byAgent: db.prepare<Record<string, unknown>, SourceRow>(
      // An execution of a named agent is stored as `<name>:<version>`: the agent row says which agent ran it.
      `SELECT ${EXECUTION_COLUMNS} FROM executions e JOIN agents a ON a.id = e.agent_id AND a.org_id = e.org_id
        WHERE e.org_id = @org AND a.name = @name AND (@version IS NULL OR a.version = @version) AND ${RANGE('e')}
        ORDER BY e.created_at DESC, e.rowid DESC LIMIT @limit`,
    ),
  };
}

type Statements = ReturnType<typeof prepareStatements>;

/** The INSERT's named parameters for a new run. */
function runParams(run: EvaluationRun): Record<string, unknown> {
  return {
    id: run.id,
    org_id: run.orgId,
    kind: run.kind,
    parent_id: run.parentId,
    source_type: run.sourceType,
    source_id: run.sourceId,
    source_label: run.sourceLabel,
    source_version: run.sourceVersion,
    status: run.status,
    config_json: JSON.stringify(run.config),
    accuracy: run.accuracy,
    api_completion_rate: run.apiCompletionRate,
    total_items: run.totalItems,
    total_with_feedback: run.totalWithFeedback,
    data_from: iso(run.dataFrom),
    data_to: iso(run.dataTo),
    results_json: JSON.stringify(run.results),
    error_message: run.errorMessage,
    created_at: run.createdAt.toISOString(),
    completed_at: iso(run.completedAt),
  };
}

/** The finishing UPDATE's named parameters. */
function outcomeParams(id: string, outcome: EvaluationOutcome): Record<string, unknown> {
  return {
    id,
    status: outcome.status,
    accuracy: outcome.accuracy,
    api_completion_rate: outcome.apiCompletionRate,
    total_items: outcome.totalItems,
    total_with_feedback: outcome.totalWithFeedback,
    data_from: iso(outcome.dataFrom),
    data_to: iso(outcome.dataTo),
    results_json: JSON.stringify(outcome.results),
    error_message: outcome.errorMessage,
    completed_at: outcome.completedAt.toISOString(),
  };
}

/** Writes the outcome and the items in one transaction, only while the run is `running`; false when it was not. */
function finishTransaction(
  db: SqliteDatabase,
  statements: Statements,
): (id: string, outcome: EvaluationOutcome, items: EvaluationItem[]) => boolean {
  return db.transaction((id: string, outcome: EvaluationOutcome, items: EvaluationItem[]): boolean => {
    const changed = statements.finish.run(outcomeParams(id, outcome)).changes;
    if (changed === 0) return false;
    for (const item of items) {
      statements.insertItem.run(id, item.position, item.entityType, item.entityId, JSON.stringify(item.detail));
    }
    return true;
  });
}

/** A page of an organisation's runs in a date range, with the range's count. */
function listRuns(
  db: SqliteDatabase,
  orgId: string,
  query: EvaluationListQuery,
): { data: EvaluationRun[]; count: number } {
  const where = `WHERE org_id = @org AND (@from IS NULL OR created_at >= @from) AND (@to IS NULL OR created_at <= @to)`;
  const params = { org: orgId, from: iso(query.createdFrom), to: iso(query.createdTo) };
  const order = query.descending ? 'DESC' : 'ASC';
  const rows = db
    .prepare<Record<string, unknown>, RunRow>(
      `SELECT * FROM evaluations ${where} ORDER BY created_at ${order}, rowid ${order} LIMIT @limit OFFSET @offset`,
    )
    .all({ ...params, limit: query.limit, offset: query.offset });
  const count = db
    .prepare<Record<string, unknown>, { n: number }>(`SELECT COUNT(*) AS n FROM evaluations ${where}`)
    .get(params);
  return { data: rows.map(toRun), count: count?.n ?? 0 };
}

/** The items of a source (a request domain, a skill or an agent), newest first, with the newest feedback on each. */
function sourceItems(statements: Statements, orgId: string, query: SourceQuery): SourceItem[] {
  const params = {
    org: orgId,
    name: query.sourceId,
    version: query.sourceVersion,
    from: iso(query.dataFrom),
    to: iso(query.dataTo),
    limit: query.maxItems,
  };
  const statement =
    query.sourceType === 'request_domain'
      ? statements.byDomain
      : query.sourceType === 'skill'
        ? statements.bySkill
        : statements.byAgent;
  const { version: _unused, ...withoutVersion } = params;
  return statement.all(query.sourceType === 'agent' ? params : withoutVersion).map(toSourceItem);
}

export function createSqliteEvaluationStore(db: SqliteDatabase): EvaluationStore {
  const statements = prepareStatements(db);
  const finishTx = finishTransaction(db, statements);
  return {
    async insert(run) {
      statements.insert.run(runParams(run));
      return run;
    },
    async get(orgId, id) {
      const row = statements.getOne.get(orgId, id);
      return row ? toRun(row) : null;
    },
    async getById(id) {
      const row = statements.getAny.get(id);
      return row ? toRun(row) : null;
    },
    async list(orgId, query) {
      return listRuns(db, orgId, query);
    },
    async start(id) {
      const row = statements.start.get(id);
      return row ? toRun(row) : null;
    },
    async finish(id, outcome, items) {
      if (!finishTx(id, outcome, items)) return null;
      const row = statements.getAny.get(id);
      return row ? toRun(row) : null;
    },
    async items(orgId, id, { offset, limit }) {
      return statements.itemsPage.all(orgId, id, limit, offset).map(toItem);
    },
    async allItems(id) {
      return statements.allItems.all(id).map(toItem);
    },
    async delete(orgId, id) {
      return statements.remove.run(orgId, id).changes > 0;
    },
    async unfinished() {
      return statements.unfinished.all().map(toRun);
    },
    async sourceItems(orgId, query: SourceQuery) {
      return sourceItems(statements, orgId, query);
    },
    async sourceCounts(orgId) {
      return statements.sourceCounts.all(orgId);
    },
    async completed(orgId, query) {
      return statements.completed
        .all({ org: orgId, type: query.sourceType, label: query.sourceLabel, limit: query.limit })
        .map(toRun);
    },
  };
}
