/**
 * Skills API routes, mounted on `/v1/skills`: list, lookup, get, create, update, download (spec "Skills").
 *
 * Reads accept guests (public skills only); writes need a key. The download answer is a signed, expiring link to
 * `/v1/skills/{id}/content`, which serves the stored zip byte for byte with the signature as its only credential.
 */
import { Router, type Request } from 'express';
import { BadRequestError } from '../../domain/errors';
import type { SkillCreateSource, SkillsService } from '../../services/skills/skills.service';
import { principalOf, userOf } from '../request-context';
import {
  createSkillBodySchema,
  downloadQuerySchema,
  listSkillsQuerySchema,
  lookupSkillBodySchema,
  skillIdParamsSchema,
  toSkillWire,
  updateSkillBodySchema,
  versionOf,
} from '../schemas/skills.schemas';
import { fieldError, parseInput } from '../validation';

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
    const skill = await skills.create(userOf(req), sourceOf(body, req.get('x-session-token') ?? null), {
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
    res.json({
      download_url: `${baseUrl(req)}${path}`,
      expires_in: expires,
      expires_at: new Date(Number(new URL(path, 'http://x').searchParams.get('expires')) * 1000).toISOString(),
    });
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

/** Exactly one of `file_id`, `prompt` (with optional `json_schema`) or `session_id`. */
function sourceOf(
  body: {
    file_id?: string | null | undefined;
    prompt?: string | null | undefined;
    json_schema?: Record<string, unknown> | null | undefined;
    session_id?: string | null | undefined;
  },
  sessionToken: string | null,
): SkillCreateSource {
  const given = [body.file_id, body.prompt, body.session_id].filter((v) => v !== null && v !== undefined);
  if (given.length !== 1) {
    throw new BadRequestError(
      `Give exactly one source: file_id (a zip), prompt (with optional json_schema) or session_id; got ${given.length}.`,
      'invalid_skill_source',
      null,
    );
  }
  const jsonSchema = body.json_schema ?? null;
  if (body.file_id) {
    if (jsonSchema) {
      throw new BadRequestError('json_schema goes with prompt or session_id.', 'invalid_skill_source', 'json_schema');
    }
    return { kind: 'file', fileId: body.file_id };
  }
  if (body.prompt) return { kind: 'prompt', prompt: body.prompt, jsonSchema };
  return { kind: 'session', sessionId: body.session_id ?? '', sessionToken, jsonSchema };
}
