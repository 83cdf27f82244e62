import { createBiller, priceCall, type Payer } from '../../../src/metering/billing';
import { createGuestSpendGuard } from '../../../src/metering/guest-spend';
import { createMemoryGuestSpendStore, createMemoryHoldStore } from '../../../src/backend/local/metering-stores';
import type { WalletStore } from '../../../src/stores/types';

/**
 * A wallet fake with the store's contract: credit adds (or removes) and returns the new balance; a hold is taken
 * only when the balance less live holds covers it, and lapses after its ttl.
 */
function fakeWallets(initial: Record<string, number> = {}): WalletStore & { ledger: [string, number, string][] } {
  const balances = new Map(Object.entries(initial));
  const ledger: [string, number, string][] = [];
  const holds = new Map<string, { orgId: string; micros: number }>();
  let nextHold = 0;
  const held = (orgId: string): number =>
    [...holds.values()].filter((h) => h.orgId === orgId).reduce((sum, h) => sum + h.micros, 0);
  const credit = async (orgId: string, amount: number, reason: string): Promise<number> => {
    const next = (balances.get(orgId) ?? 0) + amount;
    balances.set(orgId, next);
    ledger.push([orgId, amount, reason]);
    return next;
  };
  return {
    ledger,
    credit,
    async balance(orgId) {
      return balances.get(orgId) ?? 0;
    },
    async hold(orgId, micros, ttlMs) {
      if ((balances.get(orgId) ?? 0) - held(orgId) < micros) return null;
      const id = `hold-${(nextHold += 1)}`;
      holds.set(id, { orgId, micros });
      setTimeout(() => holds.delete(id), ttlMs).unref();
      return id;
    },
    async settle(holdId, orgId, cost, reason) {
      const balance = await credit(orgId, -cost, reason);
      holds.delete(holdId);
      return balance;
    },
    async release(holdId) {
      holds.delete(holdId);
    },
    async held(orgId) {
      return held(orgId);
    },
  };
}

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 1, 12);

describe('priceCall', () => {
  it('bills tokens at USD per 1M, rounding up to whole micro-dollars', () => {
    // 12,345 × $2.50/M + 678 × $10/M = 30,862.5 + 6,780 µ$ → 37,643 µ$
    const cost = priceCall({ prompt: 2.5, completion: 10 }, { promptTokens: 12_345, completionTokens: 678 });
    expect(cost).toMatchObject({ standardMicros: 37_643, costMicros: 37_643, priced: true, minimumApplied: false });
  });

  it('is exact where floating point is not (0.15 × 1000 tokens = 150 µ$, not 151)', () => {
    expect(
      priceCall({ prompt: 0.15, completion: 0 }, { promptTokens: 1000, completionTokens: 0 }, { minimumMicros: 0 })
        .costMicros,
    ).toBe(150);
  });

  it('bills at least $0.001 per call, free models included', () => {
    expect(priceCall({ prompt: 0, completion: 0 }, { promptTokens: 500, completionTokens: 50 })).toMatchObject({
      standardMicros: 0,
      costMicros: 1000,
      minimumApplied: true,
    });
  });

  it('bills the minimum and flags an unknown price instead of billing nothing', () => {
    expect(priceCall({ prompt: null, completion: 1 }, { promptTokens: 10, completionTokens: 10 })).toMatchObject({
      costMicros: 1000,
      priced: false,
    });
    expect(priceCall({ prompt: null, completion: 1 }, { promptTokens: 0, completionTokens: 10 }).priced).toBe(true);
  });

  it('applies a service-tier multiplier after the standard cost', () => {
    const flex = priceCall(
      { prompt: 10, completion: 10 },
      { promptTokens: 100_000, completionTokens: 0 },
      { multiplier: 0.5 },
    );
    expect(flex).toMatchObject({ standardMicros: 1_000_000, costMicros: 500_000, multiplier: 0.5 });
  });

  it('scales the standard cost as reported, so cost = standard × multiplier to the micro-dollar (rounded up)', () => {
    // 2,500 tokens at $0.001/M: 2.5 micro-dollars, 3 once rounded up; the tiers scale the 3.
    const usage = { promptTokens: 2500, completionTokens: 0 };
    const at = (multiplier: number) =>
      priceCall({ prompt: 0.001, completion: 0.001 }, usage, { multiplier, minimumMicros: 0 });
    expect(at(1)).toMatchObject({ standardMicros: 3, costMicros: 3, minimumApplied: false });
    expect(at(0.5)).toMatchObject({ standardMicros: 3, costMicros: 2 });
    expect(at(1.8)).toMatchObject({ standardMicros: 3, costMicros: 6 });
  });
});

describe('priceCall: audio seconds', () => {
  it('bills whole audio seconds at the per-minute price, exactly', () => {
    // $0.006 a minute is $0.0001 a second: 600 s cost $0.06, 7 s cost 700 µ$ (raised to the $0.001 minimum).
    const pricing = { prompt: null, completion: null, perMinute: 0.006 };
    expect(priceCall(pricing, { promptTokens: 0, completionTokens: 0, audioSeconds: 600 })).toMatchObject({
      costMicros: 60_000,
      priced: true,
      minimumApplied: false,
    });
    expect(priceCall(pricing, { promptTokens: 0, completionTokens: 0, audioSeconds: 7 })).toMatchObject({
      standardMicros: 700,
      costMicros: 1000,
      minimumApplied: true,
    });
    // A price that is not a whole number of micro-dollars a second rounds the total up, not each second.
    const odd = { prompt: null, completion: null, perMinute: 0.01 };
    expect(priceCall(odd, { promptTokens: 0, completionTokens: 0, audioSeconds: 61 }).standardMicros).toBe(10_167);
  });

  it('flags audio with no per-minute price as not priced', () => {
    const cost = priceCall({ prompt: 1, completion: 1 }, { promptTokens: 0, completionTokens: 0, audioSeconds: 5 });
    expect(cost).toMatchObject({ priced: false, costMicros: 1000 });
  });
});

describe('biller', () => {
  const org: Payer = { kind: 'org', orgId: 'org_1' };
  const guestSpend = () => createGuestSpendGuard(createMemoryGuestSpendStore(), { holds: createMemoryHoldStore() });

  it('debits the wallet once per call with the cost and reason, returning the new balance', async () => {
    const wallets = fakeWallets({ org_1: 50_000 });
    const biller = createBiller({ wallets, guestSpend: guestSpend() });
    await biller.authorize(org);
    const result = await biller.charge(org, {
      pricing: { prompt: 1, completion: 2 },
      usage: { promptTokens: 3000, completionTokens: 1000 },
      reason: 'chat prism-1',
    });
    expect(result).toMatchObject({ costMicros: 5000, balanceMicros: 45_000 });
    expect(wallets.ledger).toEqual([['org_1', -5000, 'chat prism-1']]);
  });

  it('debits no more than a cap when one is given (an agent run pays at most what it held), the exact cost below it', async () => {
    const wallets = fakeWallets({ org_1: 50_000 });
    const biller = createBiller({ wallets, guestSpend: guestSpend() });
    const input = { pricing: { prompt: 1, completion: 2 }, usage: { promptTokens: 3000, completionTokens: 1000 } };
    const capped = await biller.charge(org, { ...input, reason: 'run 1', capMicros: 4000 });
    // A capped charge's standard cost is the cap before the multiplier: cost = standard × multiplier still holds.
    expect(capped).toMatchObject({ standardMicros: 4000, costMicros: 4000, balanceMicros: 46_000 });
    const under = await biller.charge(org, { ...input, reason: 'run 2', capMicros: 9000 });
    expect(under).toMatchObject({ costMicros: 5000, balanceMicros: 41_000 });
    expect(wallets.ledger).toEqual([
      ['org_1', -4000, 'run 1'],
      ['org_1', -5000, 'run 2'],
    ]);
  });

  it('takes a charge’s own minimum over the biller’s (agent executions have none) and keeps the rule when capped', async () => {
    const wallets = fakeWallets({ org_1: 50_000 });
    const biller = createBiller({ wallets, guestSpend: guestSpend() });
    const pricing = { prompt: 1, completion: 1 };
    const free = await biller.charge(org, {
      pricing,
      usage: { promptTokens: 0, completionTokens: 0 },
      reason: 'run 0',
      minimumMicros: 0,
    });
    expect(free).toMatchObject({ standardMicros: 0, costMicros: 0, minimumApplied: false });
    const small = await biller.charge(org, {
      pricing,
      usage: { promptTokens: 200, completionTokens: 0 },
      multiplier: 0.5,
      reason: 'run 1',
      minimumMicros: 0,
    });
    expect(small).toMatchObject({ standardMicros: 200, costMicros: 100 });
    const capped = await biller.charge(org, {
      pricing,
      usage: { promptTokens: 10_000, completionTokens: 0 },
      multiplier: 0.5,
      reason: 'run 2',
      minimumMicros: 0,
      capMicros: 1000,
    });
    expect(capped).toMatchObject({ standardMicros: 2000, costMicros: 1000 });
    expect(wallets.ledger.map(([, micros]) => micros)).toEqual([-0, -100, -1000]);
  });

  it('refuses with 402 insufficient_credits before any work when the wallet cannot pay the minimum', async () => {
    const biller = createBiller({ wallets: fakeWallets({ org_1: 999 }), guestSpend: guestSpend() });
    await expect(biller.authorize(org)).rejects.toMatchObject({ status: 402, code: 'insufficient_credits' });
    await expect(biller.authorize({ kind: 'org', orgId: 'empty' })).rejects.toMatchObject({ status: 402 });
  });

  it('counts guests against the daily cap per IP and per fingerprint, never touching a wallet', async () => {
    let now = T0;
    const wallets = fakeWallets();
    const biller = createBiller({ wallets, guestSpend: guestSpend(), now: () => now });
    const guest: Payer = { kind: 'guest', clientIp: '203.0.113.7', fingerprint: 'fp-a' };
    const big = {
      pricing: { prompt: 250, completion: 0 },
      usage: { promptTokens: 1000, completionTokens: 0 },
      reason: 'r',
    };

    await biller.authorize(guest);
    expect(await biller.charge(guest, big)).toMatchObject({ costMicros: 250_000, balanceMicros: null });
    await biller.authorize(guest);
    await biller.charge(guest, big);
    expect(wallets.ledger).toEqual([]);
    await expect(biller.authorize(guest)).rejects.toMatchObject({ status: 402, code: 'guest_spend_cap' });
    // Same browser from another address, and another browser behind the same address: both blocked.
    await expect(
      biller.authorize({ kind: 'guest', clientIp: '198.51.100.1', fingerprint: 'fp-a' }),
    ).rejects.toMatchObject({ status: 402 });
    await expect(
      biller.authorize({ kind: 'guest', clientIp: '203.0.113.7', fingerprint: 'fp-b' }),
    ).rejects.toMatchObject({ status: 402 });
    await expect(
      biller.authorize({ kind: 'guest', clientIp: '198.51.100.1', fingerprint: null }),
    ).resolves.toBeUndefined();
    now += DAY;
    await expect(biller.authorize(guest)).resolves.toBeUndefined();
  });
});

describe('holds', () => {
  const org: Payer = { kind: 'org', orgId: 'org_1' };

  it("lets billers on one wallet store see each other's holds (two replicas on one database), and frees them on settle", async () => {
    const wallets = fakeWallets({ org_1: 10_000 });
    const guestSpend = createGuestSpendGuard(createMemoryGuestSpendStore(), { holds: createMemoryHoldStore() });
    const a = createBiller({ wallets, guestSpend });
    const b = createBiller({ wallets, guestSpend });
    const first = await a.reserve(org, 6000);
    expect(await wallets.held('org_1')).toBe(6000);
    await expect(b.reserve(org, 6000)).rejects.toMatchObject({ status: 402, code: 'insufficient_credits' });
    await first.settle({
      pricing: { prompt: 1, completion: 0 },
      usage: { promptTokens: 2000, completionTokens: 0 },
      reason: 'r',
    });
    expect(await wallets.held('org_1')).toBe(0);
    const second = await b.reserve(org, 6000);
    expect(await wallets.held('org_1')).toBe(6000);
    second.release();
    await Promise.resolve();
    expect(await wallets.held('org_1')).toBe(0);
  });

  it('holds guest spend per counter key in the store it is given', async () => {
    const holds = createMemoryHoldStore();
    const guard = createGuestSpendGuard(createMemoryGuestSpendStore(), { capMicros: 10_000, holds });
    const guest = { clientIp: '203.0.113.7', fingerprint: 'fp-a' };
    await guard.hold(guest, 7000, T0);
    expect(await holds.held(['ip:203.0.113.7', 'fp:fp-a'])).toEqual([7000, 7000]);
    await expect(guard.hold({ clientIp: '198.51.100.1', fingerprint: 'fp-a' }, 7000, T0)).rejects.toMatchObject({
      code: 'guest_spend_cap',
    });
    guard.release(guest, 7000);
    expect(holds.size()).toBe(0);
  });
});

describe('memory guest spend store', () => {
  it('forgets the previous day at the first call of a new UTC day', async () => {
    const store = createMemoryGuestSpendStore();
    await store.add(['ip:a', 'ip:b'], 10, T0);
    expect(await store.spent(['ip:a', 'ip:c'], T0 + 1000)).toEqual([10, 0]);
    expect(store.size()).toBe(2);
    expect(await store.spent(['ip:a'], Date.UTC(2026, 0, 2))).toEqual([0]);
    expect(store.size()).toBe(0);
  });
});
