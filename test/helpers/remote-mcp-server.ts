/**
 * A second MCP server for agent tests (the company's own server an agent is pointed at): the official SDK's
 * McpServer over Streamable HTTP (stateless, JSON answers) on 127.0.0.1, behind a bearer key. Its tools: a ticket
 * lookup, one that never answers, and one whose answer is `hugeBytes` long. It records the calls it received.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface RemoteMcpServer {
  url: string;
  /** Tool calls received: name and arguments. */
  calls: { name: string; args: Record<string, unknown> }[];
  /** Requests refused for a missing or wrong key. */
  refused: number;
  /** The `traceparent` header of each request that carried one. */
  traceparents: string[];
  close(): Promise<void>;
}

export async function startRemoteMcpServer(options: { key: string; hugeBytes: number }): Promise<RemoteMcpServer> {
  const calls: RemoteMcpServer['calls'] = [];
  const hanging = new Set<() => void>();
  let refused = 0;
  const traceparents: string[] = [];
  const build = (): McpServer => {
    const server = new McpServer({ name: 'tickets', version: '1.0.0' });
    server.registerTool(
      'lookup_ticket',
      {
        description: 'Looks a support ticket up by its id and says its status.',
        inputSchema: { id: z.string().regex(/^T-\d+$/) },
      },
      (args) => {
        calls.push({ name: 'lookup_ticket', args });
        return { content: [{ type: 'text', text: `Ticket ${args.id}: printer on floor 3 is jammed; status open.` }] };
      },
    );
    server.registerTool('hang', { description: 'Never answers (a tool stuck on its own backend).' }, () => {
      calls.push({ name: 'hang', args: {} });
      return new Promise((resolve) => {
        hanging.add(() => resolve({ content: [{ type: 'text', text: 'late' }] }));
      });
    });
    server.registerTool('huge', { description: 'Answers with a very large text (an export gone wrong).' }, () => {
      calls.push({ name: 'huge', args: {} });
      return { content: [{ type: 'text', text: 'x'.repeat(options.hugeBytes) }] };
    });
    return server;
  };
  const httpServer = http.createServer((req, res) => {
    if (typeof req.headers.traceparent === 'string') traceparents.push(req.headers.traceparent);
    if (req.headers.authorization !== `Bearer ${options.key}`) {
      refused += 1;
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body: unknown = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
      const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
      const server = build();
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      void server.connect(transport).then(() => transport.handleRequest(req, res, body));
    });
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const { port } = httpServer.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    traceparents,
    get refused() {
      return refused;
    },
    async close() {
      for (const release of hanging) release();
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}
