/**
 * The WebSocket stream's error translator: an AppError (or anything thrown) as an `error` event.
 *
 * The HTTP error handler renders errors as response bodies; a stream cannot send a status, so the event carries
 * the same stable fields — `type`, `code`, `param`, the seconds to wait (`retry_after_s`) and, for validation
 * failures, the issues with their `loc` (which name the question at fault). Unknown errors become a generic
 * `internal_error` with nothing from inside, and are logged.
 */
import { AppError } from '../domain/errors';
import type { Logger } from '../lib/logger';
import type { ErrorEvent } from './decision-protocol';

/**
 * @param context.seq the frame the error is about
 * @param context.questionIds the ids of the question set being validated, so a `questions.<index>` path can name
 *   the question (`error.question`)
 */
export function toErrorEvent(
  error: unknown,
  logger: Logger,
  context: { seq?: number; questionIds?: readonly (string | undefined)[] } = {},
): ErrorEvent {
  const { seq } = context;
  const known = error instanceof AppError ? error : null;
  if (!known) logger.error('decision stream error', { error: String(error) });
  const rendered =
    known ??
    new AppError(500, {
      message: 'The server had an internal error while processing the message.',
      type: 'internal_server_error',
      code: 'internal_error',
    });
  const param = rendered.param ?? paramOfIssues(rendered);
  const question = questionNamed(param, context.questionIds ?? []);
  return {
    type: 'error',
    ...(seq === undefined ? {} : { seq }),
    error: {
      message: rendered.issues.length > 0 ? describeIssues(rendered) : rendered.message,
      type: rendered.type,
      code: rendered.code,
      param,
      ...(question === null ? {} : { question }),
      ...(rendered.retryAfterSeconds === undefined ? {} : { retry_after_s: rendered.retryAfterSeconds }),
      ...(rendered.issues.length > 0
        ? { issues: rendered.issues.map(({ type, loc, msg }) => ({ type, loc, msg })) }
        : {}),
    },
  };
}

/** `questions.2.options` for the first issue, without the `body` location. */
function paramOfIssues(error: AppError): string | null {
  const first = error.issues[0];
  if (!first) return null;
  const path = first.loc.slice(first.loc[0] === 'body' ? 1 : 0);
  return path.length > 0 ? path.join('.') : null;
}

function describeIssues(error: AppError): string {
  return error.issues
    .map((issue) => `${issue.loc.slice(issue.loc[0] === 'body' ? 1 : 0).join('.') || 'message'}: ${issue.msg}`)
    .join('; ');
}

/** The id of the question a `questions.<index>…` or `questions.<id>` param points at, if any. */
function questionNamed(param: string | null, ids: readonly (string | undefined)[]): string | null {
  const match = /^questions\.([^.]+)/.exec(param ?? '');
  if (!match?.[1]) return null;
  const part = match[1];
  if (/^\d+$/.test(part)) return ids[Number(part)] ?? null;
  return part;
}
