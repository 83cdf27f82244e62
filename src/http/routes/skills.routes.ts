/**
 * Skills API routes, mounted on `/v1/skills`: list, lookup, get, create, update, download (spec "Skills").
 *
 * Reads accept guests (public skills only); writes need a key. The download answer is a signed, expiring link to
 * `/v1/skills/{id}/content`, which serves the stored zip byte for byte with the signature as its only credential.
 */
import { Router, type Request } from 'express';
import type { SkillsService } from '../../services/skills/skills.service';
import { principalOf, userOf } from '../request-context';
import {
  createSkillBodySchema,
  downloadQuerySchema,
  listSkillsQuerySchema,
  lookupSkillBodySchema,
  skillIdParamsSchema,
  toDownloadWire,
  toSkillCreateSource,
  toSkillWire,
  updateSkillBodySchema,
  versionOf,
} from '../../wire/skills.schemas';
import { fieldError } from '../../wire/validation';
import { declare, route } from '../api/route-declaration';
import { skillDownloadSchema, skillListSchema, skillSchema } from '../api/response-schemas';

const tag = 'Skills';

export const SKILL_ROUTES = {
  list: declare({
    method: 'get',
    path: '/',
    tag,
    summary: "List skills (the organisation's and the public ones)",
    auth: 'open',
    query: listSkillsQuerySchema,
    responses: { 200: { description: 'Skills', schema: skillListSchema } },
  }),
  lookup: declare({
    method: 'post',
    path: '/lookup',
    tag,
    summary: 'Find a skill by id, or by name (and skill_version)',
    auth: 'open',
    body: lookupSkillBodySchema,
    responses: { 200: { description: 'The skill', schema: skillSchema } },
    errors: [404],
  }),
  create: declare({
    method: 'post',
    path: '/create',
    tag,
    summary: 'Create a skill from a zip file_id, a prompt (and json_schema), or a chat session',
    auth: 'key',
    body: createSkillBodySchema,
    responses: { 201: { description: 'The skill', schema: skillSchema } },
    errors: [400, 404, 409, 413],
  }),
  update: declare({
    method: 'post',
    path: '/:skill_id/update',
    tag,
    summary: 'A new version of a skill from a zip file_id',
    auth: 'key',
    params: skillIdParamsSchema,
    body: updateSkillBodySchema,
    responses: { 200: { description: 'The new version', schema: skillSchema } },
    errors: [400, 404, 413],
  }),
  download: declare({
    method: 'get',
    path: '/:skill_id/download',
    tag,
    summary: "A signed link to a skill's zip",
    auth: 'open',
    params: skillIdParamsSchema,
    query: downloadQuerySchema,
    responses: { 200: { description: 'The link', schema: skillDownloadSchema } },
    errors: [404],
  }),
  content: declare({
    method: 'get',
    path: '/:skill_id/content',
    tag,
    summary: "A skill's zip (the signed `download_url`; its `expires` and `signature` go in the query)",
    auth: 'open',
    params: skillIdParamsSchema,
    responses: { 200: { description: 'The zip', contentType: 'application/zip' } },
    errors: [404],
  }),
  get: declare({
    method: 'get',
    path: '/:skill_id',
    tag,
    summary: 'One skill',
    auth: 'open',
    params: skillIdParamsSchema,
    responses: { 200: { description: 'The skill', schema: skillSchema } },
    errors: [404],
  }),
};

export interface SkillsRoutesOptions {
  /** Base URL for links, e.g. `https://prism.example.com`; derived from the request when unset. */
  publicUrl: string | undefined;
}

export function skillsRoutes(skills: SkillsService, options: SkillsRoutesOptions): Router {
  const router = Router();
  const baseUrl = (req: Request): string => options.publicUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`;

  route(router, SKILL_ROUTES.list, async (req, res, input) => {
    const query = input.query();
    const list = await skills.list(principalOf(req), {
      limit: query.limit,
      offset: query.offset,
      orderBy: query.order_by,
      descending: query.descending,
      grouped: query.grouped,
    });
    res.json(list.map(toSkillWire));
  });

  route(router, SKILL_ROUTES.lookup, async (req, res, input) => {
    const body = input.body(req.body ?? {});
    const id = body.id ?? body.skill_id ?? null;
    const name = body.name ?? body.skill_name ?? null;
    if (!id && !name) throw fieldError('body', 'name', 'missing', 'Give id, or name (with skill_version).', req.body);
    const skill = await skills.lookup(principalOf(req), { id, name, version: versionOf(body) });
    res.json(toSkillWire(skill));
  });

  route(router, SKILL_ROUTES.create, async (req, res, input) => {
    const body = input.body(req.body ?? {});
    const skill = await skills.create(userOf(req), toSkillCreateSource(body, req.get('x-session-token') ?? null), {
      name: body.name ?? null,
      description: body.description ?? null,
    });
    res.status(201).json(toSkillWire(skill));
  });

  route(router, SKILL_ROUTES.update, async (req, res, input) => {
    const { skill_id } = input.params();
    const body = input.body(req.body ?? {});
    const skill = await skills.updateFromFile(userOf(req), skill_id, body.file_id, {
      description: body.description ?? null,
    });
    res.json(toSkillWire(skill));
  });

  route(router, SKILL_ROUTES.download, async (req, res, input) => {
    const { skill_id } = input.params();
    const { expires } = input.query();
    const path = await skills.downloadPath(principalOf(req), skill_id, expires);
    res.json(toDownloadWire(baseUrl(req), path, expires));
  });

  route(router, SKILL_ROUTES.content, async (req, res, input) => {
    const { skill_id } = input.params();
    const { record, zip } = await skills.openSignedDownload(skill_id, req.query);
    res.setHeader('Content-Type', 'application/zip');
    res.setHeader('Content-Length', String(zip.length));
    res.setHeader('Content-Disposition', `attachment; filename="${record.name}-${record.skillVersion}.zip"`);
    res.end(zip);
  });

  route(router, SKILL_ROUTES.get, async (req, res, input) => {
    const { skill_id } = input.params();
    res.json(toSkillWire(await skills.get(principalOf(req), skill_id)));
  });

  return router;
}
