/**
 * SQLite WalletStore: an organisation's USD balance in integer micro-dollars, with a ledger of every change.
 * A balance and its ledger entry are always written in the same transaction, so they never disagree.
 *
 * Debits (every gateway call makes one) are written behind: each is applied to the balance this process holds in
 * memory at once — so the next call's 402 check already sees it — and queued; the queue is written in ONE
 * transaction at most `flushMs` later (or at once when it reaches FLUSH_AT entries, on `flush()` and on close).
 * A commit per call cost more than everything else the gateway does for a call. What this trades: a process
 * that dies without closing loses at most `flushMs` of debits (calls served, not billed); nothing is ever
 * billed twice. Credits (operators adding money) are written through at once, after any queued debits.
 * Balances held in memory are dropped when `PRAGMA data_version` shows another connection (the CLI) committed.
 *
 * Holds live in this store's memory: a SQLite install has one serving process (`prism serve --workers N` needs
 * PostgreSQL), so the check and the hold are one synchronous step here, exactly as the PostgreSQL store's single
 * conditional UPDATE is across processes. A process that dies loses its holds with its calls, which is what a
 * lapsed hold means anyway.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../lib/logger';
import type { WalletStore } from '../../stores/types';
import type { SqliteDatabase } from './database';
import { watchOtherCommits } from './other-commits';

/** Queued debits that trigger a write without waiting for the timer. */
const FLUSH_AT = 1000;

export interface SqliteWalletStoreOptions {
  /** Longest a debit waits in memory before it is written (default 10 ms; 0 writes every debit at once). */
  flushMs?: number;
  logger?: Logger;
}

interface QueuedDebit {
  orgId: string;
  amountMicros: number;
  reason: string;
  at: string;
}

export interface SqliteWalletStore extends WalletStore {
  /** Write every queued debit now. */
  flush(): void;
}

export function createSqliteWalletStore(db: SqliteDatabase, options: SqliteWalletStoreOptions = {}): SqliteWalletStore {
  const flushMs = options.flushMs ?? 10;
  const { read, creditTx, writeQueue } = walletStatements(db);
  const otherCommitted = watchOtherCommits(db);
  const holdBook = createHoldBook();
  let queue: QueuedDebit[] = [];
  /** Per organisation: the sum of its queued debits (negative). */
  const queuedByOrg = new Map<string, number>();
  /** Per organisation: the balance including queued debits, valid while no other connection commits. */
  const balances = new Map<string, number>();
  let timer: NodeJS.Timeout | null = null;
  const flush = (): void => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (queue.length === 0) return;
    const writing = queue;
    queue = [];
    try {
      writeQueue(writing);
    } catch (error) {
      // Keep the debits (in order) for the next attempt rather than losing them.
      queue = writing.concat(queue);
      options.logger?.error('wallet debits could not be written; retrying', { error: String(error) });
      if (db.open) schedule();
      return;
    }
    for (const d of writing) {
      const left = (queuedByOrg.get(d.orgId) ?? 0) - d.amountMicros;
      if (left === 0) queuedByOrg.delete(d.orgId);
      else queuedByOrg.set(d.orgId, left);
    }
  };

  function schedule(): void {
    if (timer) return;
    timer = setTimeout(flush, flushMs);
    timer.unref();
  }

  /** The balance with queued debits applied, from memory while it is known to be current. */
  const current = (orgId: string): number => {
    if (otherCommitted()) balances.clear();
    let balance = balances.get(orgId);
    if (balance === undefined) {
      balance = (read.get(orgId)?.balance_micros ?? 0) + (queuedByOrg.get(orgId) ?? 0);
      balances.set(orgId, balance);
    }
    return balance;
  };

  const credit = async (orgId: string, amountMicros: number, reason: string): Promise<number> => {
    if (!Number.isSafeInteger(amountMicros)) throw new RangeError('amount must be a whole number of micro-dollars');
    const at = new Date().toISOString();
    if (amountMicros >= 0 || flushMs <= 0) {
      flush();
      const written = creditTx(orgId, amountMicros, reason, at);
      balances.delete(orgId);
      return written + (queuedByOrg.get(orgId) ?? 0);
    }
    const balance = current(orgId) + amountMicros;
    balances.set(orgId, balance);
    queuedByOrg.set(orgId, (queuedByOrg.get(orgId) ?? 0) + amountMicros);
    queue.push({ orgId, amountMicros, reason, at });
    if (queue.length >= FLUSH_AT) flush();
    else schedule();
    return balance;
  };

  return {
    credit,
    async balance(orgId) {
      return current(orgId);
    },
    async hold(orgId, micros, ttlMs) {
      return holdBook.take(orgId, micros, ttlMs, current);
    },
    async settle(holdId, orgId, costMicros, reason) {
      // The debit lands before the hold is given back, so no other hold sees the money twice.
      try {
        return await credit(orgId, -costMicros, reason);
      } finally {
        holdBook.drop(holdId);
      }
    },
    async release(holdId) {
      holdBook.drop(holdId);
    },
    async held(orgId) {
      return holdBook.held(orgId);
    },
    flush,
  };
}

/** The prepared statements and transactions of the store: upsert a balance, write a credit, write a batch of debits. */
function walletStatements(db: SqliteDatabase) {
  const upsert = db.prepare<[{ org: string; amount: number; now: string }], { balance_micros: number }>(
    `INSERT INTO wallets (org_id, balance_micros, updated_at) VALUES (@org, @amount, @now)
     ON CONFLICT (org_id) DO UPDATE SET balance_micros = balance_micros + @amount, updated_at = @now
     RETURNING balance_micros`,
  );
  const entry = db.prepare(
    'INSERT INTO wallet_entries (org_id, amount_micros, balance_after_micros, reason, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const read = db.prepare<[string], { balance_micros: number }>('SELECT balance_micros FROM wallets WHERE org_id = ?');

  const apply = (orgId: string, amountMicros: number, reason: string, at: string): number => {
    const balance = upsert.get({ org: orgId, amount: amountMicros, now: at })?.balance_micros ?? 0;
    entry.run(orgId, amountMicros, balance, reason, at);
    return balance;
  };
  const creditTx = db.transaction(apply);
  /**
   * One balance update per organisation in the batch (by the sum of its debits), then one ledger entry per debit,
   * each with the balance it left in queue order: the same rows as applying the debits one by one, at half the
   * statements.
   */
  const writeQueue = db.transaction((debits: QueuedDebit[]) => {
    const totals = new Map<string, { amount: number; at: string }>();
    for (const d of debits) {
      const total = totals.get(d.orgId);
      if (total) {
        total.amount += d.amountMicros;
        total.at = d.at;
      } else {
        totals.set(d.orgId, { amount: d.amountMicros, at: d.at });
      }
    }
    /** Per organisation: its balance before the batch, advanced debit by debit below. */
    const running = new Map<string, number>();
    for (const [orgId, total] of totals) {
      const after = upsert.get({ org: orgId, amount: total.amount, now: total.at })?.balance_micros ?? 0;
      running.set(orgId, after - total.amount);
    }
    for (const d of debits) {
      const balance = (running.get(d.orgId) ?? 0) + d.amountMicros;
      running.set(d.orgId, balance);
      entry.run(d.orgId, d.amountMicros, balance, d.reason, d.at);
    }
  });
  return { read, creditTx, writeQueue };
}

/** Holds kept in memory: live holds by id, their sum per organisation, lapsing when next looked at after their time. */
function createHoldBook() {
  /**
   * Live holds by id, and their sum per organisation. A hold that is never settled lapses when it is next looked at
   * after its time (`dropLapsed`), not by a timer of its own: a Timeout and a random UUID per gateway call kept
   * every call's hold alive into V8's old generation (~0.5 KB promoted per call, against ~0.15 KB without them). The
   * ids only need to be unique within this process, so they count.
   */
  const holds = new Map<string, { orgId: string; micros: number; lapsesAt: number }>();
  const heldByOrg = new Map<string, number>();
  const holdIdPrefix = `hold-${randomUUID().slice(0, 8)}-`;
  let holdsMade = 0;
  /** The earliest time a live hold lapses (Infinity when none can). */
  let nextLapseAt = Number.POSITIVE_INFINITY;
  const dropHold = (holdId: string): void => {
    const hold = holds.get(holdId);
    if (!hold) return;
    holds.delete(holdId);
    const left = (heldByOrg.get(hold.orgId) ?? 0) - hold.micros;
    if (left > 0) heldByOrg.set(hold.orgId, left);
    else heldByOrg.delete(hold.orgId);
  };
  /** Gives back the holds whose time has passed; a scan only when one may have. */
  const dropLapsed = (now: number): void => {
    if (now < nextLapseAt) return;
    nextLapseAt = Number.POSITIVE_INFINITY;
    for (const [id, hold] of holds) {
      if (hold.lapsesAt <= now) dropHold(id);
      else if (hold.lapsesAt < nextLapseAt) nextLapseAt = hold.lapsesAt;
    }
  };
  return {
    /** Makes a hold of `micros` for `orgId` when `available` covers it with what is already held; null otherwise. */
    take(orgId: string, micros: number, ttlMs: number, available: (orgId: string) => number): string | null {
      const now = Date.now();
      dropLapsed(now);
      const held = heldByOrg.get(orgId) ?? 0;
      if (available(orgId) - held < micros) return null;
      holdsMade += 1;
      const id = `${holdIdPrefix}${holdsMade}`;
      const lapsesAt = now + ttlMs;
      holds.set(id, { orgId, micros, lapsesAt });
      heldByOrg.set(orgId, held + micros);
      if (lapsesAt < nextLapseAt) nextLapseAt = lapsesAt;
      return id;
    },
    drop: dropHold,
    held(orgId: string): number {
      dropLapsed(Date.now());
      return heldByOrg.get(orgId) ?? 0;
    },
  };
}
