/**
 * docs/architecture.md is the map a newcomer reads first, so it must not drift from the tree: every folder of src/
 * is named on it by its whole path, and every repository path it names (a file or a folder) exists. The checks are
 * shown failing on a made-up map as well, so a check that could never fail would be noticed.
 */
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const MAP = path.join(ROOT, 'docs', 'architecture.md');
/** Folders whose paths the map names; a path outside them is prose about something else (a URL, a setting). */
const ROOTS = ['src', 'tools', 'agent-graphs', 'skills', 'test', 'scripts', 'docs', 'bench', 'bin'];
const TOP_FILES = ['server.ts', 'eslint.config.mjs', 'package.json', 'tsconfig.json'];

/** Every folder under src/, as `src/a/b/`. */
function srcFolders(root: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    out.push(`${rel}/`);
    for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      if (entry.isDirectory()) walk(path.posix.join(rel, entry.name));
    }
  };
  for (const entry of fs.readdirSync(path.join(root, 'src'), { withFileTypes: true })) {
    if (entry.isDirectory()) walk(`src/${entry.name}`);
  }
  return out.sort();
}

/** The repository paths a text names: `dir/…/name.ext` or `dir/…/` under a known root, and the top files. */
export function pathsNamed(text: string): string[] {
  const found = new Set<string>();
  const pattern = new RegExp(`(?<![\\w./-])(?:${ROOTS.join('|')})/[\\w./-]*`, 'g');
  for (const match of text.matchAll(pattern)) {
    const named = match[0].replace(/[.,;:]+$/, '');
    if (named.includes('*')) continue;
    if (named.endsWith('/') || /\.[a-z]+$/.test(named)) found.add(named);
  }
  for (const file of TOP_FILES) if (new RegExp(`(?<![\\w./-])${file.replace('.', '\\.')}`).test(text)) found.add(file);
  return [...found].sort();
}

/** What is wrong with a map of the tree at `root`: folders it leaves out, and named paths that do not exist. */
export function mapProblems(text: string, root: string): { missingFolders: string[]; deadPaths: string[] } {
  const named = new Set(pathsNamed(text));
  return {
    missingFolders: srcFolders(root).filter((folder) => !named.has(folder)),
    deadPaths: [...named].filter((p) => !fs.existsSync(path.join(root, p))),
  };
}

describe('docs/architecture.md', () => {
  it('names every folder of src/ and no path that does not exist', () => {
    expect(mapProblems(fs.readFileSync(MAP, 'utf8'), ROOT)).toEqual({ missingFolders: [], deadPaths: [] });
  });

  it('names the file that talks to PostgreSQL for wallets and the file that decides who pays', () => {
    const named = pathsNamed(fs.readFileSync(MAP, 'utf8'));
    expect(named).toEqual(expect.arrayContaining(['src/backend/postgres/wallets.store.ts', 'src/metering/payer.ts']));
  });

  it('fails on a map that leaves a folder out or names a file that is gone', () => {
    const map = [
      'src/metering/ holds src/metering/payer.ts; the stores were in src/stores/execution-store.ts,',
      'and `src/container/stores.ts` built them; tools/index.ts lists the tools.',
    ].join('\n');
    const problems = mapProblems(map, ROOT);
    expect(problems.missingFolders).toEqual(expect.arrayContaining(['src/backend/', 'src/backend/postgres/']));
    expect(problems.missingFolders).not.toContain('src/metering/');
    expect(problems.deadPaths.sort()).toEqual(['src/container/stores.ts', 'src/stores/execution-store.ts']);
  });
});
