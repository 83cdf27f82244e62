/**
 * The WAL checkpointer on a real SQLite file: pages written by the main connection reach the database file without
 * the main connection checkpointing, and stopping (or failing to start) leaves SQLite's own checkpoints on.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startBackgroundCheckpoints } from '../../../src/backend/sqlite/background-checkpoints';
import { openDatabase, type SqliteDatabase } from '../../../src/backend/sqlite/database';

describe('background WAL checkpoints', () => {
  let dir: string;
  let file: string;
  let db: SqliteDatabase;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-checkpoints-'));
    file = path.join(dir, 'prism.db');
    db = openDatabase(file);
    db.exec('CREATE TABLE filler (id INTEGER PRIMARY KEY, text TEXT NOT NULL)');
  });

  afterEach(() => {
    if (db.open) db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const autocheckpointPages = (): unknown => db.pragma('wal_autocheckpoint', { simple: true });
  const fill = (rows: number): void => {
    const insert = db.prepare('INSERT INTO filler (text) VALUES (?)');
    db.transaction(() => {
      for (let i = 0; i < rows; i += 1) insert.run('x'.repeat(1000));
    })();
  };

  it('moves committed pages into the database file from the worker while the main connection only commits', async () => {
    const checkpoints = await startBackgroundCheckpoints(db, file, { intervalMs: 20 });
    try {
      expect(autocheckpointPages()).toBe(0);
      const before = fs.statSync(file).size;
      fill(2000); // ~2 MB: more than SQLite's own 1,000-page threshold, which is off now
      // The commit lands in the WAL. (The database file itself is not compared here: the worker may already have
      // checkpointed by the time this line runs on a loaded machine.)
      expect(fs.statSync(`${file}-wal`).size).toBeGreaterThanOrEqual(1_500_000);
      const deadline = Date.now() + 5000;
      while (fs.statSync(file).size < before + 1_500_000 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(fs.statSync(file).size).toBeGreaterThanOrEqual(before + 1_500_000);
      expect(db.prepare('SELECT count(*) AS n FROM filler').get()).toEqual({ n: 2000 });
    } finally {
      await checkpoints.stop();
    }
    expect(autocheckpointPages()).toBe(1000);
  });

  it('keeps a process alive until it has stopped, so the steps after it (closing the database) still run', () => {
    // A process whose last handle is the (unref'd) worker: before the fix it exited inside stop(), printing nothing.
    const modules = path.resolve(__dirname, '../../../src/backend/sqlite');
    const script = `
      const { openDatabase } = require(${JSON.stringify(path.join(modules, 'database'))});
      const { startBackgroundCheckpoints } = require(${JSON.stringify(path.join(modules, 'background-checkpoints'))});
      const file = ${JSON.stringify(path.join(dir, 'child.db'))};
      const db = openDatabase(file);
      startBackgroundCheckpoints(db, file, { intervalMs: 1000 })
        .then((checkpoints) => checkpoints.stop())
        .then(() => { db.close(); process.stdout.write('closed'); });
    `;
    const out = execFileSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], { encoding: 'utf8' });
    expect(out).toBe('closed');
  });

  it('stops once, however often it is asked to', async () => {
    const checkpoints = await startBackgroundCheckpoints(db, file, { intervalMs: 1000 });
    await Promise.all([checkpoints.stop(), checkpoints.stop()]);
    await checkpoints.stop();
    expect(autocheckpointPages()).toBe(1000);
  });

  it('rejects and leaves automatic checkpoints on when the worker cannot open the database', async () => {
    await expect(startBackgroundCheckpoints(db, path.join(dir, 'missing.db'), { intervalMs: 1000 })).rejects.toThrow(
      /did not start: .*(unable to open|does not exist)/i,
    );
    expect(autocheckpointPages()).toBe(1000);
  });
});
