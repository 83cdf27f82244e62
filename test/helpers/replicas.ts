/**
 * Several replicas of the real app in this process, over one data folder (one SQLite file, one blob folder) and the
 * same settings, each on its own port of 127.0.0.1: the shape of `prism serve --workers N` or of a load-balanced
 * deployment, for suites about what replicas share (Redis signals and queue) and what a balancer must pass through.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestApp, type TestApp } from './test-app';

export interface Replicas {
  apps: TestApp[];
  dataDir: string;
  ownerKey: string;
  close(): Promise<void>;
}

/** Starts `n` replicas one after the other (the first creates the owner), all with `env`. */
export async function startReplicas(n: number, env: Record<string, string>): Promise<Replicas> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-replicas-'));
  const apps: TestApp[] = [];
  try {
    for (let i = 0; i < n; i += 1) apps.push(await startTestApp(env, dataDir));
  } catch (error) {
    await Promise.allSettled(apps.map((a) => a.stop()));
    throw error;
  }
  return {
    apps,
    dataDir,
    ownerKey: (apps[0] as TestApp).ownerKey,
    async close() {
      await Promise.allSettled(apps.slice(0, -1).map((a) => a.stop()));
      // The last one closes: it removes what they shared (the folder, and any schema, Redis keys or S3 folder).
      await apps.at(-1)?.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
