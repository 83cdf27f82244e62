/**
 * Every LangGraph store put deletes expired documents first; that delete must read the expiry index, not the whole
 * table, or each put grows with everything ever stored (migration 023).
 */
import { openDatabase } from '../../../src/backend/sqlite/database';
import { createSqliteLangGraphStore } from '../../../src/backend/sqlite/langgraph.store';

describe('LangGraph documents: the expiry sweep', () => {
  const db = openDatabase(':memory:');
  afterAll(() => db.close());

  it('finds expired documents through the expiry index', () => {
    const plan = db
      .prepare('EXPLAIN QUERY PLAN DELETE FROM langgraph_docs WHERE expires_at IS NOT NULL AND expires_at <= ?')
      .all('2026-01-01T00:00:00.000Z') as { detail: string }[];
    expect(plan.map((row) => row.detail).join('\n')).toMatch(/USING (COVERING )?INDEX langgraph_docs_expiry/);
  });

  it('still removes what expired and keeps what did not', async () => {
    const store = createSqliteLangGraphStore(db);
    const at = new Date();
    const doc = (id: string, expiresAt: Date | null) => ({
      orgId: 'org',
      kind: 'item' as const,
      id,
      parent: 'notes',
      body: { key: id },
      vector: null,
      createdAt: at,
      updatedAt: at,
      expiresAt,
    });
    await store.put(doc('old', new Date(at.getTime() - 1000)));
    await store.put(doc('lasting', null));
    await store.put(doc('later', new Date(at.getTime() + 60_000)));
    const left = db.prepare("SELECT id FROM langgraph_docs WHERE org_id = 'org' ORDER BY id").all() as { id: string }[];
    expect(left.map((row) => row.id)).toEqual(['lasting', 'later']);
  });
});
