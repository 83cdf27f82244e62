/**
 * `prism mcp`: the same MCP server over stdio, on the local data folder, acting as the owner. A desktop client
 * launches it as a local process with no key (single-user mode); stdout carries only JSON-RPC, logs go to stderr.
 * No rate limit applies: the only caller is the owner on their own machine. Tools may read local files (`path`),
 * and a message over PRISM_MCP_MAX_JSON_BYTES is refused with a JSON-RPC error, not the end of the server.
 */
import type { Readable, Writable } from 'node:stream';
import type { Container } from '../container';
import { randomHex } from '../lib/random-id';
import { createMcpServerFactory, mcpServicesOf } from './mcp-server';
import { localFiles } from './mcp-local-files';
import { LimitedStdioTransport } from './mcp-stdio-transport';
import { DEFAULT_MCP_TOOLSETS, parseToolsets } from './mcp-toolsets';

/** Serves MCP on `input`/`output` until the input ends (the client closed the pipe) or `signal` aborts. */
export async function serveMcpStdio(
  container: Container,
  options: { input?: Readable; output?: Writable; signal?: AbortSignal; toolsets?: string } = {},
): Promise<void> {
  const owner = await container.services.accounts.ownerPrincipal();
  if (!owner) throw new Error('no owner organisation in this data folder');
  const { config } = container;
  const server = createMcpServerFactory(mcpServicesOf(container), container.version, {
    localFiles: localFiles(config.limits.maxUploadBytes),
  }).create({
    principal: owner,
    requestId: `mcp-stdio-${randomHex(4)}`,
    baseUrl: config.server.publicUrl ?? `http://${config.server.host}:${config.server.port}`,
    logger: container.logger,
    toolsets: parseToolsets(
      options.toolsets ?? config.mcp.toolsets,
      DEFAULT_MCP_TOOLSETS,
      options.toolsets === undefined ? 'PRISM_MCP_TOOLSETS' : '--toolsets',
    ),
  });
  const input = options.input ?? process.stdin;
  const transport = new LimitedStdioTransport(input, options.output ?? process.stdout, config.mcp.maxJsonBytes);
  const ended = new Promise<void>((resolve) => {
    input.once('end', resolve);
    input.once('close', resolve);
    options.signal?.addEventListener('abort', () => resolve(), { once: true });
    server.server.onclose = () => resolve();
  });
  await server.connect(transport);
  await ended;
  await server.close();
}
