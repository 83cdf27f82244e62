/**
 * The job queue runs jobs in order, at most `concurrency` at once, each by the handler of its kind, ignores
 * duplicates while queued, refuses a kind nobody handles, and stops taking work on close.
 */
import { createJobQueue } from '../../../src/backend/local/job-queue';
import { createLogger } from '../../../src/lib/logger';

describe('job queue', () => {
  const logger = createLogger('silent');
  const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

  it('runs jobs in order with bounded concurrency', async () => {
    const started: string[] = [];
    let active = 0;
    let maxActive = 0;
    const queue = createJobQueue({ concurrency: 2, logger });
    queue.handle('prediction', async (id) => {
      started.push(id);
      active += 1;
      maxActive = Math.max(maxActive, active);
      await tick();
      active -= 1;
    });
    for (const id of ['a', 'b', 'c', 'd', 'a']) queue.enqueue({ kind: 'prediction', id });
    await tick();
    await queue.idle();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    expect(maxActive).toBe(2);
  });

  it('runs each job by the handler of its kind; the same id under two kinds is two jobs', async () => {
    const ran: string[] = [];
    const queue = createJobQueue({ concurrency: 1, logger });
    queue.handle('prediction', async (id) => void ran.push(`prediction ${id}`));
    queue.handle('execution', async (id) => void ran.push(`execution ${id}`));
    queue.enqueue({ kind: 'execution', id: 'x1' });
    queue.enqueue({ kind: 'prediction', id: 'x1' });
    queue.enqueue({ kind: 'execution', id: 'x1' });
    await tick();
    await queue.idle();
    expect(ran).toEqual(['execution x1', 'prediction x1']);
  });

  it('refuses a kind without a handler and a second handler for a kind', () => {
    const queue = createJobQueue({ concurrency: 1, logger });
    expect(() => queue.enqueue({ kind: 'evaluation', id: 'e1' })).toThrow(/no handler runs jobs of kind evaluation/);
    queue.handle('evaluation', async () => undefined);
    expect(() => queue.handle('evaluation', async () => undefined)).toThrow(/already have a handler/);
    expect(queue.size()).toBe(0);
  });

  it('keeps going when a job throws and refuses work after close', async () => {
    const done: string[] = [];
    const queue = createJobQueue({ concurrency: 1, logger });
    queue.handle('prediction', async (id) => {
      if (id === 'bad') throw new Error('boom');
      done.push(id);
    });
    queue.enqueue({ kind: 'prediction', id: 'bad' });
    queue.enqueue({ kind: 'prediction', id: 'good' });
    await tick();
    await queue.idle();
    expect(done).toEqual(['good']);
    await queue.close(100);
    queue.enqueue({ kind: 'prediction', id: 'late' });
    expect(queue.size()).toBe(0);
  });
});

describe('job queue shutdown', () => {
  it('stops taking work first: waiting jobs are dropped (the stores resume them), running ones finish', async () => {
    const ran: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const queue = createJobQueue({ concurrency: 1, logger: createLogger('silent') });
    queue.handle('prediction', async (id, delivery) => {
      ran.push(`${id} ${String(delivery.redelivered)}`);
      await gate;
    });
    queue.start();
    queue.enqueue({ kind: 'prediction', id: 'a' });
    queue.enqueue({ kind: 'prediction', id: 'b' });
    await new Promise((resolve) => setImmediate(resolve));
    await queue.stopTaking();
    queue.enqueue({ kind: 'prediction', id: 'c' });
    expect(queue.size()).toBe(1);
    release();
    await queue.close(1000);
    expect(ran).toEqual(['a false']);
  });
});
