/**
 * Turns the ways callers name an input (a base64 string, a data URL, an http(s) URL, a stored file id) into bytes
 * with a sniffed media type, refusing what a structured model cannot take (more than one input, none at all,
 * unreachable or private URLs, undecodable base64) before anything is stored.
 */
import type { Readable } from 'node:stream';
import { AppError, BadRequestError, PayloadTooLargeError } from '../../domain/errors';
import { DataUrlError, decodeDataUrl } from '../../lib/data-url';
import { SafeFetchError, safeFetch, type SafeFetchOptions } from '../../lib/safe-fetch';
import { sniffMediaType } from '../../lib/media-type';
import type { Principal } from '../../domain/account';
import type { ExtractionInput } from '../../engines/extraction-engine';

export interface InputSources {
  images?: string[] | undefined;
  fileId?: string | undefined;
  url?: string | undefined;
}

export interface InputResolverDeps {
  openFile: (principal: Principal, fileId: string) => Promise<{ filename: string; stream: Readable }>;
  fetch: Pick<SafeFetchOptions, 'allowPrivate' | 'maxBytes' | 'timeoutMs'>;
}

/** Resolves exactly one input; `param` in errors names the field the caller sent. */
export async function resolveSingleInput(
  deps: InputResolverDeps,
  principal: Principal,
  sources: InputSources,
  /** The param errors about `images[0]` name (default `images.0`): a chat part's or embedding input's real path. */
  imageParam = 'images.0',
): Promise<ExtractionInput> {
  const images = sources.images ?? [];
  const named = [images.length > 0, Boolean(sources.fileId), Boolean(sources.url)].filter(Boolean).length;
  if (images.length > 1) {
    throw new BadRequestError(
      'Structured models take exactly one image, video or PDF per request.',
      'too_many_inputs',
      'images',
    );
  }
  if (named > 1) {
    throw new BadRequestError(
      'Send one input: `images`, `file_id` or `url`, not several.',
      'too_many_inputs',
      'file_id',
    );
  }
  const [image] = images;
  if (image !== undefined) return fromString(deps, image, imageParam);
  if (sources.fileId) {
    const { filename, stream } = await deps.openFile(principal, sources.fileId);
    return withType(await readAll(stream), filename);
  }
  if (sources.url) return fromUrl(deps, sources.url, 'url');
  throw new BadRequestError('No input: send `images`, `file_id` or `url`.', 'missing_input', null);
}

async function fromString(deps: InputResolverDeps, value: string, param: string): Promise<ExtractionInput> {
  const trimmed = value.trim();
  if (/^https?:\/\//i.test(trimmed)) return fromUrl(deps, trimmed, param);
  try {
    return withType(decodeDataUrl(trimmed).bytes, null);
  } catch (error) {
    if (!(error instanceof DataUrlError)) throw error;
    throw new BadRequestError(
      `The input is neither a URL nor valid base64 data: ${error.message}.`,
      'invalid_media',
      param,
    );
  }
}

async function fromUrl(deps: InputResolverDeps, url: string, param: string): Promise<ExtractionInput> {
  try {
    const fetched = await safeFetch(url, { ...deps.fetch, followRedirects: true });
    if (fetched.status < 200 || fetched.status >= 300) {
      throw new BadRequestError(`Fetching the URL gave HTTP ${fetched.status}.`, 'url_fetch_failed', param);
    }
    const name = new URL(fetched.finalUrl).pathname.split('/').pop() ?? null;
    return withType(fetched.body, name || null);
  } catch (error) {
    if (error instanceof AppError) throw error;
    if (error instanceof SafeFetchError) {
      if (error.kind === 'not_allowed') {
        throw new BadRequestError(`URL refused: ${error.message}.`, 'url_not_allowed', param);
      }
      if (error.kind === 'too_large') throw new PayloadTooLargeError(deps.fetch.maxBytes, 'The fetched resource');
      throw new BadRequestError(`Could not fetch the URL: ${error.message}.`, 'url_fetch_failed', param);
    }
    throw error;
  }
}

function withType(bytes: Buffer, filename: string | null): ExtractionInput {
  const sniffed = sniffMediaType(bytes);
  return {
    bytes,
    mimeType: sniffed.mimeType,
    family: sniffed.family === 'unknown' ? 'image' : sniffed.family,
    filename,
  };
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
