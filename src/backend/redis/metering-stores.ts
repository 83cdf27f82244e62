/**
 * Metering's ports (ports.ts) on Redis, so several replicas meter as one: "60 a minute" means 60 in all, whichever
 * replica each call reaches, and a guest's $0.50 a day is one budget.
 *
 * Every check-and-count is one Lua script, which Redis runs atomically: no replica can slip between another's read
 * and write. Lua rather than rate-limiter-flexible: its limiters count one window each, so a minute and an hour
 * window would be two calls (a call refused by the hour would already be counted in the minute), and it counts
 * refused calls unless told otherwise; the script counts every window of a caller, or none, in one round trip.
 *
 * Keys (under the install's prefix) carry the caller in a `{hash tag}`, so a caller's keys stay in one slot of a
 * Redis Cluster. Counters expire with their window (limits), after two days (guest spend), or with the last hold
 * (holds; each hold is a member with its own deadline, so a replica that dies holding money holds it no longer
 * than the biller's hold lifetime).
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { KeyedMutex } from '../../lib/keyed-mutex';
import { createKeyedMutex } from '../../lib/keyed-mutex';
import type { GuestSpendStore, HoldStore, PayerLock, RateLimitStore, WindowState } from '../../metering/ports';
import { luaScript } from './lua-script';

const DAY_MS = 86_400_000;

/**
 * KEYS: one counter per window. ARGV: limit, ttl ms, window end ms, for each window in turn.
 * Counts one request in every window when all have room; returns {allowed, count1, count2, …}. It counts first and
 * takes the count back from every window when one is over its limit (the same counts as checking first): an
 * allowed call, the common one, costs one INCR a window inside the script rather than a GET and an INCR.
 */
const CONSUME = `
local n = #KEYS
local counts = {}
local allowed = 1
for i = 1, n do
  local c = redis.call('INCR', KEYS[i])
  if c == 1 then redis.call('PEXPIRE', KEYS[i], ARGV[(i - 1) * 3 + 2]) end
  counts[i] = c
  if c > tonumber(ARGV[(i - 1) * 3 + 1]) then allowed = 0 end
end
if allowed == 0 then
  for i = 1, n do counts[i] = redis.call('DECR', KEYS[i]) end
end
local out = { allowed }
for i = 1, n do out[i + 1] = counts[i] end
return out
`;
const consumeScript = luaScript(CONSUME);

/** Rate-limit windows counted in Redis, atomically over all windows of a caller. */
export function createRedisRateLimitStore(redis: Redis, prefix: string): RateLimitStore {
  return {
    async consume(key, windows, nowMs) {
      const keys: string[] = [];
      const args: string[] = [];
      const ends: number[] = [];
      for (const w of windows) {
        const lengthMs = w.lengthS * 1000;
        const index = Math.floor(nowMs / lengthMs);
        const endMs = (index + 1) * lengthMs;
        keys.push(`${prefix}rl:{${key}}:${w.name}:${index}`);
        // The counter outlives its window by a little, so a late replica's clock still finds it.
        args.push(String(w.limit), String(endMs - nowMs + 5000), String(endMs));
        ends.push(endMs);
      }
      const out = (await consumeScript(redis, keys, args)) as number[];
      const states: WindowState[] = windows.map((_, i) => ({ count: Number(out[i + 1]), resetAtMs: ends[i] ?? 0 }));
      return { allowed: out[0] === 1, states };
    },
  };
}

/** Guests' spend per UTC day: one counter per key and day, kept two days. */
export function createRedisGuestSpendStore(redis: Redis, prefix: string): GuestSpendStore {
  const keyOf = (key: string, nowMs: number): string => `${prefix}guest:{${key}}:${Math.floor(nowMs / DAY_MS)}`;
  return {
    async spent(keys, nowMs) {
      if (keys.length === 0) return [];
      const values = await redis.mget(...keys.map((k) => keyOf(k, nowMs)));
      return values.map((v) => (v === null ? 0 : Number(v)));
    },
    async add(keys, micros, nowMs) {
      const multi = redis.multi();
      for (const k of keys) {
        const key = keyOf(k, nowMs);
        multi.incrby(key, Math.round(micros));
        multi.pexpire(key, 2 * DAY_MS);
      }
      await multi.exec();
    },
  };
}

/** KEYS[1]: a hold set. ARGV: now ms. Drops lapsed holds and sums the rest. */
const HELD = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local total = 0
for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  total = total + tonumber(string.match(member, '^(%d+):'))
end
return total
`;
const heldScript = luaScript(HELD);

/** KEYS[1]: a hold set. ARGV: micros. Removes one hold of that amount (the one lapsing first). */
const REMOVE = `
for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if string.match(member, '^(%d+):') == ARGV[1] then
    redis.call('ZREM', KEYS[1], member)
    return 1
  end
end
return 0
`;
const removeScript = luaScript(REMOVE);

/**
 * Money held by calls still running, per key: a sorted set of `<micros>:<random>` members scored by their deadline
 * (`holdTtlMs` after the hold), so a hold its replica never gave back lapses on its own.
 */
export function createRedisHoldStore(
  redis: Redis,
  prefix: string,
  options: { holdTtlMs: number; onError?: (error: unknown) => void },
): HoldStore {
  const keyOf = (key: string): string => `${prefix}hold:{${key}}`;
  return {
    async held(keys) {
      const now = Date.now();
      return Promise.all(keys.map(async (k) => Number(await heldScript(redis, [keyOf(k)], [String(now)]))));
    },
    async add(keys, micros) {
      const deadline = Date.now() + options.holdTtlMs;
      const multi = redis.multi();
      for (const k of keys) {
        multi.zadd(keyOf(k), deadline, `${Math.round(micros)}:${randomBytes(6).toString('hex')}`);
        multi.pexpire(keyOf(k), options.holdTtlMs + 60_000);
      }
      await multi.exec();
    },
    remove(keys, micros) {
      for (const k of keys) {
        removeScript(redis, [keyOf(k)], [String(Math.round(micros))]).catch((error: unknown) =>
          options.onError?.(error),
        );
      }
    },
  };
}

/** KEYS[1]: a lock. ARGV[1]: its owner's token. Deletes the lock only if this owner still holds it. */
const UNLOCK = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;
const unlockScript = luaScript(UNLOCK);

export interface RedisPayerLockOptions {
  /** A lock whose holder died is free again after this long; work under the lock must finish well within it. */
  leaseMs?: number;
  /** Longest wait for a lock before giving up. */
  waitMs?: number;
}

/**
 * One reservation or settlement per payer at a time across replicas: `SET NX PX` with a random token, released by a
 * compare-and-delete script. Work for one key queues in this process first (a keyed mutex), so a replica sends one
 * contender per key to Redis, not one per call.
 */
export function createRedisPayerLock(redis: Redis, prefix: string, options: RedisPayerLockOptions = {}): PayerLock {
  const leaseMs = options.leaseMs ?? 10_000;
  const waitMs = options.waitMs ?? 30_000;
  const local: KeyedMutex = createKeyedMutex();
  const lockKey = (key: string): string => `${prefix}lock:{${key}}`;

  async function acquire(key: string, token: string): Promise<void> {
    const giveUpAt = Date.now() + waitMs;
    let pause = 2;
    for (;;) {
      if ((await redis.set(lockKey(key), token, 'PX', leaseMs, 'NX')) === 'OK') return;
      if (Date.now() > giveUpAt) throw new Error(`payer lock ${key} not acquired within ${waitMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, pause + Math.random() * pause));
      pause = Math.min(pause * 2, 50);
    }
  }

  return {
    run(key, work) {
      return local.run(key, async () => {
        const token = randomBytes(12).toString('hex');
        await acquire(key, token);
        try {
          return await work();
        } finally {
          await unlockScript(redis, [lockKey(key)], [token]).catch(() => undefined);
        }
      });
    },
  };
}
