/**
 * A plain-HTTP SSE client for run events (docs/agent-runs.md): opens `GET …/events` (or a `stream: true` POST),
 * parses `id:`/`event:`/`data:` frames as they arrive, and hands them out one at a time, so a test reads a run's
 * events in order, notes the id of the last one it saw, and reconnects with `Last-Event-ID` as a browser would.
 */
import http from 'node:http';

export interface RunEventFrame {
  id: string;
  event: string;
  data: Record<string, unknown>;
}

export interface RunEventsClient {
  status: number;
  contentType: string;
  /** The next event (waits for it); throws when the stream ended first. */
  next(): Promise<RunEventFrame>;
  /** Reads events until one matches; returns every event read, the match last. */
  until(match: (event: RunEventFrame) => boolean): Promise<RunEventFrame[]>;
  /** Resolves when the server ended the stream. */
  ended: Promise<void>;
  close(): void;
}

export function openRunEvents(
  url: string,
  key: string,
  options: { lastEventId?: string | undefined; body?: unknown } = {},
): Promise<RunEventsClient> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${key}`, accept: 'text/event-stream' };
    if (options.lastEventId) headers['last-event-id'] = options.lastEventId;
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    if (payload) headers['content-type'] = 'application/json';
    const req = http.request(url, { method: payload ? 'POST' : 'GET', headers }, (res) => {
      const queue: RunEventFrame[] = [];
      const waiters: { resolve: (e: RunEventFrame) => void; reject: (e: Error) => void }[] = [];
      let buffer = '';
      let done = false;
      let endResolve: () => void = () => undefined;
      const ended = new Promise<void>((r) => (endResolve = r));
      const deliver = (frame: RunEventFrame): void => {
        const waiter = waiters.shift();
        if (waiter) waiter.resolve(frame);
        else queue.push(frame);
      };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let cut = buffer.indexOf('\n\n');
        while (cut >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          cut = buffer.indexOf('\n\n');
          let id = '';
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue;
            const at = line.indexOf(':');
            const field = at < 0 ? line : line.slice(0, at);
            const value = at < 0 ? '' : line.slice(at + 1).replace(/^ /, '');
            if (field === 'id') id = value;
            else if (field === 'event') event = value;
            else if (field === 'data') data.push(value);
          }
          if (data.length === 0) continue;
          deliver({ id, event, data: JSON.parse(data.join('\n')) as Record<string, unknown> });
        }
      });
      const finish = (): void => {
        done = true;
        endResolve();
        for (const waiter of waiters.splice(0)) waiter.reject(new Error('the event stream ended'));
      };
      res.on('end', finish);
      res.on('close', finish);
      const client: RunEventsClient = {
        status: res.statusCode ?? 0,
        contentType: String(res.headers['content-type'] ?? ''),
        next() {
          const queued = queue.shift();
          if (queued) return Promise.resolve(queued);
          if (done) return Promise.reject(new Error('the event stream ended'));
          return new Promise((resolveNext, rejectNext) => waiters.push({ resolve: resolveNext, reject: rejectNext }));
        },
        async until(match) {
          const seen: RunEventFrame[] = [];
          for (;;) {
            const event = await client.next();
            seen.push(event);
            if (match(event)) return seen;
          }
        },
        ended,
        close: () => req.destroy(),
      };
      resolve(client);
    });
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}
