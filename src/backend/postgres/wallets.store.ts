/**
 * PostgreSQL WalletStore: balances in integer micro-dollars with a ledger entry per change, shared by replicas.
 *
 * A gateway call holds money, then settles. Written through, that was two commits on the organisation's wallet row
 * per call, serialised behind each other's lock and fsync: one organisation's calls were capped (about a thousand
 * commits a second) whatever the number of replicas. So each process keeps an ALLOWANCE per organisation:
 *  - it takes a slice of the available balance into `held_micros` with one conditional UPDATE (and grows its own
 *    `wallet_holds` row, whose `expires_at` it keeps moving forward while alive: a dead replica's slice lapses like
 *    any hold and is given back by the next replica that lacks money), then serves holds from the slice in memory;
 *    while few slices' worth is free the grant shrinks to what the waiting call lacks, so a nearly empty wallet is
 *    still shared exactly, call by call, across replicas;
 *  - settles are queued and written together (group commit: one write in flight per process, the next carries every
 *    settle that arrived meanwhile): per organisation ONE statement lowers the balance by the batch's debits and the
 *    allowance by the money that was held for them, and inserts the ledger rows. `settle` resolves once its debit is
 *    committed, with the exact balance its ledger row records, so nothing is lost if the process dies afterwards;
 *  - money of a slice not lent to a call is given back after `idleMs` without holds for that organisation, and on
 *    `close()`.
 * A debit takes the money held for its call (and any excess from the slice's free money): the balance only drops by
 * held money, and `held_micros <= balance_micros` holds as before. `balance()` is the stored balance (held money not
 * subtracted); `held()` is `held_micros` less this process's free slice money (so other live replicas' free slices
 * count as held). Credits are written through at once.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Logger } from '../../lib/logger';
import type { WalletStore } from '../../stores/types';
import { APPLY_CREDIT, REFRESH, RELEASE_LAPSED, RELEASE_ROW, TOP_UP, WRITE_BATCH } from './wallet-sql';

export interface PostgresWalletStoreOptions {
  /** How long a replica's allowance outlives the replica (its last refresh); default 30 s. */
  sliceTtlMs?: number;
  /** Free allowance money goes back after this long without a hold for its organisation; default 1 s. */
  idleMs?: number;
  /** A top-up asks for this many times the call's hold (default 16), granted while four such slices are free. */
  sliceFactor?: number;
  logger?: Logger;
}

export interface PostgresWalletStore extends WalletStore {
  /** Writes queued debits and gives every free allowance back. */
  close(): Promise<void>;
}

interface Slice {
  orgId: string;
  /** The id of this process's allowance row in `wallet_holds`. */
  id: string;
  /** The row's micros as this process last wrote them (free + lent to holds + taken by queued debits). */
  total: number;
  /** Not lent to any call. */
  free: number;
  /** Holds lent from the slice and still open. */
  open: number;
  lastUsed: number;
  toppingUp: Promise<boolean> | null;
}

interface OpenHold {
  slice: Slice;
  micros: number;
  lapse: NodeJS.Timeout;
}

interface QueuedDebit {
  orgId: string;
  amount: number;
  /** Part of the debit that was held in this process's allowance. */
  backed: number;
  reason: string;
  at: string;
  resolve: (balance: number) => void;
  reject: (error: unknown) => void;
}

export function createPostgresWalletStore(
  pool: pg.Pool,
  options: PostgresWalletStoreOptions = {},
): PostgresWalletStore {
  const sliceTtlS = (options.sliceTtlMs ?? 30_000) / 1000;
  const idleMs = options.idleMs ?? 1000;
  const factor = options.sliceFactor ?? 16;
  const slices = new Map<string, Slice>();
  const holds = new Map<string, OpenHold>();
  let debits: QueuedDebit[] = [];
  /** Free money to give back, per organisation, with the next write. */
  const giveBack = new Map<string, number>();
  let writing: Promise<void> | null = null;
  /** Writes started so far (a read that overlaps one retries). */
  let writesStarted = 0;
  let writeScheduled = false;
  let closed = false;

  const sliceOf = (orgId: string): Slice => {
    let slice = slices.get(orgId);
    if (!slice) {
      slice = {
        orgId,
        id: `allowance:${randomUUID()}`,
        total: 0,
        free: 0,
        open: 0,
        lastUsed: Date.now(),
        toppingUp: null,
      };
      slices.set(orgId, slice);
    }
    return slice;
  };

  const topUpOnce = async (slice: Slice, lacking: number, wanted: number): Promise<boolean> => {
    const { rows } = await pool.query<{ granted: number | null; slice: number | null }>(TOP_UP, [
      slice.orgId,
      lacking,
      wanted,
      slice.id,
      sliceTtlS,
    ]);
    const granted = rows[0]?.granted ?? null;
    if (granted === null) return false;
    const expected = slice.total + granted;
    const stored = rows[0]?.slice ?? expected;
    slice.total = stored;
    // The row is smaller than this process thought only if it lapsed meanwhile (a stalled process): trust the row.
    slice.free += granted - Math.max(0, expected - stored);
    if (expected !== stored) {
      options.logger?.warn('a wallet allowance lapsed while its process was alive', { orgId: slice.orgId });
      slice.free = Math.max(0, slice.free);
    }
    return true;
  };

  /**
   * Top-ups and batch writes of this process run one at a time: each then finds its allowance rows as this process
   * last left them (only a lapse, done by another process, changes them otherwise), which keeps the bookkeeping
   * exact. Top-ups are rare (a slice serves many calls), so writes seldom wait.
   */
  let rowWork: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const run = rowWork.then(work, work);
    rowWork = run.catch(() => undefined);
    return run;
  };

  /** One top-up; when it does not fit, lapsed holds and allowances are given back and it is tried once more. */
  const topUp = (slice: Slice, lacking: number, wanted: number): Promise<boolean> =>
    serial(async () => {
      if (await topUpOnce(slice, lacking, wanted)) return true;
      const lapsed = await pool.query(RELEASE_LAPSED, [slice.orgId]);
      return (lapsed.rowCount ?? 0) > 0 ? topUpOnce(slice, lacking, wanted) : false;
    });

  const lend = (slice: Slice, micros: number, ttlMs: number): string => {
    slice.free -= micros;
    slice.open += 1;
    slice.lastUsed = Date.now();
    const id = randomUUID();
    const lapse = setTimeout(() => giveHoldBack(id), ttlMs);
    lapse.unref();
    holds.set(id, { slice, micros, lapse });
    return id;
  };

  /** Ends an open hold, its money free in the slice again; returns the hold or undefined when it is gone. */
  const endHold = (id: string): OpenHold | undefined => {
    const hold = holds.get(id);
    if (!hold) return undefined;
    holds.delete(id);
    clearTimeout(hold.lapse);
    hold.slice.open -= 1;
    hold.slice.free += hold.micros;
    hold.slice.lastUsed = Date.now();
    return hold;
  };
  const giveHoldBack = (id: string): void => {
    endHold(id);
  };

  const writeOrg = async (orgId: string, batch: QueuedDebit[], returned: number): Promise<void> => {
    const slice = slices.get(orgId);
    const backed = batch.reduce((sum, d) => sum + d.backed, 0);
    const total = batch.reduce((sum, d) => sum + d.amount, 0);
    let later = total;
    const after: number[] = [];
    for (const d of batch) {
      later -= d.amount;
      after.push(later);
    }
    const at = batch.at(-1)?.at ?? new Date().toISOString();
    try {
      const { rows } = await pool.query<{ balance_micros: number }>(WRITE_BATCH, [
        orgId,
        slice?.id ?? '',
        total,
        backed + returned,
        sliceTtlS,
        at,
        batch.map((d) => d.amount),
        after,
        batch.map((d) => d.reason),
        batch.map((d) => d.at),
      ]);
      if (slice) slice.total = Math.max(0, slice.total - backed - returned);
      const balance = rows[0]?.balance_micros ?? 0;
      batch.forEach((d, i) => d.resolve(balance + (after[i] ?? 0)));
    } catch (error) {
      // Nothing was written: the money stays held in the allowance row, so it is free in the slice again.
      if (slice) slice.free += backed + returned;
      for (const d of batch) d.reject(error);
      if (batch.length === 0) options.logger?.warn('a wallet allowance was not given back', { error: String(error) });
    }
  };

  const writeQueued = (): Promise<void> => {
    writesStarted += 1;
    return serial(writeBatch);
  };

  const writeBatch = async (): Promise<void> => {
    const batch = debits;
    debits = [];
    const returns = new Map(giveBack);
    giveBack.clear();
    const byOrg = new Map<string, QueuedDebit[]>();
    for (const d of batch) {
      const list = byOrg.get(d.orgId);
      if (list) list.push(d);
      else byOrg.set(d.orgId, [d]);
    }
    for (const orgId of returns.keys()) if (!byOrg.has(orgId)) byOrg.set(orgId, []);
    await Promise.all([...byOrg].map(([orgId, list]) => writeOrg(orgId, list, returns.get(orgId) ?? 0)));
  };

  /** Group commit: one write in flight; whatever is queued meanwhile goes with the next. */
  const scheduleWrite = (): void => {
    if (writeScheduled) return;
    writeScheduled = true;
    const start = (): void => {
      writeScheduled = false;
      if (debits.length === 0 && giveBack.size === 0) return;
      // writeOrg settles every debit's promise itself; this catch only keeps a bug from becoming an unhandled rejection.
      writing = writeQueued()
        .catch((error: unknown) => options.logger?.error('wallet batch write failed', { error: String(error) }))
        .finally(() => {
          writing = null;
          if (debits.length > 0 || giveBack.size > 0) scheduleWrite();
        });
    };
    if (writing) void writing.then(() => setImmediate(start));
    else setImmediate(start);
  };

  const drain = async (): Promise<void> => {
    while (writing || writeScheduled || debits.length > 0 || giveBack.size > 0) {
      if (writing) await writing;
      else await new Promise((resolve) => setImmediate(resolve));
      if (!writing && !writeScheduled && (debits.length > 0 || giveBack.size > 0)) scheduleWrite();
    }
  };

  const returnFree = (slice: Slice): void => {
    if (slice.free <= 0) return;
    giveBack.set(slice.orgId, (giveBack.get(slice.orgId) ?? 0) + slice.free);
    slice.free = 0;
    scheduleWrite();
  };

  // Idle slices go back; live ones are kept from lapsing.
  let lastRefresh = Date.now();
  const tick = setInterval(
    () => {
      const now = Date.now();
      for (const slice of slices.values()) {
        if (slice.open === 0 && now - slice.lastUsed >= idleMs) returnFree(slice);
        if (slice.total === 0 && slice.open === 0 && slice.free === 0 && !slice.toppingUp) slices.delete(slice.orgId);
      }
      if (now - lastRefresh >= (sliceTtlS * 1000) / 3) {
        lastRefresh = now;
        const ids = [...slices.values()].filter((s) => s.total > 0).map((s) => s.id);
        if (ids.length > 0) {
          pool.query(REFRESH, [ids, sliceTtlS]).catch((error: unknown) => {
            options.logger?.warn('wallet allowances not refreshed', { error: String(error) });
          });
        }
      }
    },
    Math.max(10, Math.min(idleMs, sliceTtlS * 1000) / 2),
  );
  tick.unref();

  const credit = async (orgId: string, amountMicros: number, reason: string): Promise<number> => {
    if (!Number.isSafeInteger(amountMicros)) throw new RangeError('amount must be a whole number of micro-dollars');
    const { rows } = await pool.query<{ balance_micros: number }>(APPLY_CREDIT, [
      orgId,
      amountMicros,
      new Date().toISOString(),
      reason,
    ]);
    return rows[0]?.balance_micros ?? 0;
  };

  return {
    credit,
    async balance(orgId) {
      const { rows } = await pool.query<{ b: number }>('SELECT balance_micros AS b FROM wallets WHERE org_id = $1', [
        orgId,
      ]);
      return rows[0]?.b ?? 0;
    },
    async hold(orgId, micros, ttlMs) {
      if (!Number.isSafeInteger(micros) || micros <= 0) throw new RangeError('a hold is a positive whole amount');
      const slice = sliceOf(orgId);
      slice.lastUsed = Date.now();
      for (;;) {
        if (slice.free >= micros) return lend(slice, micros, ttlMs);
        if (slice.toppingUp) {
          await slice.toppingUp;
          continue;
        }
        const lacking = micros - slice.free;
        const wanted = Math.max(lacking, factor * micros);
        const attempt = topUp(slice, lacking, wanted);
        slice.toppingUp = attempt;
        let granted: boolean;
        try {
          granted = await attempt;
        } finally {
          slice.toppingUp = null;
        }
        if (!granted) return null;
      }
    },
    async settle(holdId, orgId, costMicros, reason) {
      if (!Number.isSafeInteger(costMicros)) throw new RangeError('amount must be a whole number of micro-dollars');
      if (closed) return credit(orgId, -costMicros, reason);
      const hold = endHold(holdId);
      const slice = hold?.slice ?? slices.get(orgId);
      // The debit takes the money held for the call first, then (a cost above the hold) free slice money.
      const backed = slice ? Math.min(Math.max(costMicros, 0), slice.free) : 0;
      if (slice) slice.free -= backed;
      return new Promise<number>((resolve, reject) => {
        debits.push({ orgId, amount: costMicros, backed, reason, at: new Date().toISOString(), resolve, reject });
        scheduleWrite();
      });
    },
    async release(holdId) {
      if (endHold(holdId)) return;
      // Not a hold of this process: a hold row written by an earlier version of this store.
      await pool.query(RELEASE_ROW, [holdId]);
    },
    async held(orgId) {
      // `held_micros` less what this process holds but lends to no call: its free slice, and what queued writes
      // will take out of the row. Read between two writes (a write moves money from one side to the other); a store
      // that never pauses writing gets the last read after a few tries.
      for (let attempt = 0; ; attempt++) {
        if (writing) await writing;
        const epoch = writesStarted;
        const { rows } = await pool.query<{ h: number }>('SELECT held_micros AS h FROM wallets WHERE org_id = $1', [
          orgId,
        ]);
        if ((writesStarted !== epoch || writing) && attempt < 20) continue;
        const queued = debits.filter((d) => d.orgId === orgId).reduce((sum, d) => sum + d.backed, 0);
        const free = (slices.get(orgId)?.free ?? 0) + (giveBack.get(orgId) ?? 0) + queued;
        return (rows[0]?.h ?? 0) - free;
      }
    },
    async close() {
      closed = true;
      clearInterval(tick);
      for (const id of [...holds.keys()]) giveHoldBack(id);
      for (const slice of slices.values()) returnFree(slice);
      await drain();
    },
  };
}
