/**
 * PostgreSQL WalletStore: balances in integer micro-dollars with a ledger entry per change, shared by replicas.
 *
 * A gateway call holds money, then settles. Written through, that was two commits on the organisation's wallet row
 * per call, serialised behind each other's lock and fsync: one organisation's calls were capped (about a thousand
 * commits a second) whatever the number of replicas. So each process keeps an ALLOWANCE per organisation:
 *  - it takes a slice of the available balance into `held_micros` with one conditional UPDATE (and grows its own
 *    `wallet_holds` row, whose `expires_at` it keeps moving forward while alive: a dead replica's slice lapses like
 *    any hold and is given back by the next replica that lacks money), then serves holds from the slice in memory
 *    (a hold is a counter id and a lapse time, ended by the store's tick or by a hold that lacks money: no UUID and
 *    no timer per call);
 *    while few slices' worth is free the grant shrinks to what the waiting call lacks, so a nearly empty wallet is
 *    still shared exactly, call by call, across replicas;
 *  - settles are queued and written together (group commit: a write starts `batchMs` after the first settle it
 *    carries, one write in flight per process, the next carries every settle that arrived meanwhile — at 50 calls
 *    in flight a write carries about ten, against two without the wait): per organisation ONE statement lowers the balance by the batch's debits and the
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
  /** A batch of settles is written this long after its first one arrived (default 5 ms; 0: at the next turn). */
  batchMs?: number;
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
  /** When the hold lapses (ms since the epoch): found by the tick, or at once by a hold that lacks money. */
  lapsesAt: number;
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
  return new PostgresWallets(pool, options);
}

/** The store's state and steps, one method each (see the header for how allowances and group commit work). */
class PostgresWallets implements PostgresWalletStore {
  private readonly sliceTtlS: number;
  private readonly idleMs: number;
  private readonly factor: number;
  private readonly batchMs: number;
  private readonly logger: Logger | undefined;
  private readonly slices = new Map<string, Slice>();
  private readonly holds = new Map<string, OpenHold>();
  private debits: QueuedDebit[] = [];
  /** Free money to give back, per organisation, with the next write. */
  private readonly giveBack = new Map<string, number>();
  private writing: Promise<void> | null = null;
  /** Writes started so far (a read that overlaps one retries). */
  private writesStarted = 0;
  private writeScheduled = false;
  private closed = false;
  /**
   * Top-ups and batch writes of this process run one at a time: each then finds its allowance rows as this process
   * last left them (only a lapse, done by another process, changes them otherwise), which keeps the bookkeeping
   * exact. Top-ups are rare (a slice serves many calls), so writes seldom wait.
   */
  private rowWork: Promise<unknown> = Promise.resolve();
  private lastRefresh = Date.now();
  private readonly tick: NodeJS.Timeout;
  /** Hold ids are this process's prefix and a counter: no UUID and no timer per call. */
  private readonly holdPrefix = `hold:${randomUUID()}:`;
  private holdsLent = 0;

  constructor(
    private readonly pool: pg.Pool,
    options: PostgresWalletStoreOptions,
  ) {
    this.sliceTtlS = (options.sliceTtlMs ?? 30_000) / 1000;
    this.idleMs = options.idleMs ?? 1000;
    this.factor = options.sliceFactor ?? 16;
    this.batchMs = options.batchMs ?? 5;
    this.logger = options.logger;
    // Idle slices go back; live ones are kept from lapsing.
    this.tick = setInterval(() => this.onTick(), Math.max(10, Math.min(this.idleMs, this.sliceTtlS * 1000) / 2));
    this.tick.unref();
  }

  async credit(orgId: string, amountMicros: number, reason: string): Promise<number> {
    if (!Number.isSafeInteger(amountMicros)) throw new RangeError('amount must be a whole number of micro-dollars');
    const { rows } = await this.pool.query<{ balance_micros: number }>(APPLY_CREDIT, [
      orgId,
      amountMicros,
      new Date().toISOString(),
      reason,
    ]);
    return rows[0]?.balance_micros ?? 0;
  }

  async balance(orgId: string): Promise<number> {
    const { rows } = await this.pool.query<{ b: number }>('SELECT balance_micros AS b FROM wallets WHERE org_id = $1', [
      orgId,
    ]);
    return rows[0]?.b ?? 0;
  }

  async hold(orgId: string, micros: number, ttlMs: number): Promise<string | null> {
    if (!Number.isSafeInteger(micros) || micros <= 0) throw new RangeError('a hold is a positive whole amount');
    const slice = this.sliceOf(orgId);
    slice.lastUsed = Date.now();
    for (;;) {
      if (slice.free >= micros) return this.lend(slice, micros, ttlMs);
      // Lapsed holds' money is free again before more is asked for.
      if (this.endLapsedHolds(Date.now()) && slice.free >= micros) continue;
      if (slice.toppingUp) {
        await slice.toppingUp;
        continue;
      }
      const lacking = micros - slice.free;
      const wanted = Math.max(lacking, this.factor * micros);
      const attempt = this.topUp(slice, lacking, wanted);
      slice.toppingUp = attempt;
      let granted: boolean;
      try {
        granted = await attempt;
      } finally {
        slice.toppingUp = null;
      }
      if (!granted) return null;
    }
  }

  async settle(holdId: string, orgId: string, costMicros: number, reason: string): Promise<number> {
    if (!Number.isSafeInteger(costMicros)) throw new RangeError('amount must be a whole number of micro-dollars');
    if (this.closed) return this.credit(orgId, -costMicros, reason);
    const hold = this.endHold(holdId);
    const slice = hold?.slice ?? this.slices.get(orgId);
    // The debit takes the money held for the call first, then (a cost above the hold) free slice money.
    const backed = slice ? Math.min(Math.max(costMicros, 0), slice.free) : 0;
    if (slice) slice.free -= backed;
    return new Promise<number>((resolve, reject) => {
      this.debits.push({ orgId, amount: costMicros, backed, reason, at: new Date().toISOString(), resolve, reject });
      this.scheduleWrite();
    });
  }

  async release(holdId: string): Promise<void> {
    if (this.endHold(holdId)) return;
    // Not a hold of this process: a hold row written by an earlier version of this store.
    await this.pool.query(RELEASE_ROW, [holdId]);
  }

  async held(orgId: string): Promise<number> {
    this.endLapsedHolds(Date.now());
    // `held_micros` less what this process holds but lends to no call: its free slice, and what queued writes
    // will take out of the row. Read between two writes (a write moves money from one side to the other); a store
    // that never pauses writing gets the last read after a few tries.
    for (let attempt = 0; ; attempt++) {
      if (this.writing) await this.writing;
      const epoch = this.writesStarted;
      const { rows } = await this.pool.query<{ h: number }>('SELECT held_micros AS h FROM wallets WHERE org_id = $1', [
        orgId,
      ]);
      if ((this.writesStarted !== epoch || this.writing) && attempt < 20) continue;
      const queued = this.debits.filter((d) => d.orgId === orgId).reduce((sum, d) => sum + d.backed, 0);
      const free = (this.slices.get(orgId)?.free ?? 0) + (this.giveBack.get(orgId) ?? 0) + queued;
      return (rows[0]?.h ?? 0) - free;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.tick);
    for (const id of [...this.holds.keys()]) this.endHold(id);
    for (const slice of this.slices.values()) this.returnFree(slice);
    await this.drain();
  }

  private sliceOf(orgId: string): Slice {
    let slice = this.slices.get(orgId);
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
      this.slices.set(orgId, slice);
    }
    return slice;
  }

  private async topUpOnce(slice: Slice, lacking: number, wanted: number): Promise<boolean> {
    const { rows } = await this.pool.query<{ granted: number | null; slice: number | null }>(TOP_UP, [
      slice.orgId,
      lacking,
      wanted,
      slice.id,
      this.sliceTtlS,
    ]);
    const granted = rows[0]?.granted ?? null;
    if (granted === null) return false;
    const expected = slice.total + granted;
    const stored = rows[0]?.slice ?? expected;
    slice.total = stored;
    // The row is smaller than this process thought only if it lapsed meanwhile (a stalled process): trust the row.
    slice.free += granted - Math.max(0, expected - stored);
    if (expected !== stored) {
      this.logger?.warn('a wallet allowance lapsed while its process was alive', { orgId: slice.orgId });
      slice.free = Math.max(0, slice.free);
    }
    return true;
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.rowWork.then(work, work);
    this.rowWork = run.catch(() => undefined);
    return run;
  }

  /** One top-up; when it does not fit, lapsed holds and allowances are given back and it is tried once more. */
  private topUp(slice: Slice, lacking: number, wanted: number): Promise<boolean> {
    return this.serial(async () => {
      if (await this.topUpOnce(slice, lacking, wanted)) return true;
      const lapsed = await this.pool.query(RELEASE_LAPSED, [slice.orgId]);
      return (lapsed.rowCount ?? 0) > 0 ? this.topUpOnce(slice, lacking, wanted) : false;
    });
  }

  private lend(slice: Slice, micros: number, ttlMs: number): string {
    slice.free -= micros;
    slice.open += 1;
    slice.lastUsed = Date.now();
    const id = `${this.holdPrefix}${(this.holdsLent += 1)}`;
    this.holds.set(id, { slice, micros, lapsesAt: slice.lastUsed + ttlMs });
    return id;
  }

  /** Ends every hold past its lapse time; true when there was one. */
  private endLapsedHolds(now: number): boolean {
    let ended = false;
    for (const [id, hold] of this.holds) {
      if (hold.lapsesAt > now) continue;
      this.endHold(id);
      ended = true;
    }
    return ended;
  }

  /** Ends an open hold, its money free in the slice again; returns the hold or undefined when it is gone. */
  private endHold(id: string): OpenHold | undefined {
    const hold = this.holds.get(id);
    if (!hold) return undefined;
    this.holds.delete(id);
    hold.slice.open -= 1;
    hold.slice.free += hold.micros;
    hold.slice.lastUsed = Date.now();
    return hold;
  }

  private async writeOrg(orgId: string, batch: QueuedDebit[], returned: number): Promise<void> {
    const slice = this.slices.get(orgId);
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
      const { rows } = await this.pool.query<{ balance_micros: number }>(WRITE_BATCH, [
        orgId,
        slice?.id ?? '',
        total,
        backed + returned,
        this.sliceTtlS,
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
      if (batch.length === 0) this.logger?.warn('a wallet allowance was not given back', { error: String(error) });
    }
  }

  private writeQueued(): Promise<void> {
    this.writesStarted += 1;
    return this.serial(() => this.writeBatch());
  }

  private async writeBatch(): Promise<void> {
    const batch = this.debits;
    this.debits = [];
    const returns = new Map(this.giveBack);
    this.giveBack.clear();
    const byOrg = new Map<string, QueuedDebit[]>();
    for (const d of batch) {
      const list = byOrg.get(d.orgId);
      if (list) list.push(d);
      else byOrg.set(d.orgId, [d]);
    }
    for (const orgId of returns.keys()) if (!byOrg.has(orgId)) byOrg.set(orgId, []);
    await Promise.all([...byOrg].map(([orgId, list]) => this.writeOrg(orgId, list, returns.get(orgId) ?? 0)));
  }

  /** Group commit: one write in flight; whatever is queued meanwhile goes with the next. */
  private scheduleWrite(): void {
    if (this.writeScheduled) return;
    this.writeScheduled = true;
    const start = (): void => {
      this.writeScheduled = false;
      if (this.debits.length === 0 && this.giveBack.size === 0) return;
      // writeOrg settles every debit's promise itself; this catch only keeps a bug from becoming an unhandled rejection.
      this.writing = this.writeQueued()
        .catch((error: unknown) => this.logger?.error('wallet batch write failed', { error: String(error) }))
        .finally(() => {
          this.writing = null;
          if (this.debits.length > 0 || this.giveBack.size > 0) this.scheduleWrite();
        });
    };
    // Settles that waited for the write in flight go at once; a batch that starts when none is in flight waits
    // `batchMs` for more (not when the store is closing).
    if (this.writing) {
      void this.writing.then(() => setImmediate(start));
    } else if (this.batchMs > 0 && !this.closed) {
      setTimeout(start, this.batchMs);
    } else {
      setImmediate(start);
    }
  }

  private async drain(): Promise<void> {
    while (this.writing || this.writeScheduled || this.debits.length > 0 || this.giveBack.size > 0) {
      if (this.writing) await this.writing;
      else await new Promise((resolve) => setImmediate(resolve));
      if (!this.writing && !this.writeScheduled && (this.debits.length > 0 || this.giveBack.size > 0)) {
        this.scheduleWrite();
      }
    }
  }

  private returnFree(slice: Slice): void {
    if (slice.free <= 0) return;
    this.giveBack.set(slice.orgId, (this.giveBack.get(slice.orgId) ?? 0) + slice.free);
    slice.free = 0;
    this.scheduleWrite();
  }

  /** Idle slices' free money goes back, empty slices are forgotten, live allowances are kept from lapsing. */
  private onTick(): void {
    const now = Date.now();
    this.endLapsedHolds(now);
    for (const slice of this.slices.values()) {
      if (slice.open === 0 && now - slice.lastUsed >= this.idleMs) this.returnFree(slice);
      if (slice.total === 0 && slice.open === 0 && slice.free === 0 && !slice.toppingUp) {
        this.slices.delete(slice.orgId);
      }
    }
    if (now - this.lastRefresh < (this.sliceTtlS * 1000) / 3) return;
    this.lastRefresh = now;
    const ids = [...this.slices.values()].filter((s) => s.total > 0).map((s) => s.id);
    if (ids.length === 0) return;
    this.pool.query(REFRESH, [ids, this.sliceTtlS]).catch((error: unknown) => {
      this.logger?.warn('wallet allowances not refreshed', { error: String(error) });
    });
  }
}
