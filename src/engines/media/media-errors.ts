/**
 * Turns ffmpeg/ffprobe failures into errors a caller can act on.
 *
 * Undecodable, truncated, oversized or too-slow media is the caller's problem: 400 `invalid_media`, with the tool's
 * last message stripped of temp paths and memory addresses. A binary that cannot be started is ours and stays a
 * plain Error (500), so operators see it in the log instead of callers being told their file is bad.
 */
import { BadRequestError } from '../../domain/errors';
import { ToolRunError } from './run-tool';

/** 400 `invalid_media` with a message safe to show to the caller. */
export function invalidMedia(message: string): BadRequestError {
  return new BadRequestError(message, 'invalid_media');
}

/** Maps a failed tool run on `inputPath` to `invalid_media`; other errors pass through unchanged. */
export function toMediaError(err: unknown, inputPath: string, what: string): Error {
  if (!(err instanceof ToolRunError) || err.reason === 'spawn') {
    return err instanceof Error ? err : new Error(String(err));
  }
  switch (err.reason) {
    case 'timeout':
      return invalidMedia(`The ${what} took too long to decode (${err.message})`);
    case 'output-limit':
      return invalidMedia(`The ${what} decodes to more data than allowed (${err.message})`);
    case 'exit':
      return invalidMedia(`The ${what} could not be decoded: ${lastMessage(err.stderrTail, inputPath, err.message)}`);
  }
}

/** ffmpeg's summary and progress lines, which never explain a failure. */
const NOISE = /^(Conversion failed!|Last message repeated|frame=|video:|size=|Stream mapping:|Press \[q\])/;

/** The last meaningful stderr line, without the temp path, `[demuxer @ 0x…]` prefixes or trailing noise. */
export function lastMessage(stderr: string, inputPath: string, fallback = 'unknown error'): string {
  const lines = stderr
    .split(/\r?\n/)
    .filter((l) => !l.startsWith('[showinfo@'))
    .map((l) =>
      l
        .split(inputPath)
        .join('input')
        .replace(/\[[^\]]*@ 0x[0-9a-f]+\]\s*/gi, '')
        .replace(/(^|\s)\/[^\s:'"]+/g, '$1…')
        .trim(),
    )
    .filter((l) => l.length > 0 && !NOISE.test(l));
  const last = lines.at(-1) ?? fallback;
  return last.length > 200 ? `${last.slice(0, 200)}…` : last;
}
