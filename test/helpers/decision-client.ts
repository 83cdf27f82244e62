/**
 * A decision-stream client for tests, on the real `ws` package: connects (with a key or anonymously), parses every
 * event with the protocol's zod schema (so a malformed event fails the test), and lets a test wait for the next
 * event that matches.
 */
import WebSocket from 'ws';
import { serverEventSchema, type ServerEvent } from '../../src/ws/decision-protocol';

export interface StreamClient {
  ws: WebSocket;
  events: ServerEvent[];
  /** Resolves with the first event (already received or still to come) after `from` that matches. */
  next<T extends ServerEvent['type']>(
    type: T,
    match?: (event: Extract<ServerEvent, { type: T }>) => boolean,
  ): Promise<Extract<ServerEvent, { type: T }>>;
  send(message: unknown): void;
  sendFrame(frame: Buffer): Promise<void>;
  closed: Promise<{ code: number; reason: string }>;
  close(): Promise<void>;
}

export function streamUrl(baseUrl: string, path = '/v1/compat/decisions/stream'): string {
  return `${baseUrl.replace(/^http/, 'ws')}${path}`;
}

/** Connects; rejects with `{status, body}` when the server refuses the upgrade. */
export async function connectStream(baseUrl: string, key?: string, path?: string): Promise<StreamClient> {
  const ws = new WebSocket(
    streamUrl(baseUrl, path),
    key === undefined ? {} : { headers: { authorization: `Bearer ${key}` } },
  );
  const events: ServerEvent[] = [];
  const waiters: { test: (e: ServerEvent) => boolean; resolve: (e: ServerEvent) => void; seen: number }[] = [];
  ws.on('message', (data, isBinary) => {
    if (isBinary) throw new Error('the server sent a binary message');
    const event = serverEventSchema.parse(JSON.parse((data as Buffer).toString('utf8')));
    events.push(event);
    for (const waiter of [...waiters]) {
      if (waiter.test(event)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(event);
      }
    }
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () =>
        reject(Object.assign(new Error('refused'), { status: res.statusCode, body, headers: res.headers })),
      );
    });
    ws.once('error', reject);
  });
  const consumed = new Set<ServerEvent>();
  return {
    ws,
    events,
    next(type, match) {
      const test = (e: ServerEvent): boolean => !consumed.has(e) && e.type === type && (match?.(e as never) ?? true);
      const found = events.find(test);
      const take = (e: ServerEvent) => {
        consumed.add(e);
        return e as never;
      };
      if (found) return Promise.resolve(take(found));
      return new Promise((resolve) => waiters.push({ test, resolve: (e) => resolve(take(e)), seen: events.length }));
    },
    send: (message) => ws.send(JSON.stringify(message)),
    sendFrame: (frame) =>
      new Promise<void>((resolve, reject) =>
        ws.send(frame, { binary: true }, (error) => (error ? reject(error) : resolve())),
      ),
    closed,
    async close() {
      if (ws.readyState === WebSocket.OPEN) ws.close();
      await closed;
    },
  };
}
