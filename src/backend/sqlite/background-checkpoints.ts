/**
 * WAL checkpoints on a worker thread, so no request waits for one.
 *
 * By default SQLite checkpoints inside whichever commit pushes the write-ahead log past 1,000 pages: that commit
 * copies the log into the database file and waits for two fsyncs. Under gateway load (a debit batch committed every
 * 10 ms) that happened about once a second, and each time the event loop stood still for 8–9 ms (measured with a
 * timer around the debit flush: four of ~450 flushes in one run took 8.5–9.0 ms, the rest under 3 ms), long enough
 * to delay every call in flight. Here the main connection's automatic checkpoints are off and a second connection on
 * a worker thread runs `wal_checkpoint(PASSIVE)` every `intervalMs`: PASSIVE never waits for, and never blocks,
 * the main connection's readers and writers, and the fsyncs block only the worker.
 *
 * The worker is a few lines of plain JavaScript (eval'd, so it needs no TypeScript loader) that loads the same
 * better-sqlite3 build as the main thread. If it cannot start or dies, the main connection goes back to automatic
 * checkpoints, so the log never grows without bound.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../lib/logger';
import type { SqliteDatabase } from './database';

/** SQLite's own default (`wal_autocheckpoint`), restored when the worker is not running. */
const AUTOMATIC_CHECKPOINT_PAGES = 1000;

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const describe = (error) => String((error && error.message) || error);
const run = () => {
  let db;
  try {
    db = new (require(workerData.driver))(workerData.file, { fileMustExist: true });
  } catch (error) {
    parentPort.postMessage({ openFailed: describe(error) });
    parentPort.close();
    return;
  }
  const checkpoint = () => {
    try {
      db.pragma('wal_checkpoint(PASSIVE)');
    } catch (error) {
      parentPort.postMessage({ failed: describe(error) });
    }
  };
  const timer = setInterval(checkpoint, workerData.intervalMs);
  parentPort.on('message', (message) => {
    if (message !== 'stop') return;
    clearInterval(timer);
    checkpoint();
    db.close();
    parentPort.close();
  });
  parentPort.postMessage({ ready: true });
};
run();
`;

export interface BackgroundCheckpoints {
  /** Stops the worker (after one last checkpoint) and gives checkpoints back to the main connection. */
  stop(): Promise<void>;
}

export interface BackgroundCheckpointOptions {
  /** How often the worker checkpoints, in ms. */
  intervalMs: number;
  logger?: Logger;
}

/** Starts checkpointing `file` (the database `db` has open) on a worker thread; resolves once it runs. */
export async function startBackgroundCheckpoints(
  db: SqliteDatabase,
  file: string,
  options: BackgroundCheckpointOptions,
): Promise<BackgroundCheckpoints> {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { driver: require.resolve('better-sqlite3'), file, intervalMs: options.intervalMs },
    // The parent's --import hooks (tsx) are not needed by plain JavaScript and would only slow the start.
    execArgv: [],
  });
  worker.unref();
  let stopping: Promise<void> | null = null;
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  const automatic = (): void => {
    if (db.open) db.pragma(`wal_autocheckpoint = ${AUTOMATIC_CHECKPOINT_PAGES}`);
  };
  await new Promise<void>((resolve, reject) => {
    const failed = (error: unknown): void => {
      reject(new Error(`the WAL checkpoint worker did not start: ${describe(error)}`));
    };
    worker.once('error', failed);
    worker.once('message', (message: { openFailed?: string }) => {
      worker.off('error', failed);
      if (message.openFailed === undefined) resolve();
      else failed(message.openFailed);
    });
  });
  db.pragma('wal_autocheckpoint = 0');
  worker.on('message', (message: { failed?: string }) => {
    if (message.failed) options.logger?.warn('background WAL checkpoint failed', { error: message.failed });
  });
  worker.on('error', (error) => {
    options.logger?.error('the WAL checkpoint worker failed; checkpoints run in commits again', {
      error: describe(error),
    });
  });
  void exited.then(() => {
    if (stopping === null) automatic();
  });
  return {
    stop() {
      stopping ??= (async () => {
        // Unref'd while it runs so it never holds a process open; ref'd while stopping, or a process with nothing
        // else left to do exits before the last checkpoint and before the closers after this one (the database).
        worker.ref();
        worker.postMessage('stop');
        await exited;
        automatic();
      })();
      return stopping;
    },
  };
}

/** A worker's error arrives structured-cloned: an Error, or a plain object with a message, or a string. */
function describe(error: unknown): string {
  if (typeof error === 'string') return error;
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : 'unknown error';
}
