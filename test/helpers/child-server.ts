/**
 * Runs Prism as a real child process (`node -r ./bin/register-ts.js server.ts`, as `npm start` runs it), for tests that kill or signal it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

export interface ChildServer {
  url: string;
  child: ChildProcess;
  exited: Promise<number | null>;
  stderr: () => string;
}

/** `startMs`: how long it may take to listen (a first start on PostgreSQL migrates a fresh schema). */
export async function startChildServer(
  dataDir: string,
  env: Record<string, string> = {},
  startMs = 20_000,
): Promise<ChildServer> {
  const child = spawn(process.execPath, ['-r', './bin/register-ts.js', 'server.ts'], {
    cwd: ROOT,
    env: { ...process.env, PRISM_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', PRISM_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stdout?.resume();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${stderr}`)), startMs);
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /listening on (http:\/\/[\d.:]+)/.exec(stderr);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${stderr}`));
    });
  });
  return { url, child, exited, stderr: () => stderr };
}
