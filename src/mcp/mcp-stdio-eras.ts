/**
 * Both MCP eras on `prism mcp`'s one pipe. The first message of a connection chooses: one carrying the 2026-07-28
 * per-request `_meta` envelope claim (a `server/discover` probe, or a client that already knows the era) is served
 * by the v2 SDK's `serveStdio` (strict modern: it checks each request's envelope); anything else (the 2025
 * `initialize` handshake) by the v1 server as before. A stdio connection is one client for its life, so the era is
 * chosen once per connection, as the SDK's own stdio entry does, not per message.
 *
 * `EraSplitter` sits on the size-limited transport (mcp-stdio-transport.ts), holds the first message until a
 * server is connected, and hands the chosen server a transport that forwards to the pipe; every message delivered
 * runs through `wrap` (the per-message work budget).
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The `_meta` key whose presence claims the per-request (2026-07-28) era. */
export const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';

/** Whether a message claims the modern era (its `_meta` names a protocol version, as only 2026 clients send). */
export function claimsModernEra(message: unknown): boolean {
  const params = (message as { params?: { _meta?: Record<string, unknown> } } | null)?.params;
  return typeof params?._meta?.[PROTOCOL_VERSION_META_KEY] === 'string';
}

/** The transport a chosen server is connected to: the pipe, with the held first message delivered on start. */
class ForwardingTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private started = false;
  private held: JSONRPCMessage[] = [];

  constructor(
    private readonly pipe: Transport,
    private readonly wrap: (deliver: () => void) => void,
  ) {}

  async start(): Promise<void> {
    this.started = true;
    const held = this.held;
    this.held = [];
    // After the server has set its handlers (it does so before start resolves).
    queueMicrotask(() => held.forEach((message) => this.deliver(message)));
  }

  deliver(message: JSONRPCMessage): void {
    if (!this.started) {
      this.held.push(message);
      return;
    }
    this.wrap(() => this.onmessage?.(message));
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.pipe.send(message);
  }

  close(): Promise<void> {
    return this.pipe.close();
  }
}

/**
 * Starts `pipe`, waits for its first message, and calls `choose(modern, transport)` once: the caller connects the
 * era's server to `transport`. Resolves when the choice is made (or never, if the pipe closes first).
 */
export async function splitEras(
  pipe: Transport,
  wrap: (deliver: () => void) => void,
  choose: (modern: boolean, transport: Transport) => Promise<void>,
): Promise<void> {
  const forward = new ForwardingTransport(pipe, wrap);
  let chosen: Promise<void> | null = null;
  pipe.onmessage = (message) => {
    forward.deliver(message);
    chosen ??= choose(claimsModernEra(message), forward);
  };
  pipe.onclose = () => forward.onclose?.();
  pipe.onerror = (error) => forward.onerror?.(error);
  await pipe.start();
}
