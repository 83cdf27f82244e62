/**
 * Starts and stops the HTTP server around an app: listen (HTTP, and WebSocket upgrades for the decision stream),
 * print the owner key on first start, and shut down gracefully (stop accepting, end decision sessions with their
 * own event, let requests in flight finish within the grace period, then close the container).
 * Used by `server.ts`, `prism serve` and the integration tests alike.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequestListener, createUpgradeListener } from './app';
import type { Config } from './config/config';
import { createContainer, type Container, type ContainerOptions } from './container';
import { settleHeap } from './lib/settle-heap';
import { startTracing, type TracingHandle } from './lib/tracing';
import { traceRequests, traceUpgrades } from './http/trace-requests';

export interface RunningServer {
  url: string;
  server: http.Server;
  container: Container;
  close(): Promise<void>;
}

export interface StartOptions extends ContainerOptions {
  /** Where the one-time owner-key notice goes; stdout by default. */
  announce?: (text: string) => void;
  /**
   * Collect start-up's garbage once before listening (see lib/settle-heap.ts). For the long-running server
   * process; tests that start many servers in one process leave it off.
   */
  settleHeap?: boolean;
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const announce = options.announce ?? ((text: string) => process.stdout.write(text));
  // Before anything that makes spans; off (no endpoint) it is never loaded.
  const tracing: TracingHandle | null = config.tracing.tracesUrl
    ? await startTracing({ ...config.tracing, tracesUrl: config.tracing.tracesUrl })
    : null;
  let container: Container;
  try {
    container = await createContainer(config, options);
  } catch (error) {
    await tracing?.shutdown();
    throw error;
  }
  let server: http.Server;
  const upgrades = createUpgradeListener(container);
  try {
    const { ownerKey } = await container.start();
    if (ownerKey) {
      announce(
        `Created the owner organisation. Owner API key (shown once, also saved to ${config.data.ownerKeyPath}):\n${ownerKey.key}\n`,
      );
    }
    if (options.settleHeap) settleHeap();
    server = http.createServer(traceRequests(createRequestListener(container)));
    server.keepAliveTimeout = 65_000;
    const upgrade = traceUpgrades((req, socket, head) => upgrades.handle(req, socket, head));
    server.on('upgrade', (req, socket, head) => {
      container.metrics.wsSessions.inc();
      socket.once('close', () => container.metrics.wsSessions.dec());
      upgrade(req, socket, head);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.server.port, config.server.host, () => resolve());
    });
  } catch (error) {
    await container.close();
    await tracing?.shutdown();
    throw error;
  }
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;

  const close = (): Promise<void> => {
    closing ??= (async () => {
      const drained = new Promise<void>((resolve) => server.close(() => resolve()));
      // Upgraded sockets are no longer the server's: end each decision session with its own event.
      const streamsEnded = upgrades.close();
      // Keep-alive sockets become idle once their last response is sent; close them as they do.
      server.closeIdleConnections();
      const sweeper = setInterval(() => server.closeIdleConnections(), 50);
      const deadline = setTimeout(() => server.closeAllConnections(), config.server.shutdownGraceMs);
      try {
        await Promise.all([drained, streamsEnded]);
      } finally {
        clearInterval(sweeper);
        clearTimeout(deadline);
        await container.close();
        // The spans of the last requests are exported before the process goes.
        await tracing?.shutdown();
      }
    })();
    return closing;
  };

  return { url: `http://${host}:${address.port}`, server, container, close };
}
