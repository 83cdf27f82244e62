/**
 * Decoding of inline inputs: `data:<type>;base64,<data>` URLs and bare base64 strings, as callers put them in JSON
 * bodies (`images: ["data:image/jpeg;base64,…"]`). Anything that is not well-formed base64 is refused before a
 * decoder ever sees it; callers turn the refusal into their own error (the generate endpoints: 400 `invalid_media`).
 */

/** Why a string is not a decodable data URL or base64; the message is safe to show to the caller. */
export class DataUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataUrlError';
  }
}

const invalidMedia = (reason: string): DataUrlError => new DataUrlError(reason);

const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** A decoded data URL (or bare base64 string, whose media type is unknown). */
export interface DecodedDataUrl {
  mediaType: string | null;
  bytes: Buffer;
}

/** Decodes a base64 `data:` URL or a bare base64 string; throws DataUrlError for anything else or empty data. */
export function decodeDataUrl(input: string): DecodedDataUrl {
  const trimmed = input.trim();
  let mediaType: string | null = null;
  let payload = trimmed;
  if (trimmed.startsWith('data:')) {
    const match = DATA_URL.exec(trimmed);
    const params = (match?.[2] ?? '').split(';').map((p) => p.trim().toLowerCase());
    if (!match || !params.includes('base64')) throw invalidMedia('only base64 data URLs are accepted');
    mediaType = (match[1] ?? '').trim().toLowerCase() || null;
    payload = match[3] ?? '';
  }
  const compact = payload.replace(/\s+/g, '');
  if (compact === '' || !BASE64.test(compact) || compact.replace(/=+$/, '').length % 4 === 1) {
    throw invalidMedia('the data is not valid base64');
  }
  return {
    mediaType,
    bytes: Buffer.from(compact, compact.includes('-') || compact.includes('_') ? 'base64url' : 'base64'),
  };
}
