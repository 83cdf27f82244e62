/**
 * `prism mcp`: the same MCP server over stdio, on the local data folder, acting as the owner. A desktop client
 * launches it as a local process with no key (single-user mode); stdout carries only JSON-RPC, logs go to stderr.
 * No rate limit applies: the only caller is the owner on their own machine. Tools may read local files (`path`),
 * and a message over PRISM_MCP_MAX_JSON_BYTES is refused with a JSON-RPC error, not the end of the server. Each
 * message runs on a work budget of its own (the keyed one, src/lib/work-budget.ts), as one POST to `/mcp` does.
 * The first message chooses the era, 2025-11-25 (SDK v1) or 2026-07-28 (SDK v2's serveStdio): mcp-stdio-eras.ts.
 */
import type { Readable, Writable } from 'node:stream';
import type { Principal } from '../domain/account';
import type { Logger } from '../lib/logger';
import { randomHex } from '../lib/random-id';
import { DEFAULT_WORK_LIMITS, requestWorkBudget, runWithWorkBudget, type WorkLimits } from '../lib/work-budget';
import { localFiles } from './mcp-local-files';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { Transport as ModernTransport } from '@modelcontextprotocol/server';
import { createModernServer } from './mcp-modern-server';
import { createMcpServerFactory, type McpServices } from './mcp-server';
import { splitEras } from './mcp-stdio-eras';
import { LimitedStdioTransport } from './mcp-stdio-transport';
import { DEFAULT_MCP_TOOLSETS, parseToolsets } from './mcp-toolsets';

/** What `prism mcp` serves: the services, as the owner, with links on the configured public URL. */
export interface McpStdioSetup {
  services: McpServices;
  version: string;
  /** Null when the data folder has no owner organisation yet. */
  owner: Principal | null;
  baseUrl: string;
  logger: Logger;
  /** The toolsets: `--toolsets` when given (`fromFlag`), else PRISM_MCP_TOOLSETS. */
  toolsets: { value: string; fromFlag: boolean };
  /** Largest JSON-RPC message read (PRISM_MCP_MAX_JSON_BYTES). */
  maxMessageBytes: number;
  /** Largest local file a tool reads by `path` (PRISM_MAX_UPLOAD_BYTES). */
  maxFileBytes: number;
  /** The work budget's limits (PRISM_WORK_BUDGET_*); the owner's messages run on the keyed one. */
  workBudget?: { anonymous: WorkLimits; keyed: WorkLimits };
}

/** Serves MCP on `input`/`output` until the input ends (the client closed the pipe) or `signal` aborts. */
export async function serveMcpStdio(
  setup: McpStdioSetup,
  options: { input?: Readable; output?: Writable; signal?: AbortSignal } = {},
): Promise<void> {
  const { owner } = setup;
  if (!owner) throw new Error('no owner organisation in this data folder');
  const toolsets = parseToolsets(
    setup.toolsets.value,
    DEFAULT_MCP_TOOLSETS,
    setup.toolsets.fromFlag ? '--toolsets' : 'PRISM_MCP_TOOLSETS',
  );
  const factory = createMcpServerFactory(setup.services, setup.version, { localFiles: localFiles(setup.maxFileBytes) });
  const scope = {
    principal: owner,
    requestId: `mcp-stdio-${randomHex(4)}`,
    baseUrl: setup.baseUrl,
    logger: setup.logger,
    toolsets,
  };
  const input = options.input ?? process.stdin;
  const transport = new LimitedStdioTransport(input, options.output ?? process.stdout, setup.maxMessageBytes);
  let close = async (): Promise<void> => transport.close();
  const ended = new Promise<void>((resolve) => {
    input.once('end', resolve);
    input.once('close', resolve);
    options.signal?.addEventListener('abort', () => resolve(), { once: true });
  });
  // Each message (and all it starts) spends a budget of its own, like one POST to /mcp.
  const limits = setup.workBudget ?? DEFAULT_WORK_LIMITS;
  const wrap = (deliver: () => void): void =>
    void runWithWorkBudget(requestWorkBudget(limits, owner.kind === 'user'), async () => deliver());
  // The first message chooses the era (mcp-stdio-eras.ts): the same parts answer in both.
  await splitEras(transport, wrap, async (modern, forward) => {
    if (modern) {
      const handle = serveStdio(() => createModernServer(factory.info, factory.parts(scope), factory.approvals), {
        legacy: 'reject',
        transport: forward as unknown as ModernTransport,
        onerror: (error) => setup.logger.debug('mcp stdio', { error: error.message }),
      });
      close = () => handle.close();
      return;
    }
    const server = factory.create(scope);
    close = () => server.close();
    await server.connect(forward);
  });
  await ended;
  await close();
}
