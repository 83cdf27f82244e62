/**
 * Maps an upstream server's HTTP error to ours.
 *
 * The caller should see its own mistakes as 400s (with the upstream's message and `param`), and everything else as
 * the gateway's problem: a refused key or unknown model name is our configuration (502), an overloaded or
 * rate-limiting upstream is a 503 with `Retry-After`, an upstream timeout is a 504. Every message starts with
 * `[provider]` so operators can tell which server failed.
 */
import { AppError } from '../../domain/errors';
import { UpstreamError, UpstreamRejectedError, UpstreamUnavailableError } from '../gateway-errors';

/** The upstream's own words: `error.message` (OpenAI, vLLM), `detail` (FastAPI, Prism), `message`, or raw text. */
export function upstreamMessage(text: string): { message: string; param: string | null } {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { message: clip(text.trim()) || 'no message', param: null };
  }
  const o = body as {
    error?: unknown;
    detail?: unknown;
    message?: unknown;
  };
  const error = (typeof o.detail === 'object' && o.detail !== null ? (o.detail as { error?: unknown }).error : null) ??
    o.error ?? { message: o.detail ?? o.message };
  if (typeof error === 'string') return { message: clip(error), param: null };
  const e = error as { message?: unknown; param?: unknown };
  const message = typeof e.message === 'string' ? e.message : JSON.stringify(e.message ?? body);
  return { message: clip(message), param: typeof e.param === 'string' ? e.param : null };
}

/** The AppError for an upstream HTTP error status. */
export function mapUpstreamStatus(
  provider: string,
  status: number,
  bodyText: string,
  retryAfterHeader: string | null,
): AppError {
  const { message, param } = upstreamMessage(bodyText);
  const said = `(HTTP ${status}): ${message}`;
  if (status === 401 || status === 403) {
    return new UpstreamError(provider, `The upstream refused the gateway's credentials ${said}`);
  }
  if (status === 404) return new UpstreamError(provider, `The upstream does not know this model or route ${said}`);
  if (status === 429 || status === 503) {
    return new UpstreamUnavailableError(
      provider,
      `The upstream is busy ${said}`,
      retryAfterSeconds(retryAfterHeader) ?? 30,
    );
  }
  if (status === 408 || status === 504) {
    return new AppError(504, {
      message: `[${provider}] The upstream timed out ${said}`,
      type: 'timeout_error',
      code: 'deadline_exceeded',
    });
  }
  if (status >= 400 && status < 500) {
    return new UpstreamRejectedError(provider, `The upstream rejected the request ${said}`, param);
  }
  return new UpstreamError(provider, `The upstream failed ${said}`);
}

/** Seconds from a `Retry-After` header (seconds or an HTTP date), clamped to 1..3600; null when absent or bad. */
export function retryAfterSeconds(header: string | null, nowMs = Date.now()): number | null {
  if (header === null || header.trim() === '') return null;
  const seconds = /^\d+$/.test(header.trim()) ? Number(header) : (Date.parse(header) - nowMs) / 1000;
  if (!Number.isFinite(seconds)) return null;
  return Math.min(3600, Math.max(1, Math.ceil(seconds)));
}

function clip(text: string): string {
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}
