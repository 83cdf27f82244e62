/**
 * Process entry: read the config, start the server, and stop gracefully on SIGTERM or SIGINT.
 * The only file (with the CLI) that exits the process.
 */
import cluster from 'node:cluster';
import { ConfigError, loadConfig } from './src/config/config';
import { ModelCatalogueError } from './src/gateway/catalogue/models-file';
import { startServer } from './src/http-server';

export async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  let running;
  try {
    running = await startServer(config, { settleHeap: true, processMetrics: true });
  } catch (error) {
    if (error instanceof ModelCatalogueError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  const worker = cluster.isWorker ? `, worker ${process.pid}` : '';
  console.error(`prism ${running.container.version} listening on ${running.url} (data in ${config.data.dir}${worker})`);
  const stop = (signal: string): void => {
    console.error(`${signal} received: finishing requests in flight, then exiting`);
    running.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
