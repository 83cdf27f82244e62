import { createMemoryRateLimitStore } from '../../../src/backend/local/metering-stores';
import { createRateLimiter, rateLimitHeaders, type RateLimitDecision } from '../../../src/metering/rate-limiter';

/** 2026-01-01T00:00:00Z: on a minute and hour boundary, so window arithmetic is easy to read. */
const T0 = Date.UTC(2026, 0, 1);
const MIN = 60_000;

async function burst(limiter: ReturnType<typeof createRateLimiter>, key: string, n: number, at: number, tier?: string) {
  const out: RateLimitDecision[] = [];
  for (let i = 0; i < n; i += 1) out.push(await limiter.check(key, at, tier));
  return out;
}

describe('rate limiter (fixed windows, memory store)', () => {
  it('allows 60 per minute, then rejects with Retry-After at the reset until the minute rolls over', async () => {
    const limiter = createRateLimiter(createMemoryRateLimitStore());
    const first60 = await burst(limiter, 'ip:1.2.3.4', 60, T0 + 1000);
    expect(first60.every((d) => d.allowed)).toBe(true);
    expect(first60[59]).toMatchObject({ window: 'minute', limit: 60, remaining: 0, resetS: 59, retryAfterS: 0 });

    const rejected = await limiter.check('ip:1.2.3.4', T0 + 2000);
    expect(rejected).toMatchObject({
      allowed: false,
      window: 'minute',
      retryAfterS: 58,
      resetS: 58,
      label: '60 per 1 minute',
    });
    expect((await limiter.check('ip:1.2.3.4', T0 + MIN)).allowed).toBe(true);
  });

  it('gives a tier its own windows and every other tier the default ones', async () => {
    const limiter = createRateLimiter(createMemoryRateLimitStore(), [{ name: 'minute', lengthS: 60, limit: 2 }], {
      enterprise: [{ name: 'minute', lengthS: 60, limit: 5 }],
    });
    expect((await burst(limiter, 'user:e', 5, T0, 'enterprise')).every((d) => d.allowed)).toBe(true);
    expect(await limiter.check('user:e', T0, 'enterprise')).toMatchObject({ allowed: false, limit: 5 });
    expect((await burst(limiter, 'user:f', 2, T0, 'free')).every((d) => d.allowed)).toBe(true);
    expect(await limiter.check('user:f', T0, 'free')).toMatchObject({ allowed: false, limit: 2, retryAfterS: 60 });
  });

  it('keeps callers apart', async () => {
    const limiter = createRateLimiter(createMemoryRateLimitStore());
    await burst(limiter, 'user:a', 60, T0);
    expect((await limiter.check('user:a', T0)).allowed).toBe(false);
    expect((await limiter.check('user:b', T0)).allowed).toBe(true);
  });

  it('enforces 1000 per hour and reports the hour (the longest exhausted window) with Retry-After at its reset', async () => {
    const limiter = createRateLimiter(createMemoryRateLimitStore());
    for (let minute = 0; minute < 17; minute += 1) {
      const decisions = await burst(limiter, 'user:u', minute < 16 ? 60 : 40, T0 + minute * MIN);
      expect(decisions.every((d) => d.allowed)).toBe(true);
    }
    const last = await limiter.check('user:u', T0 + 17 * MIN);
    expect(last).toMatchObject({ allowed: false, window: 'hour', limit: 1000, remaining: 0, retryAfterS: 43 * 60 });
    expect(last.resetS).toBe(43 * 60);
    // Both windows exhausted: the hour is still the one reported.
    const both = createRateLimiter(createMemoryRateLimitStore(), [
      { name: 'minute', lengthS: 60, limit: 2 },
      { name: 'hour', lengthS: 3600, limit: 2 },
    ]);
    await burst(both, 'k', 2, T0);
    expect(await both.check('k', T0)).toMatchObject({
      allowed: false,
      window: 'hour',
      retryAfterS: 3600,
      resetS: 3600,
    });
    expect((await limiter.check('user:u', T0 + 60 * MIN)).allowed).toBe(true);
  });

  it('does not count rejected calls', async () => {
    const limiter = createRateLimiter(createMemoryRateLimitStore());
    await burst(limiter, 'k', 60, T0);
    await burst(limiter, 'k', 500, T0 + 1000);
    for (let minute = 1; minute < 17; minute += 1) await burst(limiter, 'k', 58, T0 + minute * MIN);
    // 60 + 16 × 58 = 988 counted; the 500 rejected calls did not eat the hour.
    expect(await limiter.check('k', T0 + 17 * MIN)).toMatchObject({ allowed: true, window: 'hour', remaining: 11 });
  });

  it('counts exactly the limit when many calls arrive at once', async () => {
    const limiter = createRateLimiter(createMemoryRateLimitStore());
    const decisions = await Promise.all(Array.from({ length: 200 }, () => limiter.check('k', T0)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(60);
  });

  it('forgets callers idle for longer than the longest window, and never holds more than maxKeys', async () => {
    const store = createMemoryRateLimitStore({ maxKeys: 3 });
    const limiter = createRateLimiter(store);
    await limiter.check('a', T0);
    await limiter.check('b', T0);
    expect(store.size()).toBe(2);
    await limiter.check('c', T0 + 61 * MIN);
    await limiter.check('d', T0 + 61 * MIN);
    expect(store.size()).toBe(2);
    for (const k of ['e', 'f', 'g', 'h']) await limiter.check(k, T0 + 62 * MIN);
    expect(store.size()).toBe(3);
  });

  it('renders OpenAI-style rate-limit headers', async () => {
    const limiter = createRateLimiter(createMemoryRateLimitStore());
    expect(rateLimitHeaders(await limiter.check('k', T0 + 30_000))).toEqual({
      'x-ratelimit-limit-requests': '60',
      'x-ratelimit-remaining-requests': '59',
      'x-ratelimit-reset-requests': '30s',
    });
  });
});
