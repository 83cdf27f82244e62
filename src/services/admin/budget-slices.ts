/**
 * Key and organisation budgets for calls too many and too quick to hold one by one: a decision stream answers
 * hundreds of frames a second, and a budget hold is a database transaction (budget-ledger.ts). A slice holds
 * many frames' worth of the key's budget and the organisation's at once (`holdUpTo`: as much as fits, at least
 * the next frame), counts frames against it in memory, and settles what they cost in one step when it runs out,
 * when it is `MAX_SLICE_AGE_MS` old, and when its caller has been quiet for `IDLE_SETTLE_MS` (the rest is given
 * back then, so a paused stream keeps nothing). The holds are the same rows as every other call's, so replicas
 * sharing a database never hand out the same budget twice, and a slice a dead process held lapses like any hold.
 *
 * A frame the budget cannot cover is refused before it is decided (402 `key_budget_exceeded` or
 * `org_budget_exceeded`). Each frame's cost is recorded for the spend reports by key, model and day as it is spent
 * (queued and written many rows per statement: `recordSpend`).
 */
import type { Payer } from '../../metering/billing';
import type { KeyPolicies } from './key-policies';
import type { OrgBudgets } from './org-budgets';

/** Settle and hold again at least this often while frames flow (spend reports see a stream this late). */
const MAX_SLICE_AGE_MS = 5_000;
/** Settle and give the rest back when no frame came for this long. */
const IDLE_SETTLE_MS = 1_000;
/** A slice's holds lapse after this long should the process die before settling. */
const HOLD_TTL_MS = 15 * 60_000;

export interface BudgetSlice {
  /**
   * Before a call: makes sure `micros` more fit in what the slice holds, taking a new slice when not.
   * @throws KeyBudgetExceededError or OrgBudgetExceededError when the budget left cannot cover `micros`.
   */
  reserve(micros: number): Promise<void>;
  /**
   * After it (each `reserve` is followed by one `spend`, 0 for a call that failed): counts what it cost against the
   * slice (no write now) and queues its spend record (written behind, as every paid call's is).
   */
  spend(micros: number, model: string): void;
  /** Settles what was spent and gives the rest back. */
  flush(): Promise<void>;
}

export interface BudgetSlices {
  /** A slice for a keyed or organisation payer; null for guests (they have no budget but the daily cap). */
  open(payer: Payer, sliceMicros: number): BudgetSlice | null;
  /** Settles every open slice (the process closing). */
  flushAll(): Promise<void>;
}

interface HeldSlice {
  keyHold: { holdId: string; micros: number } | null;
  orgHold: { holdId: string; micros: number } | null;
  /** What the holds cover; Infinity when no budget applies. */
  micros: number;
  takenAt: number;
}

export function createBudgetSlices(
  policies: KeyPolicies,
  orgBudgets: OrgBudgets | null,
  now: () => number = Date.now,
): BudgetSlices {
  const open = new Set<BudgetSlice>();

  function sliceFor(orgId: string, keyId: string | null, sliceMicros: number): BudgetSlice {
    let held: HeldSlice | null = null;
    let spent = 0;
    let lastActiveAt = 0;
    /** Calls between their `reserve` and `spend`: the slice is not idle while one runs. */
    let inFlight = 0;
    let idleTimer: NodeJS.Timeout | null = null;
    // Renewals and settlements run one at a time (a frame's reserve and the idle timer's flush may meet).
    let lane: Promise<unknown> = Promise.resolve();
    const inLane = <T>(work: () => Promise<T>): Promise<T> => {
      const next = lane.then(work, work);
      lane = next.catch(() => undefined);
      return next;
    };

    async function settle(): Promise<void> {
      const current = held;
      const cost = spent;
      held = null;
      spent = 0;
      if (current?.keyHold && keyId) await policies.settleBudget(current.keyHold.holdId, keyId, cost);
      if (current?.orgHold && orgBudgets) await orgBudgets.settle(current.orgHold.holdId, orgId, cost);
    }

    async function take(micros: number): Promise<HeldSlice> {
      const range = { minMicros: micros, maxMicros: Math.max(micros, sliceMicros) };
      const keyHold = keyId ? await policies.holdBudgetUpTo(keyId, range, HOLD_TTL_MS) : null;
      let orgHold: HeldSlice['orgHold'] = null;
      try {
        if (orgBudgets) {
          orgHold = await orgBudgets.holdUpTo(
            orgId,
            { minMicros: micros, maxMicros: keyHold?.micros ?? range.maxMicros },
            HOLD_TTL_MS,
          );
        }
      } catch (error) {
        if (keyHold) await policies.releaseBudget(keyHold.holdId);
        throw error;
      }
      const covered = Math.min(keyHold?.micros ?? Infinity, orgHold?.micros ?? Infinity);
      return { keyHold, orgHold, micros: covered, takenAt: now() };
    }

    const idle = (): void => {
      idleTimer = null;
      if (inFlight > 0 || now() - lastActiveAt < IDLE_SETTLE_MS) return armIdle();
      slice.flush().catch(() => undefined);
    };
    function armIdle(): void {
      if (idleTimer) return;
      idleTimer = setTimeout(idle, IDLE_SETTLE_MS);
      idleTimer.unref();
    }

    const slice: BudgetSlice = {
      async reserve(micros) {
        const fits = (h: HeldSlice | null): boolean =>
          h !== null && spent + micros <= h.micros && now() - h.takenAt < MAX_SLICE_AGE_MS;
        if (!fits(held)) {
          await inLane(async () => {
            if (fits(held)) return;
            await settle();
            open.add(slice);
            held = await take(micros);
          });
        }
        inFlight += 1;
        lastActiveAt = now();
      },
      spend(micros, model) {
        inFlight = Math.max(0, inFlight - 1);
        lastActiveAt = now();
        if (micros > 0) {
          spent += micros;
          policies.recordSpend({ keyId, orgId, model, micros }).catch(() => undefined);
        }
        open.add(slice);
        armIdle();
      },
      async flush() {
        if (idleTimer) clearTimeout(idleTimer);
        idleTimer = null;
        open.delete(slice);
        await inLane(settle);
      },
    };
    return slice;
  }

  return {
    open(payer, sliceMicros) {
      if (payer.kind !== 'org') return null;
      return sliceFor(payer.orgId, payer.keyId ?? null, sliceMicros);
    },
    async flushAll() {
      await Promise.all([...open].map((slice) => slice.flush()));
    },
  };
}
