/**
 * Normalises an execute request's `inputs` (named slots of MessageContent, lists of them, plain URL strings or any
 * JSON) into references the runtime can resume from: stored file ids are checked now, `data:` URLs are stored as
 * artifacts of the execution, http(s) URLs stay URLs (fetched by the tools through the SSRF-safe fetcher). Nothing
 * base64 ever reaches the record or the checkpoints.
 */
import type { Principal } from '../../domain/account';
import { BadRequestError } from '../../domain/errors';
import type { ExecutionInput } from '../../domain/execution';
import type { ArtifactKind } from '../../domain/artifact';
import { DataUrlError, decodeDataUrl } from '../../lib/data-url';
import { sniffMediaType } from '../../lib/media-type';
import type { PlannerInput } from '../../agents/sdk';
import type { ArtifactScope } from '../../stores/types/artifact';
import type { ArtifactsService } from '../artifacts.service';
import type { FilesService } from '../files.service';

export interface InputNormaliserDeps {
  files: Pick<FilesService, 'get'>;
  artifacts: Pick<ArtifactsService, 'write'>;
}

type Family = 'image' | 'document' | 'video' | 'audio' | 'unknown';
const TYPE_FAMILY: Record<string, Family> = {
  image_url: 'image',
  video_url: 'video',
  audio_url: 'audio',
  file_url: 'unknown',
  document_url: 'document',
};
const EXTENSION_FAMILY: [RegExp, Family][] = [
  [/\.(png|jpe?g|gif|webp|bmp|tiff?)$/i, 'image'],
  [/\.pdf$/i, 'document'],
  [/\.(mp4|mov|webm|mkv|avi|ts)$/i, 'video'],
  [/\.(wav|mp3|m4a|ogg|flac|aac)$/i, 'audio'],
];
const ARTIFACT_KIND: Record<Family, ArtifactKind> = {
  image: 'image',
  document: 'document',
  video: 'video',
  audio: 'audio',
  unknown: 'document',
};

export async function normaliseInputs(
  deps: InputNormaliserDeps,
  principal: Principal,
  executionId: string,
  raw: Record<string, unknown> | null | undefined,
): Promise<Record<string, ExecutionInput>> {
  return normaliseInputsIn(deps, principal, { executionId }, raw, 'inputs');
}

/** The same for any artifact scope (a chat session keeps its media under its session id); `param` prefixes errors. */
export async function normaliseInputsIn(
  deps: InputNormaliserDeps,
  principal: Principal,
  scope: ArtifactScope,
  raw: Record<string, unknown> | null | undefined,
  param: string,
): Promise<Record<string, ExecutionInput>> {
  const out: Record<string, ExecutionInput> = {};
  for (const [slot, value] of Object.entries(raw ?? {})) {
    out[slot] = await normalise(deps, principal, scope, value, `${param}.${slot}`);
  }
  return out;
}

async function normalise(
  deps: InputNormaliserDeps,
  principal: Principal,
  scope: ArtifactScope,
  value: unknown,
  param: string,
): Promise<ExecutionInput> {
  if (Array.isArray(value) && value.length > 0 && value.every(isContentPart)) {
    const items = [];
    for (const [i, item] of value.entries()) {
      items.push(await normalise(deps, principal, scope, item, `${param}.${i}`));
    }
    return { kind: 'list', items };
  }
  if (typeof value === 'string') {
    return /^(https?:|data:)/i.test(value.trim())
      ? media(deps, principal, scope, value.trim(), 'unknown', param)
      : { kind: 'text', text: value };
  }
  if (!isContentPart(value)) return { kind: 'json', value };
  const part = value as Record<string, unknown> & { type: string };
  if (part.type === 'text') return { kind: 'text', text: typeof part.text === 'string' ? part.text : '' };
  if (part.type === 'input_file') {
    const fileId = typeof part.file_id === 'string' ? part.file_id : null;
    const fileUrl = typeof part.file_url === 'string' ? part.file_url : null;
    if (fileId) {
      await deps.files.get(principal, fileId);
      return { kind: 'media', source: fileId, family: 'unknown' };
    }
    if (fileUrl) return media(deps, principal, scope, fileUrl, 'unknown', param);
    throw new BadRequestError('An input_file part needs `file_id` or `file_url`.', 'missing_input', param);
  }
  const nested = part[part.type] as { url?: unknown } | string | undefined;
  const url = typeof nested === 'string' ? nested : typeof nested?.url === 'string' ? nested.url : null;
  if (!url) {
    throw new BadRequestError(`The ${part.type} part has no url.`, 'missing_input', `${param}.${part.type}.url`);
  }
  return media(deps, principal, scope, url, TYPE_FAMILY[part.type] ?? 'unknown', param);
}

async function media(
  deps: InputNormaliserDeps,
  principal: Principal,
  scope: ArtifactScope,
  url: string,
  declared: Family,
  param: string,
): Promise<ExecutionInput> {
  if (/^https?:/i.test(url)) {
    let pathname: string;
    try {
      pathname = new URL(url).pathname;
    } catch {
      throw new BadRequestError('The input URL is not a valid URL.', 'invalid_media', param);
    }
    const byName = EXTENSION_FAMILY.find(([pattern]) => pattern.test(pathname))?.[1];
    return { kind: 'media', source: url, family: declared === 'unknown' ? (byName ?? 'unknown') : declared };
  }
  let bytes: Buffer;
  try {
    bytes = decodeDataUrl(url).bytes;
  } catch (error) {
    if (!(error instanceof DataUrlError)) throw error;
    throw new BadRequestError(`The input is not a valid data URL: ${error.message}.`, 'invalid_media', param);
  }
  const sniffed = sniffMediaType(bytes);
  const family: Family = sniffed.family === 'unknown' ? declared : sniffed.family;
  const artifact = await deps.artifacts.write(principal, scope, {
    kind: ARTIFACT_KIND[family],
    filename: `${param.replace(/[^A-Za-z0-9_.-]/g, '_')}`,
    mimeType: sniffed.mimeType,
    bytes,
  });
  return { kind: 'media', source: artifact.objectId, family };
}

function isContentPart(value: unknown): boolean {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const type = (value as { type?: unknown }).type;
  return (
    typeof type === 'string' &&
    ['text', 'image_url', 'video_url', 'audio_url', 'file_url', 'document_url', 'input_file'].includes(type)
  );
}

/** The task's inputs as planners see them; media families still unknown are sniffed by `family(source)`. */
export async function plannerInputs(
  inputs: Record<string, ExecutionInput>,
  familyOf: (source: string) => Promise<Family>,
): Promise<PlannerInput[]> {
  const out: PlannerInput[] = [];
  const add = async (slot: string, input: ExecutionInput): Promise<void> => {
    if (input.kind === 'list') {
      for (const [i, item] of input.items.entries()) await add(`${slot}.${i}`, item);
    } else if (input.kind === 'media') {
      const family = input.family === 'unknown' ? await familyOf(input.source) : input.family;
      out.push({ slot, kind: 'media', family, source: input.source });
    } else if (input.kind === 'text') out.push({ slot, kind: 'text', text: input.text });
    else out.push({ slot, kind: 'json', value: input.value });
  };
  for (const [slot, input] of Object.entries(inputs)) await add(slot, input);
  return out;
}
