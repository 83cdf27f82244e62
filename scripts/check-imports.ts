/**
 * The dependency rules of DESIGN.md §3 that a per-file lint ban cannot see: no import cycles (between files, and
 * between the folders of src/), and which folders may import which. Run by `npm run check`; `--graph` also prints
 * the folder graph (folders and arrows) for notes and reviews.
 *
 * Imports are read with the TypeScript compiler's own pre-processor (no type-check, ~1 s), relative ones resolved
 * to files; packages are not part of the graph.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '..');
const SOURCE_ROOTS = ['src', 'tools', 'agent-graphs'];

/** Folder prefixes that must not import from the listed prefixes, and why. */
const FORBIDDEN: ReadonlyArray<{ from: string; to: string[]; why: string }> = [
  { from: 'src/engines', to: ['src/services', 'src/gateway', 'src/http', 'src/agents'], why: 'engines are leaves' },
  {
    from: 'src/agents',
    to: ['src/services', 'src/gateway', 'src/http', 'src/stores/sqlite', 'src/container'],
    why: 'the runtime sees ports only',
  },
  {
    from: 'src/gateway',
    to: ['src/http', 'src/mcp', 'src/ws', 'src/stores/sqlite'],
    why: 'the gateway is not an adapter',
  },
  {
    from: 'src/services',
    to: ['src/http', 'src/mcp', 'src/ws', 'src/container'],
    why: 'services do not know adapters',
  },
  { from: 'src/stores', to: ['src/services', 'src/gateway', 'src/http', 'src/engines'], why: 'stores hold data only' },
];

/** Every .ts file under the source roots, relative to the repository. */
export function sourceFiles(root = ROOT): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(rel);
    }
  };
  for (const dir of SOURCE_ROOTS) if (fs.existsSync(path.join(root, dir))) walk(dir);
  return out.sort();
}

/** The repository files a file imports (relative specifiers only). */
function importsOf(root: string, file: string, known: Set<string>): string[] {
  const text = fs.readFileSync(path.join(root, file), 'utf8');
  const found = ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
  const targets: string[] = [];
  for (const spec of found) {
    if (!spec.startsWith('.')) continue;
    const base = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
    const hit = [`${base}.ts`, `${base}/index.ts`, base].find((candidate) => known.has(candidate));
    if (hit) targets.push(hit);
  }
  return targets;
}

/** Strongly connected components of more than one node (or a self-loop): the cycles. */
function cycles(graph: Map<string, Set<string>>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || graph.get(node)?.has(node)) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/**
 * The folder a file counts in: `src/<folder>` (src/*.ts files are their own), else the top folder. The graphs in
 * `agent-graphs/` are the runtime's own implementation, kept at the top so they are easy to find: they count as
 * `src/agents` (the file-level cycle check still covers them, and lint keeps them to `src/agents/sdk`).
 */
function folderOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'agent-graphs') return 'src/agents';
  if (parts[0] === 'src') return parts.length > 2 ? `src/${parts[1]}` : file.replace(/\.ts$/, '');
  return parts[0]!;
}

export interface ImportReport {
  fileCycles: string[][];
  folderCycles: string[][];
  forbidden: string[];
  folderGraph: Map<string, Set<string>>;
}

/** Reads the tree at `root` and checks every rule. */
export function checkImports(root = ROOT): ImportReport {
  const files = sourceFiles(root);
  const known = new Set(files);
  const fileGraph = new Map<string, Set<string>>();
  const folderGraph = new Map<string, Set<string>>();
  const forbidden: string[] = [];
  for (const file of files) {
    const targets = importsOf(root, file, known);
    fileGraph.set(file, new Set(targets));
    const from = folderOf(file);
    if (!folderGraph.has(from)) folderGraph.set(from, new Set());
    for (const target of targets) {
      const to = folderOf(target);
      if (to !== from) folderGraph.get(from)!.add(to);
      for (const rule of FORBIDDEN) {
        if (
          file.startsWith(`${rule.from}/`) &&
          rule.to.some((t) => target === `${t}.ts` || target.startsWith(`${t}/`))
        ) {
          forbidden.push(`${file} imports ${target} (${rule.why})`);
        }
      }
    }
  }
  return { fileCycles: cycles(fileGraph), folderCycles: cycles(folderGraph), forbidden, folderGraph };
}

function main(): void {
  const root = process.argv.find((arg, i) => i > 1 && !arg.startsWith('--')) ?? ROOT;
  const report = checkImports(path.resolve(root));
  if (process.argv.includes('--graph')) {
    for (const [folder, targets] of [...report.folderGraph].sort()) {
      console.log(`${folder} -> ${[...targets].sort().join(', ') || '(nothing)'}`);
    }
  }
  const problems = [
    ...report.fileCycles.map((c) => `file cycle: ${c.join(' <-> ')}`),
    ...report.folderCycles.map((c) => `folder cycle: ${c.join(' <-> ')}`),
    ...report.forbidden,
  ];
  for (const problem of problems) console.error(problem);
  if (problems.length > 0) process.exit(1);
  console.log(`imports: ${report.folderGraph.size} folders, no cycles, no forbidden imports`);
}

if (require.main === module) main();
