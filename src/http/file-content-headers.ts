/**
 * The headers a stored file is served with, on signed public links and on authenticated downloads alike.
 *
 * Files are uploaded by anyone (guests included) and served from the API's own origin, so a stored HTML or SVG
 * page opened inline would run its scripts with that origin: stored XSS. Only types a browser renders without
 * running caller code (raster images, PDF, audio, video) are served inline; everything else is an attachment.
 * Every response also forbids sniffing a different type and carries a sandboxing Content-Security-Policy, so even
 * a file whose declared type lies cannot become an active page.
 */
import type { FileRecord } from '../domain/file';

/** `type/subtype` essences served inline; SVG is deliberately absent (it is a script-capable document). */
const INLINE_TYPES =
  /^(?:image\/(?:png|jpeg|gif|webp|bmp|tiff|avif|heic|heif|x-icon)|application\/pdf|audio\/[\w.+-]+|video\/[\w.+-]+)$/;
/** A syntactically safe media type (token/token with optional parameters), else octet-stream is sent. */
const MEDIA_TYPE = /^[\w.+-]+\/[\w.+-]+(?:\s*;\s*[\w.+-]+=(?:[\w.+-]+|"[^"\\\r\n]*"))*$/;

export const FILE_CSP = "default-src 'none'; sandbox";

/** Headers for serving `file`'s bytes. */
export function contentHeaders(file: Pick<FileRecord, 'contentType' | 'bytes' | 'filename'>): Record<string, string> {
  const declared = file.contentType.trim();
  const contentType = MEDIA_TYPE.test(declared) ? declared : 'application/octet-stream';
  const essence = contentType.split(';')[0]!.trim().toLowerCase();
  const disposition = INLINE_TYPES.test(essence) ? 'inline' : 'attachment';
  return {
    'Content-Type': contentType,
    'Content-Length': String(file.bytes),
    'Content-Disposition': `${disposition}; filename*=UTF-8''${encodeRfc5987(file.filename)}`,
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': FILE_CSP,
  };
}

function encodeRfc5987(value: string): string {
  return encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
