/**
 * A biller with each keyed call also held against its key's budget and its settled cost recorded for spend
 * reports. The composition root wraps every paid call's biller in it once: the gateway's chat completions and
 * transcriptions, agent executions and priced extraction (docs/admin.md lists what it covers).
 *
 * The key's hold is taken first (402 `key_budget_exceeded` when it does not fit), then the organisation's budget's
 * (402 `org_budget_exceeded`), then the wallet's (402 `insufficient_credits`); all before any upstream call.
 * Settling debits the wallet, counts the same cost against both budgets and records it (key, model, day); a failed
 * call gives every hold back. Payers without a key
 * (guests, work done on an organisation's behalf) pass straight through.
 */
import type { Biller, ChargeInput, ChargeResult, Payer } from '../../metering/billing';
import type { KeyPolicies } from './key-policies';
import type { OrgBudgets } from './org-budgets';

/** The model named in a ledger reason (`chat.completions MODEL REQUEST_ID`), or `unknown`. */
export function modelOfReason(reason: string): string {
  return reason.split(' ')[1] ?? 'unknown';
}

export function withKeyBudgets(
  biller: Biller,
  policies: KeyPolicies,
  orgBudgets: OrgBudgets | null = null,
  holdTtlMs = 15 * 60_000,
): Biller {
  const keyOf = (payer: Payer): { keyId: string; orgId: string } | null =>
    payer.kind === 'org' && payer.keyId ? { keyId: payer.keyId, orgId: payer.orgId } : null;

  const record = async (payer: Payer, input: ChargeInput, result: ChargeResult): Promise<void> => {
    if (payer.kind !== 'org' || result.costMicros <= 0) return;
    await policies.recordSpend({
      keyId: payer.keyId ?? null,
      orgId: payer.orgId,
      model: modelOfReason(input.reason),
      micros: result.costMicros,
    });
  };

  return {
    authorize: (payer) => biller.authorize(payer),
    price: (input) => biller.price(input),
    async charge(payer, input) {
      const result = await biller.charge(payer, input);
      await record(payer, input, result);
      return result;
    },
    async reserve(payer, maxMicros) {
      const keyed = keyOf(payer);
      const micros = Math.ceil(maxMicros);
      const budgetHold = keyed ? await policies.holdBudget(keyed.keyId, micros, holdTtlMs) : null;
      let orgHold: string | null = null;
      let hold;
      try {
        if (orgBudgets && payer.kind === 'org') orgHold = await orgBudgets.hold(payer.orgId, micros, holdTtlMs);
        hold = await biller.reserve(payer, maxMicros);
      } catch (error) {
        if (budgetHold) await policies.releaseBudget(budgetHold);
        if (orgHold && orgBudgets) await orgBudgets.release(orgHold);
        throw error;
      }
      return {
        micros: hold.micros,
        release() {
          hold.release();
          if (budgetHold) policies.releaseBudget(budgetHold).catch(() => undefined);
          if (orgHold && orgBudgets) orgBudgets.release(orgHold).catch(() => undefined);
        },
        async settle(input) {
          const result = await hold.settle(input);
          if (keyed && budgetHold) await policies.settleBudget(budgetHold, keyed.keyId, result.costMicros);
          if (orgHold && orgBudgets && payer.kind === 'org') {
            await orgBudgets.settle(orgHold, payer.orgId, result.costMicros);
          }
          await record(payer, input, result);
          return result;
        },
      };
    },
  };
}
