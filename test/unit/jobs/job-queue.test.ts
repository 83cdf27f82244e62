/**
 * The job queue runs jobs in order, at most `concurrency` at once, ignores duplicates while queued, and stops
 * taking work on close.
 */
import { createJobQueue } from '../../../src/jobs/job-queue';
import { createLogger } from '../../../src/lib/logger';

describe('job queue', () => {
  const logger = createLogger('silent');

  it('runs jobs in order with bounded concurrency', async () => {
    const started: string[] = [];
    let active = 0;
    let maxActive = 0;
    const queue = createJobQueue({
      concurrency: 2,
      logger,
      run: async (id) => {
        started.push(id);
        active += 1;
        maxActive = Math.max(maxActive, active);
        await new Promise((resolve) => setImmediate(resolve));
        active -= 1;
      },
    });
    for (const id of ['a', 'b', 'c', 'd', 'a']) queue.enqueue(id);
    await new Promise((resolve) => setImmediate(resolve));
    await queue.idle();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    expect(maxActive).toBe(2);
  });

  it('keeps going when a job throws and refuses work after close', async () => {
    const done: string[] = [];
    const queue = createJobQueue({
      concurrency: 1,
      logger,
      run: async (id) => {
        if (id === 'bad') throw new Error('boom');
        done.push(id);
      },
    });
    queue.enqueue('bad');
    queue.enqueue('good');
    await new Promise((resolve) => setImmediate(resolve));
    await queue.idle();
    expect(done).toEqual(['good']);
    await queue.close(100);
    queue.enqueue('late');
    expect(queue.size()).toBe(0);
  });
});
