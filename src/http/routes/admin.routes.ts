/**
 * The operator's API (`/v1/admin`, docs/admin.md): organisations and credits, keys (create with an expiry, an
 * allow-list of models and a budget; list; revoke; rotate; budget), spend reports (JSON or CSV) and the audit log.
 * Every route first checks the caller is a superuser key of the owner organisation (401 without a key, 403 with
 * another); each handler parses, calls the admin service, sends. No answer but a create or rotate carries a secret.
 */
import { Router, type Request } from 'express';
import { z } from 'zod';
import { TIERS } from '../../domain/account';
import { AuthenticationRequiredError } from '../../domain/errors';
import type { AdminService, SpendRow } from '../../services/admin/admin.service';
import { BUDGET_PERIODS } from '../../services/admin/key-policies';
import { declare, route } from '../api/route-declaration';

const money = z.number().finite().nonnegative();

export const adminCreateOrgBodySchema = z.object({ name: z.string().min(1).max(200), tier: z.enum(TIERS).optional() });
export const adminCreditsBodySchema = z.object({ amount_usd: z.number().finite().positive() });
export const adminCreateKeyBodySchema = z.object({
  org: z.string().min(1).max(200),
  tier: z.enum(TIERS).optional(),
  name: z.string().min(1).max(200).optional(),
  superuser: z.boolean().optional(),
  expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
  allowed_models: z.array(z.string().min(1)).max(1000).nullable().optional(),
  budget_usd: money.nullable().optional(),
  budget_period: z.enum(BUDGET_PERIODS).optional(),
});
export const adminUpdateKeyBodySchema = z.object({
  expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
  allowed_models: z.array(z.string().min(1)).max(1000).nullable().optional(),
});
export const adminBudgetBodySchema = z.object({
  budget_usd: money.nullable(),
  budget_period: z.enum(BUDGET_PERIODS).optional(),
});
export const adminKeysQuerySchema = z.object({ org: z.string().min(1).optional() });
export const adminSpendQuerySchema = z.object({
  group_by: z.enum(['key', 'model', 'day']).default('key'),
  from: z.iso.datetime({ offset: true }).or(z.iso.date()).optional(),
  to: z.iso.datetime({ offset: true }).or(z.iso.date()).optional(),
  format: z.enum(['json', 'csv']).optional(),
});
export const adminAuditQuerySchema = z.object({ limit: z.coerce.number().int().min(1).max(1000).default(100) });
export const adminKeyIdParamsSchema = z.object({ id: z.string().min(1) });
export const adminOrgParamsSchema = z.object({ org: z.string().min(1) });

/** RFC 4180 CSV of a spend report: a header, one line per group, fields quoted when they need it. */
export function spendCsv(groupBy: string, rows: SpendRow[]): string {
  const field = (v: string | number): string => {
    const text = String(v);
    return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  const lines = [[groupBy, 'calls', 'cost_usd'], ...rows.map((r) => [r.group, r.calls, r.cost_usd.toFixed(6)])];
  return `${lines.map((line) => line.map(field).join(',')).join('\r\n')}\r\n`;
}

const tag = 'Admin';
const budgetPeriod = z.enum([...BUDGET_PERIODS, 'none']);
const adminKeySchema = z.looseObject({
  id: z.string(),
  prefix: z.string(),
  name: z.string(),
  org_id: z.string(),
  org: z.string(),
  tier: z.enum(TIERS),
  superuser: z.boolean(),
  created_at: z.string(),
  expires_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  allowed_models: z.array(z.string()).nullable(),
  budget_usd: z.number().nullable(),
  budget_period: budgetPeriod,
  budget_spent_usd: z.number(),
  spend_usd: z.number(),
});
const newKeySchema = adminKeySchema.extend({ key: z.string().describe('The secret: shown once') });
const orgSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  tier: z.enum(TIERS),
  balance_usd: z.number(),
  budget_usd: z.number().nullable(),
  budget_period: budgetPeriod,
  budget_spent_usd: z.number(),
  created_at: z.string(),
});
const list = <T extends z.ZodType>(item: T) => z.looseObject({ object: z.literal('list'), data: z.array(item) });
const ADMIN_ERRORS = [403, 404] as const;

export const ADMIN_ROUTES = {
  orgs: declare({
    method: 'get',
    path: '/organisations',
    tag,
    summary: 'List organisations and their balances',
    auth: 'key',
    responses: { 200: { description: 'Organisations', schema: list(orgSchema) } },
    errors: ADMIN_ERRORS,
  }),
  createOrg: declare({
    method: 'post',
    path: '/organisations',
    tag,
    summary: 'Create an organisation',
    auth: 'key',
    body: adminCreateOrgBodySchema,
    responses: { 201: { description: 'The organisation', schema: orgSchema } },
    errors: [403, 409],
  }),
  credits: declare({
    method: 'post',
    path: '/organisations/:org/credits',
    tag,
    summary: "Add to an organisation's credits",
    auth: 'key',
    params: adminOrgParamsSchema,
    body: adminCreditsBodySchema,
    responses: { 200: { description: 'The organisation', schema: orgSchema } },
    errors: ADMIN_ERRORS,
  }),
  orgBudget: declare({
    method: 'put',
    path: '/organisations/:org/budget',
    tag,
    summary: "Set or clear an organisation's budget",
    auth: 'key',
    params: adminOrgParamsSchema,
    body: adminBudgetBodySchema,
    responses: { 200: { description: 'The organisation', schema: orgSchema } },
    errors: ADMIN_ERRORS,
  }),
  keys: declare({
    method: 'get',
    path: '/keys',
    tag,
    summary: 'List keys (never their secrets)',
    auth: 'key',
    query: adminKeysQuerySchema,
    responses: { 200: { description: 'Keys', schema: list(adminKeySchema) } },
    errors: ADMIN_ERRORS,
  }),
  createKey: declare({
    method: 'post',
    path: '/keys',
    tag,
    summary: 'Create a key (tier, expiry, allowed models, budget); the answer carries its secret, once',
    auth: 'key',
    body: adminCreateKeyBodySchema,
    responses: { 201: { description: 'The key and its secret', schema: newKeySchema } },
    errors: ADMIN_ERRORS,
  }),
  key: declare({
    method: 'get',
    path: '/keys/:id',
    tag,
    summary: 'One key',
    auth: 'key',
    params: adminKeyIdParamsSchema,
    responses: { 200: { description: 'The key', schema: adminKeySchema } },
    errors: ADMIN_ERRORS,
  }),
  updateKey: declare({
    method: 'patch',
    path: '/keys/:id',
    tag,
    summary: "Change a key's expiry or allow-list",
    auth: 'key',
    params: adminKeyIdParamsSchema,
    body: adminUpdateKeyBodySchema,
    responses: { 200: { description: 'The key', schema: adminKeySchema } },
    errors: ADMIN_ERRORS,
  }),
  revoke: declare({
    method: 'post',
    path: '/keys/:id/revoke',
    tag,
    summary: 'Revoke a key',
    auth: 'key',
    params: adminKeyIdParamsSchema,
    responses: { 200: { description: 'The revoked key', schema: adminKeySchema } },
    errors: ADMIN_ERRORS,
  }),
  rotate: declare({
    method: 'post',
    path: '/keys/:id/rotate',
    tag,
    summary: 'Replace a key with a new one (same settings; the old one is revoked)',
    auth: 'key',
    params: adminKeyIdParamsSchema,
    responses: {
      201: { description: 'The new key and its secret', schema: newKeySchema.extend({ replaces: z.string() }) },
    },
    errors: ADMIN_ERRORS,
  }),
  keyBudget: declare({
    method: 'put',
    path: '/keys/:id/budget',
    tag,
    summary: "Set or clear a key's budget",
    auth: 'key',
    params: adminKeyIdParamsSchema,
    body: adminBudgetBodySchema,
    responses: { 200: { description: 'The key', schema: adminKeySchema } },
    errors: ADMIN_ERRORS,
  }),
  spend: declare({
    method: 'get',
    path: '/spend',
    tag,
    summary: 'Spend by key, model or day (JSON, or CSV)',
    auth: 'key',
    query: adminSpendQuerySchema,
    responses: {
      200: {
        description: 'The report (`format=csv` or `Accept: text/csv`: the same rows as CSV)',
        schema: z.looseObject({
          object: z.literal('spend_report'),
          group_by: z.enum(['key', 'model', 'day']),
          rows: z.array(z.object({ group: z.string(), calls: z.number().int(), cost_usd: z.number() })),
          total_usd: z.number(),
        }),
      },
    },
    errors: [403],
  }),
  audit: declare({
    method: 'get',
    path: '/audit',
    tag,
    summary: 'The audit log of who did what, newest first',
    auth: 'key',
    query: adminAuditQuerySchema,
    responses: {
      200: {
        description: 'Audit entries',
        schema: list(
          z.looseObject({
            id: z.string(),
            actor_key_id: z.string().nullable(),
            action: z.string(),
            target: z.string(),
            details: z.record(z.string(), z.unknown()),
            created_at: z.string(),
          }),
        ),
      },
    },
    errors: [403],
  }),
};

export function adminRoutes(admin: AdminService): Router {
  const router = Router();
  const actorOf = (req: Request): Promise<string> => {
    if (req.principal?.kind !== 'user') throw new AuthenticationRequiredError();
    return admin.requireAdmin(req.principal);
  };

  route(router, ADMIN_ROUTES.orgs, async (req, res) => {
    await actorOf(req);
    res.json({ object: 'list', data: await admin.listOrgs() });
  });

  route(router, ADMIN_ROUTES.createOrg, async (req, res, input) => {
    const actor = await actorOf(req);
    const body = input.body();
    res
      .status(201)
      .json(await admin.createOrg(actor, body.tier ? { name: body.name, tier: body.tier } : { name: body.name }));
  });

  route(router, ADMIN_ROUTES.credits, async (req, res, input) => {
    const actor = await actorOf(req);
    const { org } = input.params();
    const body = input.body();
    res.json(await admin.addCredits(actor, org, body.amount_usd));
  });

  route(router, ADMIN_ROUTES.orgBudget, async (req, res, input) => {
    const actor = await actorOf(req);
    const { org } = input.params();
    const body = input.body();
    res.json(
      await admin.setOrgBudget(actor, org, {
        budgetUsd: body.budget_usd,
        ...(body.budget_period ? { period: body.budget_period } : {}),
      }),
    );
  });

  route(router, ADMIN_ROUTES.keys, async (req, res, input) => {
    await actorOf(req);
    const { org } = input.query();
    res.json({ object: 'list', data: await admin.listKeys(org === undefined ? {} : { org }) });
  });

  route(router, ADMIN_ROUTES.createKey, async (req, res, input) => {
    const actor = await actorOf(req);
    const body = input.body();
    const created = await admin.createKey(actor, {
      org: body.org,
      ...(body.tier ? { tier: body.tier } : {}),
      ...(body.name ? { name: body.name } : {}),
      ...(body.superuser !== undefined ? { superuser: body.superuser } : {}),
      ...(body.expires_at !== undefined
        ? { expiresAt: body.expires_at === null ? null : new Date(body.expires_at) }
        : {}),
      ...(body.allowed_models !== undefined ? { allowedModels: body.allowed_models } : {}),
      ...(body.budget_usd !== undefined ? { budgetUsd: body.budget_usd } : {}),
      ...(body.budget_period !== undefined ? { budgetPeriod: body.budget_period } : {}),
    });
    res.status(201).json(created);
  });

  route(router, ADMIN_ROUTES.key, async (req, res, input) => {
    await actorOf(req);
    const { id } = input.params();
    res.json(await admin.getKey(id));
  });

  route(router, ADMIN_ROUTES.updateKey, async (req, res, input) => {
    const actor = await actorOf(req);
    const { id } = input.params();
    const body = input.body();
    res.json(
      await admin.updateKey(actor, id, {
        ...(body.expires_at !== undefined
          ? { expiresAt: body.expires_at === null ? null : new Date(body.expires_at) }
          : {}),
        ...(body.allowed_models !== undefined ? { allowedModels: body.allowed_models } : {}),
      }),
    );
  });

  route(router, ADMIN_ROUTES.revoke, async (req, res, input) => {
    const actor = await actorOf(req);
    const { id } = input.params();
    res.json(await admin.revokeKey(actor, id));
  });

  route(router, ADMIN_ROUTES.rotate, async (req, res, input) => {
    const actor = await actorOf(req);
    const { id } = input.params();
    res.status(201).json(await admin.rotateKey(actor, id));
  });

  route(router, ADMIN_ROUTES.keyBudget, async (req, res, input) => {
    const actor = await actorOf(req);
    const { id } = input.params();
    const body = input.body();
    res.json(
      await admin.setBudget(actor, id, {
        budgetUsd: body.budget_usd,
        ...(body.budget_period ? { period: body.budget_period } : {}),
      }),
    );
  });

  route(router, ADMIN_ROUTES.spend, async (req, res, input) => {
    await actorOf(req);
    const query = input.query();
    const report = await admin.spend({
      groupBy: query.group_by,
      ...(query.from ? { from: new Date(query.from) } : {}),
      ...(query.to ? { to: new Date(query.to) } : {}),
    });
    const csv =
      query.format === 'csv' || (query.format === undefined && req.accepts(['json', 'text/csv']) === 'text/csv');
    if (csv) {
      res.type('text/csv').send(spendCsv(query.group_by, report.rows));
      return;
    }
    res.json({ object: 'spend_report', group_by: query.group_by, ...report });
  });

  route(router, ADMIN_ROUTES.audit, async (req, res, input) => {
    await actorOf(req);
    const { limit } = input.query();
    res.json({ object: 'list', data: await admin.audit({ limit }) });
  });

  return router;
}
