/**
 * Launches `mcp-remote` (the stdio-to-HTTP bridge desktop clients use for remote MCP servers) the way Claude
 * Desktop does, with the MCP SDK's stdio client, and gives a test what a person would see: its log (stderr), the
 * sign-in URL it prints, and the URL it asked the system to open in a browser.
 *
 * Nothing touches the real home folder: `HOME` and `MCP_REMOTE_CONFIG_DIR` (where mcp-remote keeps its client
 * registration and tokens) point into a folder the test owns. `BROWSER` is a script that records the URL instead
 * of starting a browser (xdg-open, which mcp-remote calls through the `open` package, honours it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const ROOT = path.resolve(__dirname, '..', '..');
/** mcp-remote's bin (`dist/proxy.js`), run with this node. */
export const MCP_REMOTE = path.join(ROOT, 'node_modules', 'mcp-remote', 'dist', 'proxy.js');

export interface McpRemoteRun {
  client: Client;
  /** Resolves once the stdio client has finished `initialize` through mcp-remote (rejects if it never does). */
  connected: Promise<void>;
  /** Everything mcp-remote has logged so far. */
  log(): string;
  /** Waits until the log matches `pattern`; rejects, with the log, if mcp-remote exits first. */
  waitForLog(pattern: RegExp): Promise<RegExpExecArray>;
  /** The URLs mcp-remote asked the system to open in a browser. */
  opened(): string[];
  /** Resolves once mcp-remote has exited. */
  exited: Promise<void>;
  close(): Promise<void>;
}

/** The folders one person's machine has: a home, mcp-remote's config dir in it, and the fake browser's record. */
export interface RemoteHome {
  home: string;
  configDir: string;
  browserLog: string;
  browser: string;
}

export function makeRemoteHome(root: string): RemoteHome {
  const home = path.join(root, 'home');
  const configDir = path.join(root, 'mcp-auth');
  const browserLog = path.join(root, 'browser.log');
  const browser = path.join(root, 'browser.sh');
  fs.mkdirSync(home, { recursive: true });
  fs.writeFileSync(browser, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${browserLog}'\n`, { mode: 0o755 });
  return { home, configDir, browserLog, browser };
}

/** Starts `node mcp-remote <args…>` under the SDK stdio client and starts connecting (see `connected`). */
export function launchMcpRemote(args: string[], where: RemoteHome): McpRemoteRun {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCP_REMOTE, ...args],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: where.home,
      MCP_REMOTE_CONFIG_DIR: where.configDir,
      BROWSER: where.browser,
      NO_COLOR: '1',
    },
    stderr: 'pipe',
  });
  let text = '';
  const waiters: { pattern: RegExp; resolve: (m: RegExpExecArray) => void; reject: (e: Error) => void }[] = [];
  const check = (): void => {
    for (const waiter of [...waiters]) {
      const match = waiter.pattern.exec(text);
      if (match) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(match);
      }
    }
  };
  transport.stderr?.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
    check();
  });
  let exit: () => void = () => undefined;
  const exited = new Promise<void>((resolve) => (exit = resolve));
  let done = false;
  transport.onclose = () => {
    done = true;
    for (const waiter of waiters.splice(0)) {
      waiter.reject(new Error(`mcp-remote exited before its log matched ${waiter.pattern}:\n${text}`));
    }
    exit();
  };
  const client = new Client({ name: 'desktop-via-mcp-remote', version: '1' });
  const connected = client.connect(transport);
  connected.catch(() => undefined);
  return {
    client,
    connected,
    exited,
    log: () => text,
    waitForLog(pattern) {
      const match = pattern.exec(text);
      if (match) return Promise.resolve(match);
      if (done) return Promise.reject(new Error(`mcp-remote exited before its log matched ${pattern}:\n${text}`));
      return new Promise((resolve, reject) => {
        waiters.push({ pattern, resolve, reject });
      });
    },
    opened: () =>
      fs.existsSync(where.browserLog) ? fs.readFileSync(where.browserLog, 'utf8').split('\n').filter(Boolean) : [],
    close: () => client.close(),
  };
}
