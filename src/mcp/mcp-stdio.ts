/**
 * `prism mcp`: the same MCP server over stdio, on the local data folder, acting as the owner. A desktop client
 * launches it as a local process with no key (single-user mode); stdout carries only JSON-RPC, logs go to stderr.
 * No rate limit applies: the only caller is the owner on their own machine.
 */
import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Principal } from '../domain/account';
import type { Logger } from '../lib/logger';
import { randomHex } from '../lib/random-id';
import { createMcpServerFactory, type McpServices } from './mcp-server';

/** What `prism mcp` serves: the services, as the owner, with links on the configured public URL. */
export interface McpStdioSetup {
  services: McpServices;
  version: string;
  /** Null when the data folder has no owner organisation yet. */
  owner: Principal | null;
  baseUrl: string;
  logger: Logger;
}

/** Serves MCP on `input`/`output` until the input ends (the client closed the pipe) or `signal` aborts. */
export async function serveMcpStdio(
  setup: McpStdioSetup,
  options: { input?: Readable; output?: Writable; signal?: AbortSignal } = {},
): Promise<void> {
  const { owner } = setup;
  if (!owner) throw new Error('no owner organisation in this data folder');
  const server = createMcpServerFactory(setup.services, setup.version).create({
    principal: owner,
    requestId: `mcp-stdio-${randomHex(4)}`,
    baseUrl: setup.baseUrl,
    logger: setup.logger,
  });
  const input = options.input ?? process.stdin;
  const transport = new StdioServerTransport(input, options.output ?? process.stdout);
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
