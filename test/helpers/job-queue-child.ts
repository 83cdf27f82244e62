/**
 * A replica's job queue in a child process, for the takeover test: it takes jobs of kind `work`, prints
 * `started <id>` when its handler begins, and never finishes one (it is killed with SIGKILL mid-job).
 * argv: redisUrl prefix queueName leaseMs
 */
import { createBullmqJobQueue } from '../../src/backend/redis/job-queue';
import { createLogger } from '../../src/lib/logger';

const [redisUrl = '', prefix = '', name = '', leaseMs = '1000'] = process.argv.slice(2);
const queue = createBullmqJobQueue({
  redisUrl,
  prefix,
  name,
  concurrency: 1,
  leaseMs: Number(leaseMs),
  logger: createLogger('silent'),
});
queue.handle('work', (id) => {
  process.stdout.write(`started ${id}\n`);
  return new Promise<void>(() => undefined);
});
queue.start();
process.stdout.write('ready\n');
