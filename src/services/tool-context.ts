/**
 * Builds the ToolContext a tool call runs with: the SDK's narrow ports bound to the services for one caller.
 *
 * The agent runtime and the MCP server both call `create`; neither knows how a file id, an artifact id or a URL
 * becomes bytes, or where artifacts go. Everything stays scoped to the caller's organisation.
 */
import { BadRequestError, NotFoundError, PayloadTooLargeError } from '../domain/errors';
import type { Principal } from '../domain/account';
import type { ParsedSkill } from '../domain/skill';
import { CancelController, type CancelSignal } from '../lib/cancel';
import { sniffMediaType } from '../lib/media-type';
import { SafeFetchError, safeFetch } from '../lib/safe-fetch';
import type {
  FetchPort,
  HubPort,
  LoadedMedia,
  MemoryPort,
  SkillsPort,
  ToolContext,
  ToolProgress,
  VisionPort,
} from '../agents/sdk';
import type { ArtifactsService } from './artifacts.service';
import type { HubService } from './hub/hub.service';
import { resolveSingleInput, type InputResolverDeps } from './inputs/resolve-input';

export interface ToolContextDeps {
  artifacts: ArtifactsService;
  hub: HubService;
  vision: VisionPort;
  inputs: InputResolverDeps;
  /** `vision.transcribeSpeech` billed to the caller (the composition root binds it to the wallet); absent: free. */
  speechFor?: (principal: Principal) => VisionPort['transcribeSpeech'];
  /** The caller's long-term memory (the organisation's LangGraph store). */
  memoryFor(principal: Principal): MemoryPort;
}

export interface ToolContextOptions {
  signal?: CancelSignal;
  progress?: (update: ToolProgress) => void;
  executionId?: string | null;
  sessionId?: string | null;
  /** Skills enabled for this run (their files become readable through `ctx.skills`). */
  skills?: readonly ParsedSkill[];
}

export interface ToolContextFactory {
  create(principal: Principal, options?: ToolContextOptions): ToolContext;
}

/** Artifact object ids (`img_a1b2c3`, `json_x9y8z7`); anything else that is not a URL is a file id. */
export const ARTIFACT_ID = /^[a-z]{3,4}_[a-z0-9]{6}$/;

export function createToolContextFactory(deps: ToolContextDeps): ToolContextFactory {
  const hub: HubPort = {
    list: () => deps.hub.list().map(toHubInfo),
    find: (domain) => {
      const found = deps.hub.find(domain);
      return found ? toHubInfo(found) : null;
    },
  };
  const fetchPort: FetchPort = {
    async fetch(url) {
      try {
        const fetched = await safeFetch(url, { ...deps.inputs.fetch, followRedirects: true });
        const mimeType = fetched.contentType?.split(';')[0]?.trim() || sniffMediaType(fetched.body).mimeType;
        return { status: fetched.status, finalUrl: fetched.finalUrl, mimeType, body: fetched.body };
      } catch (error) {
        if (error instanceof SafeFetchError) {
          if (error.kind === 'not_allowed') {
            throw new BadRequestError(`URL refused: ${error.message}.`, 'url_not_allowed', 'url');
          }
          if (error.kind === 'too_large') {
            throw new PayloadTooLargeError(deps.inputs.fetch.maxBytes, 'The fetched resource');
          }
          throw new BadRequestError(`Could not fetch the URL: ${error.message}.`, 'url_fetch_failed', 'url');
        }
        throw error;
      }
    },
  };
  const never = new CancelController().signal;

  return {
    create(principal, options = {}) {
      const scope = {
        executionId: options.executionId ?? undefined,
        sessionId: options.sessionId ?? undefined,
      };
      const skills = skillsPort(options.skills ?? []);
      return {
        principal,
        signal: options.signal ?? never,
        ...(options.progress ? { progress: options.progress } : {}),
        executionId: options.executionId ?? null,
        sessionId: options.sessionId ?? null,
        media: {
          async load(source): Promise<LoadedMedia> {
            const trimmed = source.trim();
            if (ARTIFACT_ID.test(trimmed)) {
              const { artifact, bytes } = await deps.artifacts.read(principal, { objectId: trimmed });
              const family = sniffMediaType(bytes).family;
              return { bytes, mimeType: artifact.mimeType, family, filename: artifact.filename };
            }
            const isUrl = /^(https?:|data:)/i.test(trimmed);
            const input = await resolveSingleInput(
              deps.inputs,
              principal,
              isUrl ? { images: [trimmed] } : { fileId: trimmed },
            );
            return { ...input, family: sniffMediaType(input.bytes).family };
          },
        },
        vision: deps.speechFor ? { ...deps.vision, transcribeSpeech: deps.speechFor(principal) } : deps.vision,
        artifacts: {
          async write(artifact) {
            const record = await deps.artifacts.write(principal, scope, artifact);
            return refOf(record);
          },
          async read(objectId) {
            const { artifact, bytes } = await deps.artifacts.read(principal, { objectId });
            return { ...refOf(artifact), bytes };
          },
          async list() {
            if (!scope.executionId && !scope.sessionId) return [];
            const { items } = await deps.artifacts.list(principal, scope, { offset: 0, limit: 1000 });
            return items.map(refOf);
          },
        },
        hub,
        skills,
        fetch: fetchPort,
        memory: deps.memoryFor(principal),
      };
    },
  };
}

function refOf(a: { objectId: string; filename: string; mimeType: string; sizeBytes: number }) {
  return { objectId: a.objectId, filename: a.filename, mimeType: a.mimeType, sizeBytes: a.sizeBytes };
}

function toHubInfo(d: ReturnType<HubService['list']>[number]) {
  return {
    domain: d.domain,
    name: d.name,
    description: d.description,
    supportedInputs: d.supportedInputs,
    jsonSchema: d.jsonSchema,
  };
}

function skillsPort(skills: readonly ParsedSkill[]): SkillsPort {
  const find = (name: string): ParsedSkill | undefined =>
    skills.find((s) => s.record.name === name || s.record.id === name);
  return {
    list: () =>
      skills.map((s) => ({
        id: s.record.id,
        name: s.record.name,
        version: s.record.skillVersion,
        description: s.record.description,
        files: s.files.map((f) => ({ path: f.path, sizeBytes: f.sizeBytes })),
      })),
    async readFile(skill, path) {
      const found = find(skill);
      if (!found) {
        const enabled = skills.map((s) => s.record.name).join(', ') || 'none';
        throw new BadRequestError(`Skill '${skill}' is not enabled for this run (enabled: ${enabled}).`, null, 'skill');
      }
      if (!found.files.some((f) => f.path === path)) throw new NotFoundError('file', `${skill}/${path}`);
      return found.readFile(path);
    },
  };
}
