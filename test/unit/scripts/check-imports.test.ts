/**
 * The import check that `npm run check` runs: it passes on this tree, and it fails on trees with deliberately bad
 * imports (an engine reaching into a service; one adapter importing another; metering reaching up into the
 * gateway; the agent runtime importing a graph instead of being handed it), on the backend's fences (a driver
 * imported outside src/backend; one backend room importing another; metering or a service reaching a backend) and
 * on import cycles between files and between folders.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkImports } from '../../../scripts/check-imports';

const tree = (files: Record<string, string>): string => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-imports-'));
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.join(root, path.dirname(file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  }
  return root;
};

describe('import rules', () => {
  it('holds on the repository itself', () => {
    const report = checkImports();
    expect(report.forbidden).toEqual([]);
    expect(report.fileCycles).toEqual([]);
    expect(report.folderCycles).toEqual([]);
  });

  it('names an engine that imports a service', () => {
    const root = tree({
      'src/engines/reader.ts': "import { run } from '../services/runner';\nexport const read = run;\n",
      'src/services/runner.ts': 'export const run = 1;\n',
    });
    try {
      expect(checkImports(root).forbidden).toEqual([
        'src/engines/reader.ts imports src/services/runner.ts (engines are leaves)',
      ]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('names an adapter that imports another, metering that reaches up, and the runtime importing a graph', () => {
    const root = tree({
      'src/ws/upgrade.ts': "import { limit } from '../http/middleware/rate-limit';\nexport const up = limit;\n",
      'src/http/middleware/rate-limit.ts':
        "import { shape } from '../../wire/error-body';\nexport const limit = shape;\n",
      'src/wire/error-body.ts': 'export const shape = 1;\n',
      'src/metering/billing.ts':
        "import type { Model } from '../gateway/catalogue/model.types';\nexport type P = Model;\n",
      'src/gateway/catalogue/model.types.ts': 'export type Model = 1;\n',
      'src/agents/agent-runtime.ts':
        "import { loop } from '../../agent-graphs/agent-loop.graph';\nexport const run = loop;\n",
      'agent-graphs/agent-loop.graph.ts': 'export const loop = 1;\n',
      'src/container/agents.ts':
        "import { loop } from '../../agent-graphs/agent-loop.graph';\nexport const wired = loop;\n",
    });
    try {
      expect(checkImports(root).forbidden.sort()).toEqual([
        'src/agents/agent-runtime.ts imports agent-graphs/agent-loop.graph.ts (tools and graphs are registered by the composition root and injected)',
        'src/metering/billing.ts imports src/gateway/catalogue/model.types.ts (metering sits below the services and the gateway, behind its ports)',
        'src/ws/upgrade.ts imports src/http/middleware/rate-limit.ts (adapters share only src/wire)',
      ]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('finds cycles between files and between folders, type-only imports included', () => {
    const root = tree({
      'src/lib/a.ts': "import type { B } from './b';\nexport type A = B;\n",
      'src/lib/b.ts': "import type { A } from './a';\nexport type B = A | 1;\n",
      'src/jobs/queue.ts': "import { x } from '../blobs/store';\nexport const q = x;\n",
      'src/blobs/store.ts': "import { q } from '../jobs/queue';\nexport const x = 1;\nexport const y = q;\n",
    });
    try {
      const report = checkImports(root);
      expect(report.fileCycles).toEqual(
        expect.arrayContaining([
          ['src/lib/a.ts', 'src/lib/b.ts'],
          ['src/blobs/store.ts', 'src/jobs/queue.ts'],
        ]),
      );
      expect(report.folderCycles).toEqual([['src/blobs', 'src/jobs']]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('names a database, Redis or S3 driver imported outside src/backend, type-only imports included', () => {
    const root = tree({
      'src/services/report.ts': "import type { Pool } from 'pg';\nexport type P = Pool;\n",
      'src/gateway/cache.ts': "import { Redis } from 'ioredis';\nexport const r = Redis;\n",
      'src/metering/queue.ts': "import { Queue } from 'bullmq';\nexport const q = Queue;\n",
      'tools/upload.tool.ts': "import { S3Client } from '@aws-sdk/client-s3';\nexport const c = S3Client;\n",
      'src/cli/peek.ts': "const Database = require('better-sqlite3');\nexport const d = Database;\n",
      'src/backend/postgres/database.ts': "import pg from 'pg';\nexport const pool = pg.Pool;\n",
      'src/backend/redis/signal-bus.ts': "import type { Redis } from 'ioredis';\nexport type R = Redis;\n",
    });
    try {
      expect(checkImports(root).forbidden.sort()).toEqual([
        'src/cli/peek.ts imports better-sqlite3 (only src/backend talks to databases, Redis and S3)',
        'src/gateway/cache.ts imports ioredis (only src/backend talks to databases, Redis and S3)',
        'src/metering/queue.ts imports bullmq (only src/backend talks to databases, Redis and S3)',
        'src/services/report.ts imports pg (only src/backend talks to databases, Redis and S3)',
        'tools/upload.tool.ts imports @aws-sdk/client-s3 (only src/backend talks to databases, Redis and S3)',
      ]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('names a backend room that imports another, and passes one that shares rows through src/stores', () => {
    const root = tree({
      'src/backend/postgres/files.store.ts':
        "import { toFile } from '../sqlite/files.store';\nimport { toSkill } from '../../stores/rows/skills.rows';\n" +
        'export const a = [toFile, toSkill];\n',
      'src/backend/sqlite/files.store.ts': 'export const toFile = 1;\n',
      'src/stores/rows/skills.rows.ts': 'export const toSkill = 1;\n',
      'src/backend/local/shared-state.ts': "import type { Q } from '../redis/job-queue';\nexport type L = Q;\n",
      'src/backend/redis/job-queue.ts': 'export type Q = 1;\n',
      'src/backend/index.ts':
        "import { toFile } from './sqlite/files.store';\nimport type { Q } from './redis/job-queue';\n" +
        'export const seam: [typeof toFile, Q | null] = [toFile, null];\n',
    });
    try {
      expect(checkImports(root).forbidden.sort()).toEqual([
        'src/backend/local/shared-state.ts imports src/backend/redis/job-queue.ts (no backend room imports another (what two share lives in src/stores or at the seam))',
        'src/backend/postgres/files.store.ts imports src/backend/sqlite/files.store.ts (no backend room imports another (what two share lives in src/stores or at the seam))',
      ]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('names metering and a service that reach a backend instead of its interface', () => {
    const root = tree({
      'src/metering/guest-spend.ts':
        "import { createMemoryHoldStore } from '../backend/local/metering-stores';\nexport const h = createMemoryHoldStore;\n",
      'src/backend/local/metering-stores.ts': 'export const createMemoryHoldStore = 1;\n',
      'src/services/admin/budget-ledger.ts':
        "import { createAdminSql } from '../../backend/admin-sql';\nimport type { AdminSql } from '../../stores/types/admin-sql';\n" +
        'export const l: [typeof createAdminSql, AdminSql | null] = [createAdminSql, null];\n',
      'src/backend/admin-sql.ts': 'export const createAdminSql = 1;\n',
      'src/stores/types/admin-sql.ts': 'export type AdminSql = 1;\n',
    });
    try {
      expect(checkImports(root).forbidden.sort()).toEqual([
        'src/metering/guest-spend.ts imports src/backend/local/metering-stores.ts (metering sees its ports and the store interfaces only, never a backend)',
        'src/services/admin/budget-ledger.ts imports src/backend/admin-sql.ts (services see the store interfaces only, never a backend)',
      ]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
