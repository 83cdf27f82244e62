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
import { fieldError, parseInput } from '../../wire/validation';

export interface SkillsRoutesOptions {
  /** Base URL for links, e.g. `https://prism.example.com`; derived from the request when unset. */
  publicUrl: string | undefined;
}

export function skillsRoutes(skills: SkillsService, options: SkillsRoutesOptions): Router {
  const router = Router();
  const baseUrl = (req: Request): string => options.publicUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`;

  router.get('/', async (req, res) => {
    const query = parseInput(listSkillsQuerySchema, req.query, 'query');
    const list = await skills.list(principalOf(req), {
      limit: query.limit,
      offset: query.offset,
      orderBy: query.order_by,
      descending: query.descending,
      grouped: query.grouped,
    });
    res.json(list.map(toSkillWire));
  });

  router.post('/lookup', async (req, res) => {
    const body = parseInput(lookupSkillBodySchema, req.body ?? {}, 'body');
    const id = body.id ?? body.skill_id ?? null;
    const name = body.name ?? body.skill_name ?? null;
    if (!id && !name) throw fieldError('body', 'name', 'missing', 'Give id, or name (with skill_version).', req.body);
    const skill = await skills.lookup(principalOf(req), { id, name, version: versionOf(body) });
    res.json(toSkillWire(skill));
  });

  router.post('/create', async (req, res) => {
    const body = parseInput(createSkillBodySchema, req.body ?? {}, 'body');
    const skill = await skills.create(userOf(req), toSkillCreateSource(body, req.get('x-session-token') ?? null), {
      name: body.name ?? null,
      description: body.description ?? null,
    });
    res.status(201).json(toSkillWire(skill));
  });

  router.post('/:skill_id/update', async (req, res) => {
    const { skill_id } = parseInput(skillIdParamsSchema, req.params, 'path');
    const body = parseInput(updateSkillBodySchema, req.body ?? {}, 'body');
    const skill = await skills.updateFromFile(userOf(req), skill_id, body.file_id, {
      description: body.description ?? null,
    });
    res.json(toSkillWire(skill));
  });

  router.get('/:skill_id/download', async (req, res) => {
    const { skill_id } = parseInput(skillIdParamsSchema, req.params, 'path');
    const { expires } = parseInput(downloadQuerySchema, req.query, 'query');
    const path = await skills.downloadPath(principalOf(req), skill_id, expires);
    res.json(toDownloadWire(baseUrl(req), path, expires));
  });

  router.get('/:skill_id/content', async (req, res) => {
    const { skill_id } = parseInput(skillIdParamsSchema, req.params, 'path');
    const { record, zip } = await skills.openSignedDownload(skill_id, req.query);
    res.setHeader('Content-Type', 'application/zip');
    res.setHeader('Content-Length', String(zip.length));
    res.setHeader('Content-Disposition', `attachment; filename="${record.name}-${record.skillVersion}.zip"`);
    res.end(zip);
  });

  router.get('/:skill_id', async (req, res) => {
    const { skill_id } = parseInput(skillIdParamsSchema, req.params, 'path');
    res.json(toSkillWire(await skills.get(principalOf(req), skill_id)));
  });

  return router;
}
