/**
 * The operator's API (/v1/admin, docs/admin.md): organisations, keys with an expiry, an allow-list of models and a
 * budget, credits, spend reports and the audit log.
 *
 * Keys are created, revoked and credited through the accounts service the CLI uses (no second implementation); what
 * this module adds is each key's policy (key-policies.ts), the reports, and an audit entry for every change, naming
 * the key that made it. Only a superuser key of the owner organisation may call it: a superuser of another
 * organisation administers nothing beyond its own data.
 */
import { randomUUID } from 'node:crypto';
import type { Principal, Tier } from '../../domain/account';
import { ConflictError, NotFoundError, PermissionDeniedError } from '../../domain/errors';
import type { AccountsService } from '../accounts.service';
import type { AccountStore } from '../../stores/types';
import { num, str, type AdminSql, type SqlRow } from '../../stores/types/admin-sql';
import type { BudgetPeriod, KeyPolicies, KeyPolicy } from './key-policies';
import type { OrgBudgets } from './org-budgets';

const MICROS = 1_000_000;
/** A timestamp column as ISO text (PostgreSQL's TIMESTAMPTZ columns come back as Dates). */
const iso = (v: unknown): string => (v instanceof Date ? v.toISOString() : new Date(String(v)).toISOString());
const usd = (micros: number | null): number | null => (micros === null ? null : micros / MICROS);

export type AuditAction =
  | 'org.create'
  | 'key.create'
  | 'key.update'
  | 'key.revoke'
  | 'key.rotate'
  | 'key.budget'
  | 'org.budget'
  | 'credits.add';
export type SpendGroup = 'key' | 'model' | 'day';

export interface AdminKeyView {
  id: string;
  prefix: string;
  name: string;
  org_id: string;
  org: string;
  tier: Tier;
  superuser: boolean;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  allowed_models: string[] | null;
  budget_usd: number | null;
  budget_period: BudgetPeriod;
  /** Spend counted against the budget in the current period. */
  budget_spent_usd: number;
  /** Every settled gateway call of the key, in all periods. */
  spend_usd: number;
}

export interface OrgView {
  id: string;
  name: string;
  tier: Tier;
  balance_usd: number;
  /** The organisation's own budget per period, beside its wallet; null: none. */
  budget_usd: number | null;
  budget_period: BudgetPeriod;
  budget_spent_usd: number;
  created_at: string;
}

export interface CreateKeyInput {
  org: string;
  tier?: Tier;
  name?: string;
  superuser?: boolean;
  expiresAt?: Date | null;
  allowedModels?: string[] | null;
  budgetUsd?: number | null;
  budgetPeriod?: BudgetPeriod;
}

export interface SpendRow {
  group: string;
  calls: number;
  cost_usd: number;
}

export interface AuditEntry {
  id: string;
  actor_key_id: string | null;
  action: AuditAction;
  target: string;
  details: Record<string, unknown>;
  created_at: string;
}

export interface AdminService {
  /** @throws PermissionDeniedError (403) unless the caller is a superuser key of the owner organisation. */
  requireAdmin(principal: Principal | undefined): Promise<string>;
  listOrgs(): Promise<OrgView[]>;
  /** Sets (null: removes) an organisation's budget. @throws NotFoundError for an unknown organisation. */
  setOrgBudget(
    actor: string,
    org: string,
    budget: { budgetUsd: number | null; period?: BudgetPeriod },
  ): Promise<OrgView>;
  createOrg(actor: string, input: { name: string; tier?: Tier }): Promise<{ id: string; name: string; tier: Tier }>;
  addCredits(actor: string, org: string, amountUsd: number): Promise<{ org_id: string; balance_usd: number }>;
  createKey(actor: string, input: CreateKeyInput): Promise<AdminKeyView & { key: string }>;
  listKeys(filter: { org?: string }): Promise<AdminKeyView[]>;
  getKey(keyId: string): Promise<AdminKeyView>;
  revokeKey(actor: string, keyId: string): Promise<AdminKeyView>;
  rotateKey(actor: string, keyId: string): Promise<AdminKeyView & { key: string; replaces: string }>;
  /** Changes a key's expiry and allow-list (null clears one). */
  updateKey(
    actor: string,
    keyId: string,
    update: { expiresAt?: Date | null; allowedModels?: string[] | null },
  ): Promise<AdminKeyView>;
  setBudget(
    actor: string,
    keyId: string,
    budget: { budgetUsd: number | null; period?: BudgetPeriod },
  ): Promise<AdminKeyView>;
  spend(query: { groupBy: SpendGroup; from?: Date; to?: Date }): Promise<{ rows: SpendRow[]; total_usd: number }>;
  audit(query: { limit: number }): Promise<AuditEntry[]>;
}

export interface AdminServiceDeps {
  sql: AdminSql;
  accounts: AccountsService;
  accountStore: AccountStore;
  policies: KeyPolicies;
  orgBudgets: OrgBudgets;
  now?: () => Date;
}

const KEY_VIEW_SQL = `SELECT k.id, k.prefix, k.name, k.org_id, o.name AS org, o.tier, u.is_superuser, k.created_at,
    k.revoked_at, p.expires_at, p.allowed_models, p.budget_micros, p.budget_period, p.spent_micros,
    (SELECT COALESCE(SUM(s.micros), 0) FROM key_spend s WHERE s.key_id = k.id) AS spend_micros
  FROM api_keys k JOIN organisations o ON o.id = k.org_id JOIN users u ON u.id = k.user_id
  LEFT JOIN api_key_policies p ON p.key_id = k.id`;

const toKeyView = (r: SqlRow): AdminKeyView => ({
  id: String(r.id),
  prefix: String(r.prefix),
  name: String(r.name),
  org_id: String(r.org_id),
  org: String(r.org),
  tier: r.tier as Tier,
  superuser: Number(r.is_superuser) === 1 || r.is_superuser === true,
  created_at: iso(r.created_at),
  expires_at: r.expires_at ? iso(r.expires_at) : null,
  revoked_at: r.revoked_at ? iso(r.revoked_at) : null,
  allowed_models: r.allowed_models ? (JSON.parse(str(r.allowed_models)) as string[]) : null,
  budget_usd: usd(num(r.budget_micros)),
  budget_period: (r.budget_period as BudgetPeriod | null) ?? 'none',
  budget_spent_usd: (num(r.spent_micros) ?? 0) / MICROS,
  spend_usd: (num(r.spend_micros) ?? 0) / MICROS,
});

export function createAdminService(deps: AdminServiceDeps): AdminService {
  const owner: OwnerOrg = { id: null };
  return {
    requireAdmin: (principal) => requireAdmin(deps, owner, principal),
    listOrgs: () => listOrgs(deps),
    setOrgBudget: (actor, org, budget) => setOrgBudget(deps, actor, org, budget),
    createOrg: (actor, input) => createOrg(deps, actor, input),
    addCredits: (actor, org, amountUsd) => addCredits(deps, actor, org, amountUsd),
    createKey: (actor, input) => createKey(deps, actor, input),
    listKeys: (filter) => listKeys(deps, filter),
    getKey: (keyId) => getKey(deps, keyId),
    revokeKey: (actor, keyId) => revokeKey(deps, actor, keyId),
    rotateKey: (actor, keyId) => rotateKey(deps, actor, keyId),
    updateKey: (actor, keyId, update) => updateKey(deps, actor, keyId, update),
    setBudget: (actor, keyId, budget) => setKeyBudget(deps, actor, keyId, budget),
    spend: (query) => spendReport(deps, query),
    audit: (query) => auditLog(deps, query),
  };
}

/** The owner organisation's id, read once (it never changes while the process runs). */
export interface OwnerOrg {
  id: string | null;
}

async function recordAudit(
  deps: AdminServiceDeps,
  actor: string,
  action: AuditAction,
  target: string,
  details: object,
): Promise<void> {
  const at = (deps.now?.() ?? new Date()).toISOString();
  await deps.sql.run(
    'INSERT INTO admin_audit (id, actor_key_id, action, target, details, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    [randomUUID(), actor, action, target, JSON.stringify(details), at],
  );
}

export async function getKey(deps: AdminServiceDeps, keyId: string): Promise<AdminKeyView> {
  await deps.policies.flushSpend();
  const [row] = await deps.sql.all(`${KEY_VIEW_SQL} WHERE k.id = ?`, [keyId]);
  if (!row) throw new NotFoundError('api_key', keyId);
  return toKeyView(row);
}

async function orgView(
  deps: AdminServiceDeps,
  id: string,
  name: string,
  tier: Tier,
  createdAt: unknown,
): Promise<OrgView> {
  const budget = await deps.orgBudgets.get(id);
  return {
    id,
    name,
    tier,
    // Through the wallet store: on SQLite its debits may still be queued for the file.
    balance_usd: (await deps.accounts.balance(id)).balanceUsd,
    budget_usd: budget ? budget.budgetMicros / MICROS : null,
    budget_period: budget?.budgetPeriod ?? 'none',
    budget_spent_usd: budget ? budget.spentMicros / MICROS : 0,
    created_at: iso(createdAt),
  };
}

const policyOf = (input: CreateKeyInput): Parameters<KeyPolicies['set']>[1] => ({
  ...(input.expiresAt !== undefined ? { expiresAt: input.expiresAt } : {}),
  ...(input.allowedModels !== undefined ? { allowedModels: input.allowedModels } : {}),
  ...(input.budgetUsd !== undefined
    ? { budgetMicros: input.budgetUsd === null ? null : Math.round(input.budgetUsd * MICROS) }
    : {}),
  ...(input.budgetPeriod !== undefined ? { budgetPeriod: input.budgetPeriod } : {}),
});

const hasPolicy = (input: CreateKeyInput): boolean => Object.keys(policyOf(input)).length > 0;

/** @throws PermissionDeniedError (403) unless the caller is a superuser key of the owner organisation. */
export async function requireAdmin(
  deps: AdminServiceDeps,
  owner: OwnerOrg,
  principal: Principal | undefined,
): Promise<string> {
  if (principal?.kind === 'user' && principal.isSuperuser && principal.keyId) {
    owner.id ??= (await deps.accounts.ownerPrincipal())?.orgId ?? null;
    if (principal.orgId === owner.id) return principal.keyId;
  }
  throw new PermissionDeniedError('The admin API needs a superuser key of the owner organisation');
}

export async function listOrgs(deps: AdminServiceDeps): Promise<OrgView[]> {
  const rows = await deps.sql.all(
    "SELECT id, name, tier, created_at FROM organisations WHERE kind = 'standard' ORDER BY created_at, name",
  );
  return Promise.all(rows.map((r) => orgView(deps, str(r.id), str(r.name), r.tier as Tier, r.created_at)));
}

/** Sets (null: removes) an organisation's budget. @throws NotFoundError for an unknown organisation. */
export async function setOrgBudget(
  deps: AdminServiceDeps,
  actor: string,
  orgRef: string,
  { budgetUsd, period }: { budgetUsd: number | null; period?: BudgetPeriod },
): Promise<OrgView> {
  const org = await deps.accountStore.findOrg(orgRef);
  if (!org) throw new NotFoundError('organisation', orgRef);
  await deps.orgBudgets.set(org.id, budgetUsd === null ? null : Math.round(budgetUsd * MICROS), period);
  const view = await orgView(deps, org.id, org.name, org.tier, org.createdAt);
  await recordAudit(deps, actor, 'org.budget', org.id, {
    budget_usd: view.budget_usd,
    budget_period: view.budget_period,
  });
  return view;
}

export async function createOrg(
  deps: AdminServiceDeps,
  actor: string,
  { name, tier }: { name: string; tier?: Tier },
): Promise<{ id: string; name: string; tier: Tier }> {
  if (await deps.accountStore.findOrg(name)) {
    throw new ConflictError(`organisation '${name}' exists`, 'organisation_exists');
  }
  const org = await deps.accountStore.createOrg({ name, tier: tier ?? 'free', kind: 'standard' });
  await recordAudit(deps, actor, 'org.create', org.id, { name, tier: org.tier });
  return { id: org.id, name: org.name, tier: org.tier };
}

export async function addCredits(
  deps: AdminServiceDeps,
  actor: string,
  org: string,
  amountUsd: number,
): Promise<{ org_id: string; balance_usd: number }> {
  const result = await deps.accounts.addCredits(org, amountUsd);
  await recordAudit(deps, actor, 'credits.add', result.orgId, { amount_usd: amountUsd });
  return { org_id: result.orgId, balance_usd: result.balanceUsd };
}

export async function createKey(
  deps: AdminServiceDeps,
  actor: string,
  input: CreateKeyInput,
): Promise<AdminKeyView & { key: string }> {
  const created = await deps.accounts.createKey({
    org: input.org,
    ...(input.tier ? { tier: input.tier } : {}),
    ...(input.name ? { name: input.name } : {}),
    superuser: input.superuser ?? false,
  });
  if (hasPolicy(input)) await deps.policies.set(created.keyId, policyOf(input));
  const view = await getKey(deps, created.keyId);
  await recordAudit(deps, actor, 'key.create', created.keyId, {
    org: created.orgName,
    tier: created.tier,
    expires_at: view.expires_at,
    allowed_models: view.allowed_models,
    budget_usd: view.budget_usd,
    budget_period: view.budget_period,
  });
  return { ...view, key: created.key };
}

export async function listKeys(deps: AdminServiceDeps, { org }: { org?: string }): Promise<AdminKeyView[]> {
  const { sql } = deps;
  await deps.policies.flushSpend();
  if (org === undefined) return (await sql.all(`${KEY_VIEW_SQL} ORDER BY k.created_at, k.id`)).map(toKeyView);
  const found = await deps.accountStore.findOrg(org);
  if (!found) throw new NotFoundError('organisation', org);
  return (await sql.all(`${KEY_VIEW_SQL} WHERE k.org_id = ? ORDER BY k.created_at, k.id`, [found.id])).map(toKeyView);
}

export async function revokeKey(deps: AdminServiceDeps, actor: string, keyId: string): Promise<AdminKeyView> {
  await deps.accounts.revokeKey(keyId);
  await recordAudit(deps, actor, 'key.revoke', keyId, {});
  return getKey(deps, keyId);
}

export async function rotateKey(
  deps: AdminServiceDeps,
  actor: string,
  keyId: string,
): Promise<AdminKeyView & { key: string; replaces: string }> {
  const { accounts, policies } = deps;
  const old = await getKey(deps, keyId);
  if (old.revoked_at) throw new ConflictError(`key '${keyId}' is revoked`, 'api_key_revoked');
  const policy: KeyPolicy | null = await policies.get(keyId);
  const created = await accounts.createKey({ org: old.org_id, name: old.name, superuser: old.superuser });
  if (policy) {
    await policies.set(created.keyId, {
      expiresAt: policy.expiresAt,
      allowedModels: policy.allowedModels,
      budgetMicros: policy.budgetMicros,
      budgetPeriod: policy.budgetPeriod,
    });
  }
  await accounts.revokeKey(keyId);
  await recordAudit(deps, actor, 'key.rotate', keyId, { new_key_id: created.keyId });
  return { ...(await getKey(deps, created.keyId)), key: created.key, replaces: keyId };
}

/** Changes a key's expiry and allow-list (null clears one). */
export async function updateKey(
  deps: AdminServiceDeps,
  actor: string,
  keyId: string,
  update: { expiresAt?: Date | null; allowedModels?: string[] | null },
): Promise<AdminKeyView> {
  return changePolicy(deps, actor, keyId, 'key.update', update, (view) => ({
    expires_at: view.expires_at,
    allowed_models: view.allowed_models,
  }));
}

export async function setKeyBudget(
  deps: AdminServiceDeps,
  actor: string,
  keyId: string,
  { budgetUsd, period }: { budgetUsd: number | null; period?: BudgetPeriod },
): Promise<AdminKeyView> {
  const policy = {
    budgetMicros: budgetUsd === null ? null : Math.round(budgetUsd * MICROS),
    ...(period ? { budgetPeriod: period } : {}),
  };
  return changePolicy(deps, actor, keyId, 'key.budget', policy, (view) => ({
    budget_usd: view.budget_usd,
    budget_period: view.budget_period,
  }));
}

/** Sets part of an existing key's policy and records the change, with the details read back from the key. */
async function changePolicy(
  deps: AdminServiceDeps,
  actor: string,
  keyId: string,
  action: AuditAction,
  policy: Parameters<KeyPolicies['set']>[1],
  details: (view: AdminKeyView) => object,
): Promise<AdminKeyView> {
  await getKey(deps, keyId);
  await deps.policies.set(keyId, policy);
  const view = await getKey(deps, keyId);
  await recordAudit(deps, actor, action, keyId, details(view));
  return view;
}

export async function spendReport(
  deps: AdminServiceDeps,
  { groupBy, from, to }: { groupBy: SpendGroup; from?: Date; to?: Date },
): Promise<{ rows: SpendRow[]; total_usd: number }> {
  await deps.policies.flushSpend();
  const group =
    groupBy === 'key' ? "COALESCE(key_id, '')" : groupBy === 'model' ? 'model' : 'SUBSTR(created_at, 1, 10)';
  const where: string[] = [];
  const params: unknown[] = [];
  if (from) {
    where.push('created_at >= ?');
    params.push(from.toISOString());
  }
  if (to) {
    where.push('created_at < ?');
    params.push(to.toISOString());
  }
  const rows = await deps.sql.all(
    `SELECT ${group} AS grp, SUM(calls) AS calls, SUM(micros) AS micros FROM key_spend
       ${where.length ? `WHERE ${where.join(' AND ')}` : ''} GROUP BY ${group} ORDER BY ${group}`,
    params,
  );
  const totalMicros = rows.reduce((sum, r) => sum + (num(r.micros) ?? 0), 0);
  return {
    rows: rows.map((r) => ({
      group: String(r.grp),
      calls: num(r.calls) ?? 0,
      cost_usd: (num(r.micros) ?? 0) / MICROS,
    })),
    total_usd: totalMicros / MICROS,
  };
}

export async function auditLog(deps: AdminServiceDeps, { limit }: { limit: number }): Promise<AuditEntry[]> {
  const rows = await deps.sql.all('SELECT * FROM admin_audit ORDER BY created_at DESC, id DESC LIMIT ?', [limit]);
  return rows.map((r) => ({
    id: String(r.id),
    actor_key_id: r.actor_key_id ? str(r.actor_key_id) : null,
    action: r.action as AuditAction,
    target: String(r.target),
    details: JSON.parse(String(r.details)) as Record<string, unknown>,
    created_at: String(r.created_at),
  }));
}
