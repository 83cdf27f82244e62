/**
 * The raw database behind a set of stores, for the few callers that must see under the store interfaces: the
 * test helper that runs SQL against a running app, and the `prism db` commands. Services never get it (the
 * container does not expose it); it is looked up by the stores object the backend built. It names the drivers' own
 * types, not the rooms', so the rooms that register here import nothing of each other through it.
 */
import type Database from 'better-sqlite3';
import type { Pool } from 'pg';
import type { Stores } from '../stores/types';

export type RawDatabase =
  { dialect: 'sqlite'; db: Database.Database } | { dialect: 'postgres'; pool: Pool; schema: string };

const registry = new WeakMap<Stores, RawDatabase>();

export function registerRawDatabase(stores: Stores, raw: RawDatabase): void {
  registry.set(stores, raw);
}

/** @throws Error when `stores` was not built by a backend of this module. */
export function rawDatabaseOf(stores: Stores): RawDatabase {
  const raw = registry.get(stores);
  if (!raw) throw new Error('these stores were not built by the backend seam');
  return raw;
}
