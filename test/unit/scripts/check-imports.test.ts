/**
 * The import check that `npm run check` runs: it passes on this tree, and it fails on trees with deliberately bad
 * imports (an engine reaching into a service; one adapter importing another; metering reaching up into the
 * gateway; the agent runtime importing a graph instead of being handed it) and on import cycles between files and
 * between folders.
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
});
