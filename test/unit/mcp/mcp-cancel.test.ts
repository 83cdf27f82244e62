/**
 * Cancellation of MCP tool calls: a client's cancel aborts the tool's signal on the server that runs the call, both
 * when the cancel reaches that server and when (stateless HTTP) it arrives in another request and is routed by the
 * in-flight registry. Uses a real McpServer and SDK Client over the SDK's in-memory transport.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { createLogger } from '../../../src/lib/logger';
import { createInFlightCalls } from '../../../src/mcp/mcp-in-flight';
import { createLocalSignalBus } from '../../../src/backend/local/signal-bus';
import { defineMcpTool, registerTools } from '../../../src/mcp/mcp-tool';

/** A server with one tool that runs until its signal aborts, and a client connected to it. */
async function setUp() {
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  let aborted!: () => void;
  const stopped = new Promise<void>((resolve) => (aborted = resolve));
  const tool = defineMcpTool({
    name: 'wait_forever',
    title: 'Wait',
    description: 'Waits until cancelled',
    input: z.object({}),
    output: z.object({ done: z.boolean() }),
    annotations: { readOnlyHint: true },
    needsAccount: false,
    run: (_args, ctx) =>
      new Promise(() => {
        started();
        ctx.signal.addEventListener('abort', () => aborted(), { once: true });
      }),
  });
  const server = new McpServer({ name: 'test', version: '1' });
  registerTools(server, [tool], {
    principal: { kind: 'anonymous', clientIp: '127.0.0.1' },
    requestId: 'req_test',
    baseUrl: 'http://localhost',
    logger: createLogger('silent'),
    toolsets: [],
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const sent: JSONRPCMessage[] = [];
  const send = clientSide.send.bind(clientSide);
  clientSide.send = (message, options) => {
    sent.push(message);
    return send(message, options);
  };
  await server.connect(serverSide);
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(clientSide);
  const callId = () => {
    const call = sent.find((m) => 'method' in m && m.method === 'tools/call');
    return call && 'id' in call ? call.id : undefined;
  };
  return { server, client, running, stopped, callId };
}

describe('MCP cancellation', () => {
  it('aborts the tool signal when the client cancels the call', async () => {
    const { client, running, stopped } = await setUp();
    const controller = new AbortController();
    const call = client.callTool({ name: 'wait_forever', arguments: {} }, undefined, { signal: controller.signal });
    await running;
    controller.abort('user pressed stop');
    await expect(call).rejects.toThrow();
    await stopped;
    await client.close();
  });

  it('routes a cancel that arrives in another request to the server running the call, for that caller only', async () => {
    const { server, client, running, stopped, callId } = await setUp();
    const inFlight = createInFlightCalls();
    const call = client.callTool({ name: 'wait_forever', arguments: {} });
    await running;
    const id = callId();
    expect(id).toBeDefined();
    const forget = inFlight.track('caller-a', { jsonrpc: '2.0', id, method: 'tools/call', params: {} }, server);
    expect(inFlight.size).toBe(1);

    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } };
    inFlight.cancel('caller-b', cancel);
    let abortedEarly = false;
    void stopped.then(() => (abortedEarly = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(abortedEarly).toBe(false);

    inFlight.cancel('caller-a', [cancel]);
    await stopped;
    await expect(call).rejects.toThrow();
    forget();
    expect(inFlight.size).toBe(0);
    await client.close();
  });

  it('carries a cancel to the replica running the call over the signal bus, for that caller only', async () => {
    const { server, client, running, stopped, callId } = await setUp();
    const bus = createLocalSignalBus();
    const replicaA = createInFlightCalls(bus);
    const replicaB = createInFlightCalls(bus);
    const call = client.callTool({ name: 'wait_forever', arguments: {} });
    await running;
    const id = callId();
    replicaA.track('caller-a', { jsonrpc: '2.0', id, method: 'tools/call', params: {} }, server);
    const published: string[] = [];
    bus.subscribe('mcp:cancel', (message) => published.push(message));

    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } };
    replicaB.cancel('caller-b', cancel);
    let abortedEarly = false;
    void stopped.then(() => (abortedEarly = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(abortedEarly).toBe(false);
    expect(published).toHaveLength(1);

    replicaB.cancel('caller-a', cancel);
    await stopped;
    await expect(call).rejects.toThrow();
    await client.close();
    await bus.close();
  });
});
