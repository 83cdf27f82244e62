/**
 * Reads that every call repeats (an API key's owner, its policy, an organisation's budget) kept in the process, so a
 * gateway call on PostgreSQL does not pay a transaction for each: one entry per key, dropped by any write that may
 * change one (here at once, and over the signal bus in every other replica before the write's caller is answered),
 * and at the latest `ttlMs` after it was read, for writers that reach the database without the bus (a CLI with no
 * Redis) and for a signal lost while a replica's subscriber reconnected.
 *
 * A read that started before an invalidation does not store what it read (a generation count), so a write is
 * never hidden by a read that raced it. `passThroughReads()` caches nothing: SQLite reads cost microseconds, and a
 * CLI writing to the same file has no bus to reach the server by.
 */
import type { SignalBus } from './signal-bus';

export interface ReadCache<V> {
  /** The entry for `key`, loading it with `load` when absent or older than the time to live. */
  read(key: string, load: () => Promise<V>): Promise<V>;
  /** Drops every entry here and, over the bus, in every replica; resolves once the signal is sent. */
  invalidate(): Promise<void>;
  /** Stops listening to the bus. */
  close(): void;
}

export interface ReadCacheOptions<V> {
  bus: SignalBus;
  /** The bus channel writes of this kind are announced on. */
  channel: string;
  /** Longest an entry is used without reading it again. */
  ttlMs: number;
  /** Entries kept at most; the cache starts over when it is full. */
  maxEntries?: number;
  /** Whether a loaded value is kept (an unknown API key is not: a key made on another replica must work at once). */
  keep?: (value: V) => boolean;
  now?: () => number;
}

export function createReadCache<V>(options: ReadCacheOptions<V>): ReadCache<V> {
  const { bus, channel, ttlMs } = options;
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  const entries = new Map<string, { value: V; readAt: number }>();
  let generation = 0;
  const drop = (): void => {
    generation += 1;
    entries.clear();
  };
  const unsubscribe = bus.subscribe(channel, drop);
  return {
    async read(key, load) {
      const entry = entries.get(key);
      if (entry && now() - entry.readAt < ttlMs) return entry.value;
      const startedIn = generation;
      const readAt = now();
      const value = await load();
      if (startedIn === generation && (options.keep?.(value) ?? true)) {
        if (entries.size >= maxEntries) entries.clear();
        entries.set(key, { value, readAt });
      }
      return value;
    },
    async invalidate() {
      drop();
      // A signal that cannot be sent (Redis down) leaves other replicas' entries to their time to live.
      await bus.publish(channel, 'changed').catch(() => undefined);
    },
    close: unsubscribe,
  };
}

/** A cache that keeps nothing: every read loads. */
export function passThroughReads<V>(): ReadCache<V> {
  return {
    read: (_key, load) => load(),
    invalidate: async () => undefined,
    close: () => undefined,
  };
}
