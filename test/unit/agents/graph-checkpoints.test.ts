/**
 * The lean checkpoint saver writes what LangGraph's SqliteSaver reads: checkpoints round-trip through either, values
 * JSON cannot carry (Map, bytes, undefined) survive through the standard serializer, and pending writes held
 * until the next checkpoint are committed before any read, so a resumed run sees them.
 */
import { emptyCheckpoint, INTERRUPT, TASKS, type Checkpoint } from '@langchain/langgraph-checkpoint';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { openDatabase } from '../../../src/backend/sqlite/database';
import { checkpointText, LeanSqliteSaver } from '../../../src/backend/sqlite/graph-checkpoints';

const thread = (id: string) => ({ configurable: { thread_id: id, checkpoint_ns: '' } });

function checkpointWith(values: Record<string, unknown>): Checkpoint {
  const checkpoint = emptyCheckpoint();
  checkpoint.channel_values = values;
  checkpoint.channel_versions = Object.fromEntries(Object.keys(values).map((k) => [k, 1]));
  return checkpoint;
}

describe('LeanSqliteSaver', () => {
  const db = openDatabase(':memory:');
  const lean = new LeanSqliteSaver(db);
  const standard = new SqliteSaver(db);
  afterAll(() => db.close());

  it('writes checkpoints the standard saver reads, and reads the standard saver’s', async () => {
    const plain = checkpointWith({ messages: [{ role: 'user', content: 'hi' }], final: null, steps: 3 });
    await lean.put(thread('a'), plain, { source: 'loop', step: 1, parents: {} });
    const read = await standard.getTuple(thread('a'));
    expect(read?.checkpoint.channel_values).toEqual(plain.channel_values);
    expect(read?.metadata).toMatchObject({ source: 'loop', step: 1 });

    const other = checkpointWith({ value: 'from the standard saver' });
    await standard.put(thread('b'), other, { source: 'loop', step: 0, parents: {} });
    expect((await lean.getTuple(thread('b')))?.checkpoint.channel_values).toEqual(other.channel_values);
  });

  it('hands values JSON cannot carry to the standard serializer', async () => {
    const rich = checkpointWith({
      map: new Map([['k', 1]]),
      bytes: new Uint8Array([1, 2, 3]),
      missing: undefined,
    });
    await lean.put(thread('c'), rich, { source: 'loop', step: 1, parents: {} });
    const values = (await standard.getTuple(thread('c')))?.checkpoint.channel_values ?? {};
    expect(values.map).toEqual(new Map([['k', 1]]));
    expect(values.bytes).toEqual(new Uint8Array([1, 2, 3]));
    expect('missing' in values ? values.missing : undefined).toBeUndefined();
  });

  it('commits held writes before a read, so pending writes are never lost to a reader', async () => {
    const first = await lean.put(thread('d'), checkpointWith({ n: 1 }), { source: 'loop', step: 1, parents: {} });
    await lean.putWrites(first, [['n', 2]], 'task-1');
    // The standard saver shares the file but not the held rows: nothing is committed yet.
    expect((await standard.getTuple(thread('d')))?.pendingWrites).toEqual([]);
    const tuple = await lean.getTuple(thread('d'));
    expect(tuple?.pendingWrites).toEqual([['task-1', 'n', 2]]);
    expect((await standard.getTuple(thread('d')))?.pendingWrites).toEqual([['task-1', 'n', 2]]);
  });

  it('drops held writes the next checkpoint already holds, keeps those a reader needs, deletes a thread whole', async () => {
    const first = await lean.put(thread('e'), checkpointWith({ n: 1 }), { source: 'loop', step: 1, parents: {} });
    await lean.putWrites(first, [['n', 5]], 'task-2');
    await lean.putWrites(first, [[TASKS, { node: 'plan' }]], 'task-3');
    await lean.putWrites(first, [[INTERRUPT, { value: 'approve?' }]], 'task-4');
    const other = await lean.put(thread('e2'), checkpointWith({ n: 1 }), { source: 'loop', step: 1, parents: {} });
    await lean.putWrites(other, [['n', 7]], 'task-5');
    // The checkpoint that follows `first` in thread e: LangGraph made it by applying the writes against `first`.
    await lean.put(first, checkpointWith({ n: 5 }), { source: 'loop', step: 2, parents: {} });
    const channels = (threadId: string) =>
      (
        db.prepare('SELECT channel FROM writes WHERE thread_id = ? ORDER BY channel').all(threadId) as {
          channel: string;
        }[]
      ).map((row) => row.channel);
    expect(channels('e')).toEqual([INTERRUPT, TASKS].sort());
    // Another thread's write waits for that thread's next checkpoint, or for a read.
    expect(channels('e2')).toEqual([]);
    expect((await lean.getTuple(thread('e2')))?.pendingWrites).toEqual([['task-5', 'n', 7]]);
    expect(channels('e2')).toEqual(['n']);
    await lean.deleteThread('e');
    expect(await lean.getTuple(thread('e'))).toBeUndefined();
  });

  it('writes each checkpoint as JSON.stringify would, reusing list elements written before', async () => {
    const undefinedRecord = { lc: 2, type: 'undefined' };
    const replacer = (_key: string, value: unknown) => (value === undefined ? undefinedRecord : value);
    const message = { role: 'user', content: 'hi', extra: undefined };
    const first = checkpointWith({
      messages: [message, null, 3, 'x', undefined],
      final: undefined,
      nested: { a: [1] },
    });
    expect(checkpointText(first)).toBe(JSON.stringify(first, replacer));
    // The next superstep's list copies the old elements and adds one: the reused text is the same text.
    const second = checkpointWith({ messages: [message, { role: 'assistant', content: null }], final: 'done' });
    expect(checkpointText(second)).toBe(JSON.stringify(second, replacer));
    await lean.put(thread('f'), second, { source: 'loop', step: 2, parents: {} });
    expect((await standard.getTuple(thread('f')))?.checkpoint.channel_values).toEqual(second.channel_values);
  });
});
