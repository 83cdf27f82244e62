/**
 * One WebSocket connection of the decision stream: the session state machine and its backpressure.
 *
 * A connection has at most one session. Until `session.create` succeeds every frame is refused with an `error`
 * event; after it, every binary message gets exactly one reply: a `decision`, an `error` naming its `seq` (a
 * malformed or oversized frame, an exhausted budget — the session goes on), or `frame.dropped`. A frame is
 * dropped, never queued, when the engine is still deciding an earlier frame of this session or when the socket
 * already holds more than `maxBufferedBytes` of unsent events, so a connection holds at most one frame at a time
 * however fast the sender is. An idle connection is closed with `session.closed` (`idle_timeout`).
 */
import type WebSocket from 'ws';
import { AppError, PayloadTooLargeError } from '../domain/errors';
import { decisionSettingsSchema } from '../gateway/decisions/decision-request';
import type { DecisionCaller, DecisionSession, DecisionsService } from '../gateway/decisions/decisions.service';
import { CancelController } from '../lib/cancel';
import type { Logger } from '../lib/logger';
import { parseInput } from '../wire/validation';
import { clientMessageSchema, settingsOf, type ServerEvent, type SessionClosedEvent } from './decision-protocol';
import { toErrorEvent } from './ws-error-event';

export interface DecisionStreamOptions {
  /** Largest frame decided; larger ones get a `payload_too_large` error event. */
  maxFrameBytes: number;
  /** Close a connection that sent nothing for this long. */
  idleTimeoutMs: number;
  /** Drop frames while more than this many bytes of events wait in the socket's send buffer. */
  maxBufferedBytes: number;
}

/** What the upgrade handler keeps of a connection: a way to end it on shutdown. */
export interface DecisionConnection {
  /** Send `session.closed` with `reason` and close the socket. */
  end(reason: SessionClosedEvent['reason']): void;
  readonly closed: Promise<void>;
  /** Frames this connection holds right now (0 or 1): the memory bound the tests check. */
  readonly framesHeld: number;
}

export function attachDecisionStream(
  socket: WebSocket,
  deps: { service: DecisionsService; caller: DecisionCaller; options: DecisionStreamOptions; logger: Logger },
): DecisionConnection {
  const { service, caller, options, logger } = deps;
  let session: DecisionSession | null = null;
  let opening = false;
  let busy = false;
  let seq = 0;
  let ended = false;
  const counts = { received: 0, decided: 0, dropped: 0, failed: 0 };
  let idleTimer: NodeJS.Timeout | undefined;

  const send = (event: ServerEvent): void => {
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(event));
  };
  const end = (reason: SessionClosedEvent['reason']): void => {
    if (ended) return;
    ended = true;
    clearTimeout(idleTimer);
    send({ type: 'session.closed', reason, frames: { ...counts } });
    socket.close(1000, reason);
  };
  const touch = (): void => {
    clearTimeout(idleTimer);
    // A frame still being decided (an OCR read, an upstream call) is not idleness.
    idleTimer = setTimeout(() => (busy ? touch() : end('idle_timeout')), options.idleTimeoutMs);
    idleTimer.unref();
  };
  // Aborts a frame's upstream call when the client goes away.
  const gone = new CancelController();
  const closed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      ended = true;
      gone.abort();
      clearTimeout(idleTimer);
      resolve();
    }),
  );

  async function createSession(raw: unknown): Promise<void> {
    let questionIds: (string | undefined)[] = [];
    try {
      const message = parseInput(clientMessageSchema, raw, 'body');
      if (message.type === 'session.close') return end('client_closed');
      if (session || opening) throw new AppError(409, conflict('session_already_started', 'The session exists.'));
      const settings = settingsOf(message);
      if (Array.isArray(settings.questions)) {
        questionIds = settings.questions.map((q: unknown) =>
          q && typeof q === 'object' && typeof (q as { id?: unknown }).id === 'string'
            ? (q as { id: string }).id
            : undefined,
        );
      }
      const parsed = parseInput(decisionSettingsSchema, settings, 'body');
      opening = true;
      const opened = await service.open(caller, parsed);
      opening = false;
      if (ended) return;
      session = opened;
      send({
        type: 'session.created',
        session: {
          id: opened.id,
          model: opened.model,
          upstream_model: opened.upstreamModel,
          questions: opened.routes.map((r) => ({
            id: r.id,
            type: parsed.questions.find((q) => q.id === r.id)?.type ?? 'string',
            route: r.route,
            kind: r.kind,
          })),
          max_frame_bytes: options.maxFrameBytes,
          idle_timeout_s: options.idleTimeoutMs / 1000,
        },
      });
    } catch (error) {
      opening = false;
      send(toErrorEvent(error, logger, { questionIds }));
    }
  }

  function onFrame(frame: Buffer): void {
    seq += 1;
    const n = seq;
    if (!session) {
      send(
        toErrorEvent(
          new AppError(409, conflict('session_not_started', 'Send session.create before the first frame.')),
          logger,
          { seq: n },
        ),
      );
      return;
    }
    counts.received += 1;
    if (frame.length > options.maxFrameBytes) {
      counts.failed += 1;
      send(toErrorEvent(new PayloadTooLargeError(options.maxFrameBytes, 'Frame'), logger, { seq: n }));
      return;
    }
    if (busy || socket.bufferedAmount > options.maxBufferedBytes) {
      counts.dropped += 1;
      send({ type: 'frame.dropped', seq: n, reason: busy ? 'engine_busy' : 'send_buffer_full' });
      return;
    }
    busy = true;
    const current = session;
    const started = performance.now();
    current
      .decide(frame, gone.signal)
      .then((outcome) => {
        counts.decided += 1;
        send({
          type: 'decision',
          session_id: current.id,
          seq: n,
          answers: outcome.answers,
          latency_ms: Math.round((performance.now() - started) * 100) / 100,
          usage: outcome.usage,
        });
      })
      .catch((error: unknown) => {
        counts.failed += 1;
        send(toErrorEvent(error, logger, { seq: n }));
      })
      .finally(() => {
        busy = false;
      });
  }

  socket.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
    if (ended) return;
    touch();
    const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
    if (isBinary) return onFrame(bytes);
    let parsed: unknown;
    try {
      parsed = JSON.parse(bytes.toString('utf8')) as unknown;
    } catch {
      send(
        toErrorEvent(new AppError(400, conflict('invalid_message', 'A text message must be one JSON object.')), logger),
      );
      return;
    }
    void createSession(parsed);
  });
  socket.on('error', (error) => logger.warn('decision stream socket error', { error: String(error) }));
  touch();

  return {
    end,
    closed,
    get framesHeld() {
      return busy ? 1 : 0;
    },
  };
}

function conflict(code: 'session_already_started' | 'session_not_started' | 'invalid_message', message: string) {
  return { message, type: 'invalid_request_error', code };
}
