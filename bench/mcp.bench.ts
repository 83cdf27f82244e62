/**
 * MCP benchmarks: what `/mcp` adds per request and per tool call, and what the toolsets save on `tools/list`.
 * - an SDK client's `listTools` with the default toolsets against every toolset (bytes in the case names);
 * - one stateless `tools/list` POST (Host check, auth, a fresh McpServer + transport, SSE answer) against a plain
 *   node:http server answering the same bytes (the loopback and HTTP floor);
 * - `tools/call get_prediction` over HTTP against the REST `GET /v1/predictions/{id}` of the same record;
 * - the same tool call in process (a fresh server per call over the SDK's in-memory transport, as HTTP builds one)
 *   against calling the predictions service directly: the MCP layer alone (JSON-RPC, zod in and out, text copy);
 * - the eras (mcp-eras.bench-cases.ts): a 2026-07-28 `tools/call` against the same call in 2025-11-25 and against a
 *   bare v2 server answering the same result, and `tasks/get` (its p50) against `tools/call get_prediction`.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { loadConfig } from '../src/config/config';
import { defaultPredictionRequest } from '../src/domain/prediction';
import { toPredictionWire } from '../src/wire/predictions.schemas';
import { startServer } from '../src/http-server';
import { mcpServicesOf } from '../src/container/mcp-services';
import { createMcpServerFactory } from '../src/mcp/mcp-server';
import { MCP_TOOLSETS } from '../src/mcp/mcp-toolsets';
import type { BenchCase } from './harness';
import { mcpEraCases } from './mcp-eras.bench-cases';
import { renderReceiptImage } from '../test/helpers/media-fixtures';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

export async function mcpBenchmarks(): Promise<{
  cases: BenchCase[];
  notes: () => Promise<string[]>;
  close: () => Promise<void>;
}> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-bench-mcp-'));
  // Limits high enough for the run: the limiter still counts every call, as in production.
  const config = loadConfig({
    PRISM_DATA_DIR: dataDir,
    PORT: '0',
    PRISM_LOG_LEVEL: 'silent',
    PRISM_RATE_LIMIT_PER_MINUTE: '1000000',
    PRISM_RATE_LIMIT_PER_HOUR: '1000000',
  });
  const running = await startServer(config, { announce: () => undefined });
  const { container } = running;
  const key = fs.readFileSync(config.data.ownerKeyPath, 'utf8').trim();
  const owner = await container.services.accounts.ownerPrincipal();
  if (!owner) throw new Error('no owner');
  const prediction = await container.services.predictions.create(owner, {
    kind: 'image',
    model: 'prism-1',
    domain: 'document.receipt',
    callbackUrl: null,
    images: [renderReceiptImage().toString('base64')],
    request: defaultPredictionRequest(),
  });

  const post = async (body: unknown): Promise<string> => {
    const res = await fetch(`${running.url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status !== 200 || text.includes('"isError":true')) throw new Error(`mcp answered ${res.status}: ${text}`);
    return text;
  };
  const list = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
  const getPrediction = {
    jsonrpc: '2.0' as const,
    id: 2,
    method: 'tools/call',
    params: { name: 'get_prediction', arguments: { id: prediction.id } },
  };
  const listed = await post(list);
  const plain = http.createServer((_req, res) => {
    res.setHeader('content-type', 'text/event-stream');
    res.end(listed);
  });
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
  const plainUrl = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;

  const factory = createMcpServerFactory(mcpServicesOf(container), container.version);
  const scope = {
    principal: owner,
    requestId: 'bench',
    baseUrl: running.url,
    logger: container.logger,
    toolsets: MCP_TOOLSETS,
  };

  // An SDK client's listTools (one stateless POST each), every toolset against the lean default; the names carry
  // the bytes of each answer. Before toolsets the list was every tool (30, 55,776 bytes uncompacted on f7f930d).
  const connect = async (toolsets: string): Promise<Client> => {
    const client = new Client({ name: 'bench', version: '1' });
    const url = new URL(`${running.url}/mcp${toolsets ? `?toolsets=${toolsets}` : ''}`);
    await client.connect(
      new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
    );
    return client;
  };
  const everyTool = await connect('all');
  const lean = await connect('extraction,files,run');
  const sizeOf = async (client: Client): Promise<string> => {
    const listed = await client.listTools();
    return `${listed.tools.length} tools, ${Buffer.byteLength(JSON.stringify(listed))} bytes`;
  };

  const [allSize, leanSize] = [await sizeOf(everyTool), await sizeOf(lean)];
  // The default list, as a client that names no toolsets gets it.
  const defaultList = await connect('');
  const defaultSize = await sizeOf(defaultList);
  const eras = await mcpEraCases({ url: running.url, key, predictionId: prediction.id });
  const cases: BenchCase[] = [
    {
      name: `SDK client listTools: default (${leanSize}) vs all (${allSize})`,
      iterations: 200,
      warmup: 20,
      baseline: {
        name: `toolsets=all (${await sizeOf(everyTool)})`,
        run: async () => void (await everyTool.listTools()),
      },
      subject: { name: `default (${await sizeOf(lean)})`, run: async () => void (await lean.listTools()) },
    },
    {
      name: 'MCP tools/list request (auth + server/transport + list)',
      iterations: 300,
      warmup: 30,
      baseline: {
        name: 'plain node:http, same bytes',
        run: async () => {
          await (await fetch(plainUrl, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(list) })).text();
        },
      },
      subject: { name: 'POST /mcp tools/list', run: async () => void (await post(list)) },
    },
    {
      name: 'MCP tools/call get_prediction over HTTP',
      iterations: 300,
      warmup: 30,
      baseline: {
        name: 'REST GET /v1/predictions/{id}',
        run: async () => {
          const res = await fetch(`${running.url}/v1/predictions/${prediction.id}`, {
            headers: { authorization: `Bearer ${key}` },
          });
          await res.text();
        },
      },
      subject: { name: 'POST /mcp tools/call', run: async () => void (await post(getPrediction)) },
    },
    {
      name: 'MCP tool call in process (fresh server per call)',
      iterations: 300,
      warmup: 30,
      baseline: {
        name: 'predictions.get + toPredictionWire',
        run: async () => {
          JSON.stringify(toPredictionWire(await container.services.predictions.get(owner, prediction.id)));
        },
      },
      subject: {
        name: 'tools/call via InMemoryTransport',
        run: async () => {
          const server = factory.create(scope);
          const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
          await server.connect(serverSide);
          // A stateless HTTP call has no handshake either: one JSON-RPC request, one answer.
          await clientSide.start();
          const answered = new Promise<void>((resolve) => {
            clientSide.onmessage = () => resolve();
          });
          await clientSide.send(getPrediction);
          await answered;
          await server.close();
        },
      },
    },
    ...eras.cases,
  ];

  return {
    cases,
    notes: async () => [`default tools/list (no ?toolsets=, as a client that names none gets it): ${defaultSize}`],
    async close() {
      await eras.close();
      await defaultList.close();
      await everyTool.close();
      await lean.close();
      await new Promise((resolve) => plain.close(resolve));
      await running.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
