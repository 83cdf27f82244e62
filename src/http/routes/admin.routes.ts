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
import { parseInput } from '../../wire/validation';

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

export function adminRoutes(admin: AdminService): Router {
  const router = Router();
  const actorOf = (req: Request): Promise<string> => {
    if (req.principal?.kind !== 'user') throw new AuthenticationRequiredError();
    return admin.requireAdmin(req.principal);
  };

  router.get('/organisations', async (req, res) => {
    await actorOf(req);
    res.json({ object: 'list', data: await admin.listOrgs() });
  });

  router.post('/organisations', async (req, res) => {
    const actor = await actorOf(req);
    const body = parseInput(adminCreateOrgBodySchema, req.body, 'body');
    res
      .status(201)
      .json(await admin.createOrg(actor, body.tier ? { name: body.name, tier: body.tier } : { name: body.name }));
  });

  router.post('/organisations/:org/credits', async (req, res) => {
    const actor = await actorOf(req);
    const { org } = parseInput(adminOrgParamsSchema, req.params, 'path');
    const body = parseInput(adminCreditsBodySchema, req.body, 'body');
    res.json(await admin.addCredits(actor, org, body.amount_usd));
  });

  router.put('/organisations/:org/budget', async (req, res) => {
    const actor = await actorOf(req);
    const { org } = parseInput(adminOrgParamsSchema, req.params, 'path');
    const body = parseInput(adminBudgetBodySchema, req.body, 'body');
    res.json(
      await admin.setOrgBudget(actor, org, {
        budgetUsd: body.budget_usd,
        ...(body.budget_period ? { period: body.budget_period } : {}),
      }),
    );
  });

  router.get('/keys', async (req, res) => {
    await actorOf(req);
    const { org } = parseInput(adminKeysQuerySchema, req.query, 'query');
    res.json({ object: 'list', data: await admin.listKeys(org === undefined ? {} : { org }) });
  });

  router.post('/keys', async (req, res) => {
    const actor = await actorOf(req);
    const body = parseInput(adminCreateKeyBodySchema, req.body, 'body');
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

  router.get('/keys/:id', async (req, res) => {
    await actorOf(req);
    const { id } = parseInput(adminKeyIdParamsSchema, req.params, 'path');
    res.json(await admin.getKey(id));
  });

  router.patch('/keys/:id', async (req, res) => {
    const actor = await actorOf(req);
    const { id } = parseInput(adminKeyIdParamsSchema, req.params, 'path');
    const body = parseInput(adminUpdateKeyBodySchema, req.body, 'body');
    res.json(
      await admin.updateKey(actor, id, {
        ...(body.expires_at !== undefined
          ? { expiresAt: body.expires_at === null ? null : new Date(body.expires_at) }
          : {}),
        ...(body.allowed_models !== undefined ? { allowedModels: body.allowed_models } : {}),
      }),
    );
  });

  router.post('/keys/:id/revoke', async (req, res) => {
    const actor = await actorOf(req);
    const { id } = parseInput(adminKeyIdParamsSchema, req.params, 'path');
    res.json(await admin.revokeKey(actor, id));
  });

  router.post('/keys/:id/rotate', async (req, res) => {
    const actor = await actorOf(req);
    const { id } = parseInput(adminKeyIdParamsSchema, req.params, 'path');
    res.status(201).json(await admin.rotateKey(actor, id));
  });

  router.put('/keys/:id/budget', async (req, res) => {
    const actor = await actorOf(req);
    const { id } = parseInput(adminKeyIdParamsSchema, req.params, 'path');
    const body = parseInput(adminBudgetBodySchema, req.body, 'body');
    res.json(
      await admin.setBudget(actor, id, {
        budgetUsd: body.budget_usd,
        ...(body.budget_period ? { period: body.budget_period } : {}),
      }),
    );
  });

  router.get('/spend', async (req, res) => {
    await actorOf(req);
    const query = parseInput(adminSpendQuerySchema, req.query, 'query');
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

  router.get('/audit', async (req, res) => {
    await actorOf(req);
    const { limit } = parseInput(adminAuditQuerySchema, req.query, 'query');
    res.json({ object: 'list', data: await admin.audit({ limit }) });
  });

  return router;
}
