/**
 * Metering's ports on a real Redis, each used from two "replicas" (two clients, two limiters or guards): 60 a minute
 * is 60 in all however calls are spread, a refused call counts nowhere, guest spend and holds are one budget, a hold
 * lapses on its own, and the payer lock serialises work across replicas.
 */
import { Redis } from 'ioredis';
import { createGuestSpendGuard } from '../../src/metering/guest-spend';
import { createRateLimiter } from '../../src/metering/rate-limiter';
import {
  createRedisGuestSpendStore,
  createRedisHoldStore,
  createRedisPayerLock,
  createRedisRateLimitStore,
} from '../../src/backend/redis/metering-stores';
import { deleteKeys, describeWithRedis, uniquePrefix } from '../helpers/redis';

describeWithRedis('metering on Redis', (redisUrl) => {
  const prefix = uniquePrefix();
  const clients: Redis[] = [];
  const client = (): Redis => {
    const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
    clients.push(redis);
    return redis;
  };
  afterAll(async () => {
    for (const redis of clients) redis.disconnect();
    await deleteKeys(redisUrl, prefix);
  });

  const windows = [
    { name: 'minute' as const, lengthS: 60, limit: 60 },
    { name: 'hour' as const, lengthS: 3600, limit: 1000 },
  ];
  // The middle of a minute, so the test never straddles a window edge.
  const now = Math.floor(Date.now() / 60_000) * 60_000 + 30_000;

  it('allows 60 a minute in all across replicas; the 61st is refused on either', async () => {
    const replicas = [client(), client()].map((r) => createRateLimiter(createRedisRateLimitStore(r, prefix), windows));
    const decisions = await Promise.all(
      Array.from({ length: 70 }, (_, i) => (replicas[i % 2] as (typeof replicas)[0]).check('user:sixty', now)),
    );
    expect(decisions.filter((d) => d.allowed)).toHaveLength(60);
    for (const replica of replicas) {
      const refused = await replica.check('user:sixty', now);
      expect(refused).toMatchObject({ allowed: false, window: 'minute', remaining: 0, retryAfterS: 30 });
    }
    expect((await replicas[0]!.check('user:other', now)).allowed).toBe(true);
    expect((await replicas[1]!.check('user:sixty', now + 60_000)).allowed).toBe(true);
  });

  it('counts a call in every window or in none', async () => {
    const store = createRedisRateLimitStore(client(), prefix);
    const tight = [
      { name: 'minute' as const, lengthS: 60, limit: 5 },
      { name: 'hour' as const, lengthS: 3600, limit: 2 },
    ];
    const results = [];
    for (let i = 0; i < 4; i += 1) results.push(await store.consume('user:both', tight, now));
    expect(results.map((r) => r.allowed)).toEqual([true, true, false, false]);
    // The refused calls were counted in neither window.
    expect(results[3]!.states.map((s) => s.count)).toEqual([2, 2]);
    expect(results[3]!.states[0]!.resetAtMs).toBe(Math.floor(now / 60_000) * 60_000 + 60_000);
  });

  it('keeps one guest budget across replicas: spend, and holds taken under the payer lock', async () => {
    const holdTtlMs = 60_000;
    const guards = [client(), client()].map((r) => ({
      guard: createGuestSpendGuard(createRedisGuestSpendStore(r, prefix), {
        capMicros: 500_000,
        holds: createRedisHoldStore(r, prefix, { holdTtlMs }),
      }),
      lock: createRedisPayerLock(r, prefix),
    }));
    const guest = { clientIp: '203.0.113.9', fingerprint: null };
    await guards[0]!.guard.record(guest, 100_000, now);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) => {
        const { guard, lock } = guards[i % 2]!;
        return lock.run('guest', () => guard.hold(guest, 50_000, now));
      }),
    );
    // $0.10 spent + 8 holds of $0.05 = the $0.50 cap.
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(8);
    guards[1]!.guard.release(guest, 50_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await guards[0]!.lock.run('guest', () => guards[0]!.guard.hold(guest, 50_000, now));
    await expect(guards[1]!.guard.hold(guest, 1, now)).rejects.toMatchObject({ code: 'guest_spend_cap' });
    expect(await createRedisGuestSpendStore(client(), prefix).spent(['ip:203.0.113.9'], now + 86_400_000)).toEqual([0]);
  });

  it('lets a hold whose replica never gave it back lapse', async () => {
    const holds = createRedisHoldStore(client(), prefix, { holdTtlMs: 100 });
    await holds.add(['org:lapsing'], 7000);
    await holds.add(['org:lapsing'], 3000);
    expect(await holds.held(['org:lapsing', 'org:none'])).toEqual([10_000, 0]);
    holds.remove(['org:lapsing'], 3000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await holds.held(['org:lapsing'])).toEqual([7000]);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await holds.held(['org:lapsing'])).toEqual([0]);
  });

  it('runs work for one payer one at a time across replicas', async () => {
    const locks = [createRedisPayerLock(client(), prefix), createRedisPayerLock(client(), prefix)];
    const shared = client();
    await shared.set(`${prefix}counter`, '0');
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        locks[i % 2]!.run('org:counted', async () => {
          const value = Number(await shared.get(`${prefix}counter`));
          await new Promise((resolve) => setTimeout(resolve, 2));
          await shared.set(`${prefix}counter`, String(value + 1));
        }),
      ),
    );
    expect(await shared.get(`${prefix}counter`)).toBe('20');
  });
});
