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

/** What a connection is given: the service it opens sessions on, who is calling, its limits and the logger. */
export interface DecisionStreamDeps {
  service: DecisionsService;
  caller: DecisionCaller;
  options: DecisionStreamOptions;
  logger: Logger;
}

export function attachDecisionStream(socket: WebSocket, deps: DecisionStreamDeps): DecisionConnection {
  const stream = new DecisionStream(socket, deps);
  return {
    end: (reason) => stream.end(reason),
    closed: stream.closed,
    get framesHeld() {
      return stream.busy ? 1 : 0;
    },
  };
}

/** One connection's state (its session, the frame being decided, the counts, the idle timer) and its steps. */
class DecisionStream {
  private session: DecisionSession | null = null;
  private opening = false;
  /** A frame of this session is being decided. */
  busy = false;
  private seq = 0;
  private ended = false;
  private readonly counts = { received: 0, decided: 0, dropped: 0, failed: 0 };
  private idleTimer: NodeJS.Timeout | undefined;
  // Aborts a frame's upstream call when the client goes away.
  private readonly gone = new CancelController();
  readonly closed: Promise<void>;

  constructor(
    private readonly socket: WebSocket,
    private readonly deps: DecisionStreamDeps,
  ) {
    this.closed = new Promise<void>((resolve) =>
      socket.once('close', () => {
        this.ended = true;
        this.gone.abort();
        clearTimeout(this.idleTimer);
        resolve();
      }),
    );
    socket.on('message', (data: WebSocket.RawData, isBinary: boolean) => this.onMessage(data, isBinary));
    socket.on('error', (error) => deps.logger.warn('decision stream socket error', { error: String(error) }));
    this.touch();
  }

  private send(event: ServerEvent): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(JSON.stringify(event));
  }

  end(reason: SessionClosedEvent['reason']): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.idleTimer);
    this.send({ type: 'session.closed', reason, frames: { ...this.counts } });
    this.socket.close(1000, reason);
  }

  private touch(): void {
    clearTimeout(this.idleTimer);
    // A frame still being decided (an OCR read, an upstream call) is not idleness.
    this.idleTimer = setTimeout(
      () => (this.busy ? this.touch() : this.end('idle_timeout')),
      this.deps.options.idleTimeoutMs,
    );
    this.idleTimer.unref();
  }

  private onMessage(data: WebSocket.RawData, isBinary: boolean): void {
    if (this.ended) return;
    this.touch();
    const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
    if (isBinary) return this.onFrame(bytes);
    let parsed: unknown;
    try {
      parsed = JSON.parse(bytes.toString('utf8')) as unknown;
    } catch {
      this.send(
        toErrorEvent(
          new AppError(400, conflict('invalid_message', 'A text message must be one JSON object.')),
          this.deps.logger,
        ),
      );
      return;
    }
    void this.createSession(parsed);
  }

  private async createSession(raw: unknown): Promise<void> {
    const { service, caller, options, logger } = this.deps;
    let questionIds: (string | undefined)[] = [];
    try {
      const message = parseInput(clientMessageSchema, raw, 'body');
      if (message.type === 'session.close') return this.end('client_closed');
      if (this.session || this.opening) {
        throw new AppError(409, conflict('session_already_started', 'The session exists.'));
      }
      const settings = settingsOf(message);
      if (Array.isArray(settings.questions)) {
        questionIds = settings.questions.map((q: unknown) =>
          q && typeof q === 'object' && typeof (q as { id?: unknown }).id === 'string'
            ? (q as { id: string }).id
            : undefined,
        );
      }
      const parsed = parseInput(decisionSettingsSchema, settings, 'body');
      this.opening = true;
      const opened = await service.open(caller, parsed);
      this.opening = false;
      if (this.ended) return;
      this.session = opened;
      this.send({
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
      this.opening = false;
      this.send(toErrorEvent(error, logger, { questionIds }));
    }
  }

  private onFrame(frame: Buffer): void {
    const { options, logger } = this.deps;
    this.seq += 1;
    const n = this.seq;
    if (!this.session) {
      this.send(
        toErrorEvent(
          new AppError(409, conflict('session_not_started', 'Send session.create before the first frame.')),
          logger,
          { seq: n },
        ),
      );
      return;
    }
    this.counts.received += 1;
    if (frame.length > options.maxFrameBytes) {
      this.counts.failed += 1;
      this.send(toErrorEvent(new PayloadTooLargeError(options.maxFrameBytes, 'Frame'), logger, { seq: n }));
      return;
    }
    if (this.busy || this.socket.bufferedAmount > options.maxBufferedBytes) {
      this.counts.dropped += 1;
      this.send({ type: 'frame.dropped', seq: n, reason: this.busy ? 'engine_busy' : 'send_buffer_full' });
      return;
    }
    this.busy = true;
    const current = this.session;
    const started = performance.now();
    current
      .decide(frame, this.gone.signal)
      .then((outcome) => {
        this.counts.decided += 1;
        this.send({
          type: 'decision',
          session_id: current.id,
          seq: n,
          answers: outcome.answers,
          latency_ms: Math.round((performance.now() - started) * 100) / 100,
          usage: outcome.usage,
        });
      })
      .catch((error: unknown) => {
        this.counts.failed += 1;
        this.send(toErrorEvent(error, logger, { seq: n }));
      })
      .finally(() => {
        this.busy = false;
      });
  }
}

function conflict(code: 'session_already_started' | 'session_not_started' | 'invalid_message', message: string) {
  return { message, type: 'invalid_request_error', code };
}
