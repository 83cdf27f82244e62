/**
 * Cancellation across stateless requests. A `tools/call` runs on the server built for its POST; the client's
 * `notifications/cancelled` arrives in another POST, on another server that never saw the call. This registry maps
 * (caller, JSON-RPC request id) to the running call's server, so the cancel closes that server, which aborts the
 * tool's signal. It holds only calls in flight (entries leave when their response closes), so it needs no bound
 * beyond the number of open requests. Keys include the caller, so nobody can cancel someone else's call.
 *
 * With several replicas the cancel may reach another replica than the call: a cancel that names no call running
 * here is published on the signal bus (Redis pub/sub), and the replica running the call closes its server.
 */
import type { SignalBus } from '../signals/signal-bus';

type RequestId = string | number;

/** What runs a call: a 2025 server (closing it aborts its calls) or a 2026 request's abort (mcp-modern-http.ts). */
interface Closable {
  close(): Promise<void>;
}

export interface InFlightCalls {
  /** Records the tool calls in `body` as running on `server`; returns the function that forgets them. */
  track(caller: string, body: unknown, server: Closable): () => void;
  /** Closes the servers running the calls that the cancel notifications in `body` name. */
  cancel(caller: string, body: unknown): void;
  readonly size: number;
}

/** The bus channel cancels travel on between replicas: `{"key": "<caller>\0<type>:<id>"}`. */
const CANCEL_CHANNEL = 'mcp:cancel';

/** `signals` carries cancels to the other replicas; without it, cancels stay on this one. */
export function createInFlightCalls(signals?: SignalBus): InFlightCalls {
  const running = new Map<string, Closable>();
  const key = (caller: string, id: RequestId): string => `${caller}\u0000${typeof id}:${String(id)}`;
  const closeLocal = (k: string): boolean => {
    const server = running.get(k);
    if (server) void server.close();
    return server !== undefined;
  };
  signals?.subscribe(CANCEL_CHANNEL, (message) => {
    const parsed = JSON.parse(message) as { key?: unknown };
    if (typeof parsed.key === 'string') closeLocal(parsed.key);
  });
  return {
    track(caller, body, server) {
      const keys = messages(body)
        .filter((m) => m.method === 'tools/call' && isRequestId(m.id))
        .map((m) => key(caller, m.id as RequestId));
      for (const k of keys) running.set(k, server);
      return () => {
        for (const k of keys) if (running.get(k) === server) running.delete(k);
      };
    },
    cancel(caller, body) {
      for (const m of messages(body)) {
        const requestId = (m.params as { requestId?: unknown } | undefined)?.requestId;
        if (m.method !== 'notifications/cancelled' || !isRequestId(requestId)) continue;
        const k = key(caller, requestId);
        if (!closeLocal(k)) void signals?.publish(CANCEL_CHANNEL, JSON.stringify({ key: k })).catch(() => undefined);
      }
    },
    get size() {
      return running.size;
    },
  };
}

interface Message {
  method?: unknown;
  id?: unknown;
  params?: unknown;
}

function messages(body: unknown): Message[] {
  const list = Array.isArray(body) ? body : [body];
  return list.filter((m): m is Message => typeof m === 'object' && m !== null);
}

const isRequestId = (id: unknown): id is RequestId => typeof id === 'string' || typeof id === 'number';
