/**
 * The import check that `npm run check` runs: it passes on this tree, and it fails on a tree with a deliberately
 * bad import (an engine reaching into a service) and on import cycles between files and between folders.
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
