/**
 * A Lua script run by its SHA-1 (EVALSHA) instead of its body (EVAL): the rate-limit script runs on every gateway call,
 * and EVAL sent its whole body each time, which Redis then hashed to find its compiled copy. EVALSHA sends 40
 * characters; when Redis does not know the script (a restart, SCRIPT FLUSH, another server behind the URL) it answers
 * NOSCRIPT and the body is sent once with EVAL, which also loads it for the next calls.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

export type LuaScript = (redis: Redis, keys: readonly string[], args: readonly string[]) => Promise<unknown>;

export function luaScript(body: string): LuaScript {
  const sha = createHash('sha1').update(body).digest('hex');
  return async (redis, keys, args) => {
    try {
      return await redis.evalsha(sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!String(error).includes('NOSCRIPT')) throw error;
      return redis.eval(body, keys.length, ...keys, ...args);
    }
  };
}
