/**
 * Redis for the suites that need it: they run when `PRISM_TEST_REDIS_URL` is set (CI sets it) and skip with one
 * line otherwise. Each run gets its own key prefix (Redis is shared with other runs and other checkouts) and removes
 * its keys afterwards.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export const testRedisUrl = process.env.PRISM_TEST_REDIS_URL;

/** `describe` when Redis is configured; otherwise a skipped block whose name says how to run it. */
export function describeWithRedis(name: string, body: (redisUrl: string) => void): void {
  if (!testRedisUrl) {
    process.stderr.write(`${name}: skipped, set PRISM_TEST_REDIS_URL=redis://127.0.0.1:6379 to run it\n`);
    describe.skip(`${name} (skipped: set PRISM_TEST_REDIS_URL=redis://127.0.0.1:6379 to run)`, () => {
      it('needs Redis', () => undefined);
    });
    return;
  }
  describe(name, () => body(testRedisUrl));
}

/** A fresh key prefix for one test run: `prism-test:<pid>-<random>:`. */
export function uniquePrefix(): string {
  return `prism-test:${process.pid}-${randomBytes(4).toString('hex')}:`;
}

/** Deletes every key under `prefix`. */
export async function deleteKeys(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
