/**
 * Wire shapes of the Skills API: request schemas, the one mapper from a
 * SkillRecord to SkillInfo, and the AgentSkill object that generate, agent execute and chat send in `skills`.
 *
 * `skill_version` is always written as a string (the Python SDK's SkillInfo rejects integers).
 */
import { z } from 'zod';
import { BadRequestError } from '../domain/errors';
import type { SkillRecord, SkillReference } from '../domain/skill';
import type { SkillCreateSource } from '../services/skills/skills.service';
import { queryBool, queryInt } from './common.schemas';

export const DOWNLOAD_EXPIRES = { min: 1, max: 30 * 24 * 3600, default: 604800 } as const;

export const listSkillsQuerySchema = z.object({
  limit: queryInt({ min: 1, max: 1000, default: 50 }),
  offset: queryInt({ min: 0, default: 0 }),
  order_by: z.enum(['created_at', 'updated_at', 'name']).default('created_at'),
  descending: queryBool(true),
  grouped: queryBool(false),
});

const versionField = z.union([z.string().min(1).max(100), z.number().int().min(1)]).nullish();

export const lookupSkillBodySchema = z.object({
  id: z.string().min(1).max(200).nullish(),
  skill_id: z.string().min(1).max(200).nullish(),
  name: z.string().min(1).max(200).nullish(),
  skill_name: z.string().min(1).max(200).nullish(),
  skill_version: versionField,
  version: versionField,
});

export const createSkillBodySchema = z.object({
  file_id: z.string().min(1).max(200).nullish(),
  prompt: z.string().min(1).max(100_000).nullish(),
  json_schema: z.record(z.string(), z.unknown()).nullish(),
  session_id: z.string().min(1).max(200).nullish(),
  name: z.string().min(1).max(200).nullish(),
  description: z.string().min(1).max(1024).nullish(),
});

export const updateSkillBodySchema = z.object({
  file_id: z.string().min(1).max(200),
  description: z.string().min(1).max(1024).nullish(),
});

export const skillIdParamsSchema = z.object({ skill_id: z.string().min(1).max(200) });

export const downloadQuerySchema = z.object({
  expires: queryInt({ min: DOWNLOAD_EXPIRES.min, max: DOWNLOAD_EXPIRES.max, default: DOWNLOAD_EXPIRES.default }),
});

/** SkillInfo. */
export function toSkillWire(skill: SkillRecord) {
  return {
    id: skill.id,
    object: 'skill' as const,
    name: skill.name,
    description: skill.description,
    skill_version: skill.skillVersion,
    status: skill.status,
    is_public: skill.isPublic,
    size_bytes: skill.sizeBytes,
    created_at: skill.createdAt.toISOString(),
    updated_at: skill.updatedAt.toISOString(),
  };
}

/** Exactly one of `file_id`, `prompt` (with optional `json_schema`) or `session_id`. */
export function toSkillCreateSource(
  body: {
    file_id?: string | null | undefined;
    prompt?: string | null | undefined;
    json_schema?: Record<string, unknown> | null | undefined;
    session_id?: string | null | undefined;
  },
  sessionToken: string | null = null,
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

/** The body of `GET /v1/skills/{id}/download`: the signed link (path from the service) and when it expires. */
export function toDownloadWire(baseUrl: string, signedPath: string, expiresIn: number) {
  const expiresAt = Number(new URL(signedPath, 'http://x').searchParams.get('expires'));
  return {
    download_url: `${baseUrl}${signedPath}`,
    expires_in: expiresIn,
    expires_at: new Date(expiresAt * 1000).toISOString(),
  };
}

/** The version a lookup or AgentSkill names: `skill_version` first, legacy `version`, else `latest`. */
export const versionOf = (body: {
  skill_version?: string | number | null | undefined;
  version?: string | number | null | undefined;
}) => String(body.skill_version ?? body.version ?? 'latest');

/** An AgentSkill: a stored skill by id or name, or an inline zip (`source.data`, legacy `data` or `bundle`). */
export const agentSkillSchema = z
  .object({
    type: z.enum(['skill_reference', 'inline']).nullish(),
    skill_id: z.string().min(1).max(200).nullish(),
    skill_name: z.string().min(1).max(200).nullish(),
    skill_version: versionField,
    version: versionField,
    name: z.string().min(1).max(200).nullish(),
    description: z.string().max(1024).nullish(),
    source: z
      .object({
        type: z.literal('base64').default('base64'),
        media_type: z.string().nullish(),
        data: z.string().min(1),
      })
      .nullish(),
    data: z.string().min(1).nullish(),
    bundle: z.string().min(1).nullish(),
  })
  .loose();

export type AgentSkillWire = z.output<typeof agentSkillSchema>;

/**
 * Maps an AgentSkill to a reference. Resolution order as the hosted service: `skill_id` (UUID or name) first,
 * then `skill_name`.
 * @throws BadRequestError `invalid_skill_source` for an entry naming no skill, or an inline one that also names one.
 */
export function toSkillReference(skill: AgentSkillWire, param = 'skills'): SkillReference {
  const inlineData = skill.source?.data ?? skill.data ?? skill.bundle ?? null;
  if (skill.type === 'inline' || inlineData !== null) {
    if (inlineData === null) {
      throw new BadRequestError('An inline skill needs source.data (a base64 zip).', 'invalid_skill_source', param);
    }
    if (skill.skill_id || skill.skill_name) {
      throw new BadRequestError(
        'An inline skill must not also set skill_id or skill_name.',
        'invalid_skill_source',
        param,
      );
    }
    return {
      kind: 'inline',
      name: skill.name ?? null,
      description: skill.description ?? null,
      zip: Buffer.from(inlineData, 'base64'),
    };
  }
  const version = versionOf(skill);
  if (skill.skill_id) return { kind: 'id', id: skill.skill_id, version };
  const name = skill.skill_name ?? skill.name;
  if (name) return { kind: 'name', name, version };
  throw new BadRequestError('A skill reference needs skill_id or skill_name.', 'invalid_skill_source', param);
}
