/**
 * Skills tools: the MCP face of `/v1/skills*` (list, lookup, get, create, update, download). Arguments mirror the
 * REST bodies and queries, and `structuredContent` is the REST body (a list comes as `{ items: [...] }`, because
 * structured content must be an object). Reads follow the skills service's scope: a caller sees their
 * organisation's skills plus the public ones; anonymous callers see the public ones only and cannot write.
 */
import { z } from 'zod';
import {
  createSkillBodySchema,
  DOWNLOAD_EXPIRES,
  lookupSkillBodySchema,
  toDownloadWire,
  toSkillCreateSource,
  toSkillWire,
  updateSkillBodySchema,
  versionOf,
} from '../../wire/skills.schemas';
import { fieldError } from '../../wire/validation';
import type { SkillsService } from '../../services/skills/skills.service';
import { defineMcpTool, type McpTool } from '../mcp-tool';

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/** SkillInfo, as `/v1/skills*` answers it. */
export const skillOutput = z.object({
  id: z.string(),
  object: z.literal('skill'),
  name: z.string(),
  description: z.string(),
  skill_version: z.string(),
  status: z.enum(['completed', 'pending', 'failed']),
  is_public: z.boolean(),
  size_bytes: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
});

const skillId = z.string().min(1).max(200).describe('The id of one skill version (a UUID)');

export function skillTools(skills: SkillsService): McpTool[] {
  return [
    defineMcpTool({
      name: 'list_skills',
      title: 'List skills',
      description:
        'Your organisation’s skills plus the public (built-in) ones, as GET /v1/skills. `grouped: true` keeps the ' +
        'latest version of each name. Anonymous callers see the public skills only.',
      input: z.object({
        limit: z.number().int().min(1).max(1000).default(50),
        offset: z.number().int().min(0).default(0),
        order_by: z.enum(['created_at', 'updated_at', 'name']).default('created_at'),
        descending: z.boolean().default(true),
        grouped: z.boolean().default(false).describe('Only the latest version of each skill name'),
      }),
      output: z.object({ items: z.array(skillOutput) }),
      annotations: READ_ONLY,
      needsAccount: false,
      async run(args, ctx) {
        const list = await skills.list(ctx.principal, {
          limit: args.limit,
          offset: args.offset,
          orderBy: args.order_by,
          descending: args.descending,
          grouped: args.grouped,
        });
        return { items: list.map(toSkillWire) };
      },
    }),
    defineMcpTool({
      name: 'lookup_skill',
      title: 'Look up a skill',
      description:
        'One skill version by id, or by name (the latest version unless skill_version is given), as POST ' +
        '/v1/skills/lookup. Anonymous callers find public skills only.',
      input: lookupSkillBodySchema,
      output: skillOutput,
      annotations: READ_ONLY,
      needsAccount: false,
      async run(args, ctx) {
        const id = args.id ?? args.skill_id ?? null;
        const name = args.name ?? args.skill_name ?? null;
        if (!id && !name) throw fieldError('body', 'name', 'missing', 'Give id, or name (with skill_version).', args);
        return toSkillWire(await skills.lookup(ctx.principal, { id, name, version: versionOf(args) }));
      },
    }),
    defineMcpTool({
      name: 'get_skill',
      title: 'Get a skill',
      description: 'One skill version by id, as GET /v1/skills/{skill_id}.',
      input: z.object({ skill_id: skillId }),
      output: skillOutput,
      annotations: READ_ONLY,
      needsAccount: false,
      run: async (args, ctx) => toSkillWire(await skills.get(ctx.principal, args.skill_id)),
    }),
    defineMcpTool({
      name: 'create_skill',
      title: 'Create a skill',
      description:
        'Creates a skill in your organisation, as POST /v1/skills/create, from exactly one source: file_id (a zip ' +
        'with SKILL.md, stored with upload_file), prompt (with optional json_schema; SKILL.md and schema.json are ' +
        'written for it) or session_id (a chat session’s history). Needs an account.',
      input: createSkillBodySchema,
      output: skillOutput,
      // Adds a version; nothing existing changes. A prompt source is drafted anew on every call.
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      needsAccount: true,
      async run(args, ctx) {
        const skill = await skills.create(ctx.principal, toSkillCreateSource(args), {
          name: args.name ?? null,
          description: args.description ?? null,
        });
        return toSkillWire(skill);
      },
    }),
    defineMcpTool({
      name: 'update_skill',
      title: 'Update a skill',
      description:
        'Stores a new version of one of your skills from an uploaded zip (file_id), as POST ' +
        '/v1/skills/{skill_id}/update. The earlier version stays readable by its id; lookups by name return the ' +
        'new one. Public skills are read-only. Needs an account.',
      input: updateSkillBodySchema.extend({ skill_id: skillId }),
      output: skillOutput,
      // A new version beside the old one, so nothing is overwritten.
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      needsAccount: true,
      async run(args, ctx) {
        const skill = await skills.updateFromFile(ctx.principal, args.skill_id, args.file_id, {
          description: args.description ?? null,
        });
        return toSkillWire(skill);
      },
    }),
    defineMcpTool({
      name: 'download_skill',
      title: 'Download a skill',
      description:
        'A signed, expiring download link of a skill version’s zip, as GET /v1/skills/{skill_id}/download; with ' +
        'include_zip (the default) the zip itself follows as an embedded resource (base64 blob, application/zip).',
      input: z.object({
        skill_id: skillId,
        expires: z
          .number()
          .int()
          .min(DOWNLOAD_EXPIRES.min)
          .max(DOWNLOAD_EXPIRES.max)
          .default(DOWNLOAD_EXPIRES.default)
          .describe('Seconds the link stays valid'),
        include_zip: z.boolean().default(true).describe('Attach the zip bytes to the result'),
      }),
      output: z.object({ download_url: z.string(), expires_in: z.number(), expires_at: z.string() }),
      annotations: READ_ONLY,
      needsAccount: false,
      async run(args, ctx) {
        const path = await skills.downloadPath(ctx.principal, args.skill_id, args.expires);
        const wire = toDownloadWire(ctx.baseUrl, path, args.expires);
        if (args.include_zip) {
          // The bytes the link serves, read through the same signature check the link's route applies.
          const query = Object.fromEntries(new URL(path, 'http://x').searchParams);
          const { zip } = await skills.openSignedDownload(args.skill_id, query);
          ctx.attach({
            type: 'resource',
            resource: { uri: wire.download_url, mimeType: 'application/zip', blob: zip.toString('base64') },
          });
        }
        return wire;
      },
    }),
  ];
}
