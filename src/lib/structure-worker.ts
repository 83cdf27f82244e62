/**
 * The code a structure worker thread runs (started by structure-pool.ts): it answers `{task, payload}` messages
 * with `{result}` or `{error}`, one at a time. Tasks are the caller-structure work that is worth taking off the
 * event loop; each is a plain function of its (cloned) payload, so nothing in here shares state with the main
 * thread.
 */
import { parentPort } from 'node:worker_threads';
import { compileInWorker, shapeInWorker } from './json-schema';

const TASKS: Record<string, (payload: never) => unknown> = {
  'compile-schema': compileInWorker,
  'shape-schema': shapeInWorker,
};

parentPort?.on('message', (message: { task: string; payload: unknown }) => {
  const task = TASKS[message.task];
  try {
    if (!task) throw new Error(`unknown structure task '${message.task}'`);
    parentPort?.postMessage({ result: task(message.payload as never) });
  } catch (error) {
    parentPort?.postMessage({ error: error instanceof Error ? error.message : String(error) });
  }
});
