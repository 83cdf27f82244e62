/**
 * The one SSE writer (docs/architecture.md): every streamed response goes through here.
 *
 * Frames are `data: <json>\n\n` ending with `data: [DONE]\n\n`. `pipe` takes chunks in batches (those of one
 * upstream network read) and reads the FIRST batch before writing anything, so a failure before it (a
 * first-token timeout, a 4xx from upstream) is still a normal JSON error with its real status; after it, a
 * failure becomes one `data: {"error":{…}}` frame and `[DONE]`. A batch's frames are written (and flushed) as one
 * string, a full socket buffer is awaited (`drain`), and a client that goes away aborts `signal` so the work
 * feeding the stream stops too. Frames written in the same turn of the event loop leave in one socket write: the
 * sink is corked until the turn ends, not held back any longer.
 *
 * The writer has no getters on purpose: V8 gives an object literal with an accessor a hidden class of its own, in
 * the old generation, and that class keeps the closure's context (so the response and everything it references)
 * alive through young collections. With one getter here the gateway promoted 1.4 MB per young GC under streaming
 * load; without it, 0.33 MB (`--trace-gc-nvp`, README "Performance").
 */
import { AppError } from '../domain/errors';
import { CancelController, type CancelSignal } from '../lib/cancel';
import { extend } from '../lib/extend';
import { RawJson } from '../lib/raw-json';

/** The slice of `http.ServerResponse` (and so express's `Response`) the writer uses. */
export interface SseSink {
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  readonly writableFinished: boolean;
  readonly destroyed: boolean;
  writeHead(status: number, headers: Record<string, string>): unknown;
  write(chunk: string): boolean;
  end(): unknown;
  /** Present when a compression middleware buffers output. */
  flush?: () => void;
  cork?: () => void;
  uncork?: () => void;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
}

/** How a piped stream ended. */
export type SseOutcome = 'completed' | 'failed' | 'disconnected';

export interface SseWriter {
  /** Aborts when the client disconnects before the stream ends. Pass it to the work that produces chunks. */
  readonly signal: CancelSignal;
  /** Write the status line and headers (once). */
  start(headers?: Record<string, string>): void;
  /** Write one `data:` frame; resolves false when the client is gone. */
  send(data: unknown): Promise<boolean>;
  /** Write an error frame, then `[DONE]`, and end. */
  fail(error: unknown): Promise<void>;
  /** Write `[DONE]` and end. */
  end(): Promise<void>;
  /**
   * Stream `batches` of chunks: the first batch is read before anything is written (so errors before it
   * propagate to the caller, for a JSON error response), then headers, then every chunk, each batch in one write,
   * then `[DONE]`. Later errors become an error frame. On disconnect the source is closed (`return()`).
   */
  pipe(batches: AsyncIterable<readonly unknown[]>, headers?: Record<string, string>): Promise<SseOutcome>;
}

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};

export interface SseWriterOptions {
  /** Repeated as `request_id` in error frames. */
  requestId?: string;
}

export function createSseWriter(res: SseSink, options: SseWriterOptions = {}): SseWriter {
  const controller = new CancelController();
  const onClose = (): void => {
    if (!res.writableFinished) controller.abort();
  };
  res.once('close', onClose);
  const gone = (): boolean => controller.signal.aborted || res.destroyed || res.writableEnded;
  let corked = false;
  const uncork = (): void => {
    corked = false;
    res.uncork?.();
  };

  const write = async (frame: string): Promise<boolean> => {
    if (gone()) return false;
    if (!corked && res.cork) {
      corked = true;
      res.cork();
      process.nextTick(uncork);
    }
    const flushed = res.write(frame);
    res.flush?.();
    if (!flushed && !gone()) await drained(res);
    return !gone();
  };
  const finish = async (): Promise<void> => {
    await write('data: [DONE]\n\n');
    res.off('close', onClose);
    if (!res.writableEnded && !res.destroyed) res.end();
  };

  const writer: SseWriter = {
    signal: controller.signal,
    start(headers = {}) {
      if (!res.headersSent) res.writeHead(200, extend(SSE_HEADERS, headers));
    },
    async send(data) {
      writer.start();
      return write(frame(data));
    },
    async fail(error) {
      writer.start();
      await write(frame({ error: errorFrame(error, options.requestId) }));
      await finish();
    },
    async end() {
      writer.start();
      await finish();
    },
    async pipe(batches, headers) {
      const iterator = batches[Symbol.asyncIterator]();
      const first = await iterator.next();
      writer.start(headers);
      let next = first;
      try {
        while (!next.done) {
          let frames = '';
          for (const chunk of next.value) frames += frame(chunk);
          if (frames !== '' && !(await write(frames))) break;
          next = await iterator.next();
        }
      } catch (error) {
        if (gone()) return 'disconnected';
        await writer.fail(error);
        return 'failed';
      }
      if (!next.done || gone()) {
        await iterator.return?.();
        return 'disconnected';
      }
      await writer.end();
      return 'completed';
    },
  };
  return writer;
}

/** One `data:` frame; a RawJson (a relayed upstream chunk) is written as the text it arrived in. */
function frame(data: unknown): string {
  return `data: ${data instanceof RawJson ? data.text : JSON.stringify(data)}\n\n`;
}

/** The error object of a mid-stream error frame: the AppError's wire fields, or a generic 500 that leaks nothing. */
export function errorFrame(error: unknown, requestId?: string): Record<string, unknown> {
  const fields =
    error instanceof AppError
      ? { message: error.message, type: error.type, code: error.code, param: error.param, ...error.extra }
      : {
          message: 'The server had an internal error while processing the request.',
          type: 'internal_server_error',
          code: 'internal_error',
          param: null,
        };
  return requestId === undefined ? fields : { ...fields, request_id: requestId };
}

function drained(res: SseSink): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}
