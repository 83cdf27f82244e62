/**
 * The MCP eras' figures for bench/mcp.bench.ts (issue #44, "Figures"): per-request overhead of a 2026-07-28
 * `tools/call` against the same call in the 2025-11-25 era and against a bare v2 server (`@modelcontextprotocol/
 * server`'s `createMcpHandler` on plain node:http, one tool answering the very result Prism answers, no Prism logic:
 * no auth, toolsets, budget or services), all three over loopback HTTP in one run; and `tasks/get` of an extraction
 * task against the same record read by `tools/call get_prediction`, whose subject median is the tasks/get p50; and
 * the same `tasks/get` in the 2025-11-25 experimental tasks (src/mcp/mcp-legacy-tasks.ts) against the modern one.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, Server } from '@modelcontextprotocol/server';
import type { BenchCase } from './harness';

const MODERN = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const ACCEPT = 'application/json, text/event-stream';

export interface EraBenchTarget {
  /** Prism's base URL and a key. */
  url: string;
  key: string;
  /** A stored prediction of the key's organisation. */
  predictionId: string;
}

/** The modern request envelope (`_meta`) and headers a 2026-07-28 client sends. */
function modernRequest(method: string, params: Record<string, unknown>, name: string): RequestInit {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
  };
  return {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: ACCEPT,
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      'mcp-name': name,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } }),
  };
}

async function answered(url: string, init: RequestInit, key?: string): Promise<string> {
  const headers = { ...(init.headers as Record<string, string>), ...(key ? { authorization: `Bearer ${key}` } : {}) };
  const res = await fetch(url, { ...init, headers });
  const text = await res.text();
  if (res.status !== 200 || text.includes('"error"') || text.includes('"isError":true')) {
    throw new Error(`MCP answered ${res.status}: ${text.slice(0, 300)}`);
  }
  return text;
}

/** A bare v2 server with one tool, `get_prediction`, answering `result` as it is. */
async function startBareServer(result: Record<string, unknown>): Promise<{ url: string; close(): Promise<void> }> {
  const handler = createMcpHandler(
    () => {
      const server = new Server({ name: 'bare', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler('tools/list', () => ({ tools: [] }));
      server.setRequestHandler('tools/call', () => result as never);
      return server;
    },
    { legacy: 'reject', responseMode: 'auto' },
  );
  const plain = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === 'string' && name !== 'content-length' && name !== 'connection') headers.set(name, value);
      }
      const request = new Request(`http://127.0.0.1${req.url ?? '/'}`, {
        method: 'POST',
        headers,
        body: Buffer.concat(chunks),
      });
      void handler.fetch(request).then(async (response) => {
        res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
        res.end(Buffer.from(await response.arrayBuffer()));
      });
    });
  });
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(plain.address() as AddressInfo).port}/mcp`,
    close: () => new Promise<void>((resolve) => plain.close(() => resolve())),
  };
}

export async function mcpEraCases(target: EraBenchTarget): Promise<{ cases: BenchCase[]; close: () => Promise<void> }> {
  const mcpUrl = `${target.url}/mcp`;
  const args = { id: target.predictionId };
  const modernCall = modernRequest('tools/call', { name: 'get_prediction', arguments: args }, 'get_prediction');
  const legacyCall: RequestInit = {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: ACCEPT },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'get_prediction', arguments: args },
    }),
  };
  const modernText = await answered(mcpUrl, modernCall, target.key);
  const legacyText = await answered(mcpUrl, legacyCall, target.key);
  // The bare server answers what Prism's modern era answered (the result object, byte for byte).
  const parsed = JSON.parse(modernText.startsWith('{') ? modernText : modernText.replace(/^[\s\S]*?data: /, '')) as {
    result: Record<string, unknown>;
  };
  const bare = await startBareServer(parsed.result);
  const bareCall = modernRequest('tools/call', { name: 'get_prediction', arguments: args }, 'get_prediction');
  const bareText = await answered(bare.url, bareCall);
  const taskGet = modernRequest('tasks/get', { taskId: `prediction:${target.predictionId}` }, '');
  (taskGet.headers as Record<string, string>)['mcp-name'] = `prediction:${target.predictionId}`;
  await answered(mcpUrl, taskGet, target.key);
  // The same task in the 2025-11-25 experimental tasks (src/mcp/mcp-legacy-tasks.ts): the v1 SDK's handler.
  const legacyTaskGet: RequestInit = {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tasks/get',
      params: { taskId: `prediction:${target.predictionId}` },
    }),
  };
  await answered(mcpUrl, legacyTaskGet, target.key);
  const bytes = (text: string): number => Buffer.byteLength(text);

  const cases: BenchCase[] = [
    {
      name: `MCP tools/call get_prediction: 2026-07-28 (${bytes(modernText)} B) vs 2025-11-25 (${bytes(legacyText)} B)`,
      iterations: 300,
      warmup: 30,
      baseline: {
        name: '2025-11-25 POST /mcp',
        run: async () => void (await answered(mcpUrl, legacyCall, target.key)),
      },
      subject: { name: '2026-07-28 POST /mcp', run: async () => void (await answered(mcpUrl, modernCall, target.key)) },
    },
    {
      name: `MCP tools/call 2026-07-28: Prism vs a bare v2 server answering the same result (${bytes(bareText)} B)`,
      iterations: 300,
      warmup: 30,
      baseline: {
        name: 'bare @modelcontextprotocol/server',
        run: async () => void (await answered(bare.url, bareCall)),
      },
      subject: { name: 'Prism POST /mcp', run: async () => void (await answered(mcpUrl, modernCall, target.key)) },
    },
    {
      name: 'MCP tasks/get of an extraction task (subject median = tasks/get p50) vs tools/call get_prediction',
      iterations: 300,
      warmup: 30,
      baseline: {
        name: 'tools/call get_prediction',
        run: async () => void (await answered(mcpUrl, modernCall, target.key)),
      },
      subject: { name: 'tasks/get', run: async () => void (await answered(mcpUrl, taskGet, target.key)) },
    },
    {
      name: 'MCP tasks/get of an extraction task: 2025-11-25 (subject median = its p50) vs 2026-07-28',
      iterations: 300,
      warmup: 30,
      baseline: {
        name: '2026-07-28 tasks/get',
        run: async () => void (await answered(mcpUrl, taskGet, target.key)),
      },
      subject: {
        name: '2025-11-25 tasks/get',
        run: async () => void (await answered(mcpUrl, legacyTaskGet, target.key)),
      },
    },
  ];
  return { cases, close: () => bare.close() };
}
