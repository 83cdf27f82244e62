/**
 * The dependency rules of docs/architecture.md that a per-file lint ban cannot see: no import cycles (between files,
 * and between the folders of src/), and which folders may import which. Run by `npm run check`; `--graph` also prints
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

/** The three adapters: each calls services and renders the shared contract of src/wire, none imports another. */
const ADAPTERS = ['src/http', 'src/mcp', 'src/ws'];
/** The plugins: registered by the composition root (tools/index.ts, agent-graphs/index.ts), never imported by src. */
const PLUGINS = ['tools', 'agent-graphs'];

/**
 * Folder prefixes that must not import from the listed prefixes, and why; `except` names importers under `from` the
 * rule does not cover.
 */
const FORBIDDEN: ReadonlyArray<{ from: string; to: string[]; why: string; except?: string[] }> = [
  {
    from: 'src/engines',
    to: ['src/services', 'src/gateway', 'src/metering', 'src/wire', 'src/agents', ...ADAPTERS],
    why: 'engines are leaves',
  },
  {
    from: 'src/agents',
    to: ['src/services', 'src/gateway', 'src/metering', 'src/wire', 'src/stores/sqlite', 'src/container', ...ADAPTERS],
    why: 'the runtime sees ports only',
  },
  {
    from: 'src/gateway',
    to: [...ADAPTERS, 'src/wire', 'src/stores/sqlite', 'src/container'],
    why: 'the gateway is not an adapter',
  },
  {
    from: 'src/services',
    to: [...ADAPTERS, 'src/wire', 'src/container'],
    why: 'services do not know adapters',
  },
  {
    from: 'src/metering',
    to: ['src/services', 'src/gateway', 'src/agents', 'src/engines', 'src/wire', 'src/container', ...ADAPTERS],
    why: 'metering sits below the services and the gateway, behind its ports',
  },
  {
    from: 'src/wire',
    to: ['src/container', 'src/stores/sqlite', ...ADAPTERS],
    why: 'the wire contract is shared by the adapters and belongs to none',
  },
  { from: 'src/http', to: ['src/mcp', 'src/ws'], why: 'adapters share only src/wire' },
  { from: 'src/mcp', to: ['src/http', 'src/ws'], why: 'adapters share only src/wire' },
  { from: 'src/ws', to: ['src/http', 'src/mcp'], why: 'adapters share only src/wire' },
  { from: 'src/http', to: ['src/container'], why: 'adapters are handed what they use by the entry points' },
  { from: 'src/mcp', to: ['src/container'], why: 'adapters are handed what they use by the entry points' },
  { from: 'src/ws', to: ['src/container'], why: 'adapters are handed what they use by the entry points' },
  {
    from: 'src/stores',
    to: ['src/services', 'src/gateway', 'src/metering', 'src/wire', 'src/engines', ...ADAPTERS],
    why: 'stores hold data only',
  },
  {
    from: 'src',
    to: PLUGINS,
    except: ['src/container'],
    why: 'tools and graphs are registered by the composition root and injected',
  },
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

/** The folder a file counts in: `src/<folder>` (src/*.ts files are their own), else the top folder. */
function folderOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'src') return parts.length > 2 ? `src/${parts[1]}` : file.replace(/\.ts$/, '');
  return parts[0]!;
}

/** Whether `file` is the module `prefix` (`src/app` is src/app.ts) or lies under the folder `prefix`. */
function within(file: string, prefix: string): boolean {
  return file === `${prefix}.ts` || file.startsWith(`${prefix}/`);
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
          within(file, rule.from) &&
          !rule.except?.some((e) => within(file, e)) &&
          rule.to.some((t) => within(target, t))
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
