/**
 * The dependency rules of docs/architecture.md that a per-file lint ban cannot see: no import cycles (between files,
 * and between the folders of src/), which folders may import which, and the backend's fences: only src/backend
 * imports a database, Redis or S3 driver; no backend room (sqlite, postgres, redis, s3, local) imports another;
 * metering, services and the gateway see interfaces, never a backend. Run by `npm run check`; `--graph` also prints
 * the folder graph (folders and arrows) for notes and reviews.
 *
 * Imports are read with the TypeScript compiler's own pre-processor (no type-check, ~1 s), type-only ones included,
 * relative ones resolved to files; packages are not part of the graph, only checked against the driver list.
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
/** The backend's rooms, one per technology; the seam (src/backend/*.ts) chooses between them. */
const BACKEND_ROOMS = ['sqlite', 'postgres', 'redis', 's3', 'local'].map((room) => `src/backend/${room}`);
/** The packages that talk to a database, Redis or S3: imported under src/backend only. */
const DRIVERS = ['better-sqlite3', 'pg', 'ioredis', 'bullmq', '@aws-sdk/', '@langchain/langgraph-checkpoint-'];

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
    to: ['src/services', 'src/gateway', 'src/metering', 'src/wire', 'src/container', ...ADAPTERS],
    why: 'the runtime sees ports only',
  },
  {
    from: 'src/gateway',
    to: [...ADAPTERS, 'src/wire', 'src/container'],
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
    to: ['src/container', ...ADAPTERS],
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
  ...BACKEND_ROOMS.map((room) => ({
    from: room,
    to: BACKEND_ROOMS.filter((other) => other !== room),
    why: 'no backend room imports another (what two share lives in src/stores or at the seam)',
  })),
  {
    from: 'src/metering',
    to: ['src/backend'],
    why: 'metering sees its ports and the store interfaces only, never a backend',
  },
  {
    from: 'src/services',
    to: ['src/backend'],
    why: 'services see the store interfaces only, never a backend',
  },
  {
    from: 'src/gateway',
    to: ['src/backend'],
    why: 'the gateway sees the store interfaces only, never a backend',
  },
  { from: 'src/stores', to: ['src/backend'], why: 'the store interfaces and rows know no backend' },
  { from: 'src/agents', to: BACKEND_ROOMS, why: 'the runtime sees ports only' },
  { from: 'src/engines', to: ['src/backend'], why: 'engines are leaves' },
  { from: 'src/wire', to: ['src/backend'], why: 'the wire contract knows no backend' },
  ...ADAPTERS.map((adapter) => ({ from: adapter, to: ['src/backend'], why: 'adapters are handed their stores' })),
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

/** Every module specifier a file names: static imports, re-exports, `import()` and `require()`. */
function specifiersOf(root: string, file: string): string[] {
  const text = fs.readFileSync(path.join(root, file), 'utf8');
  return ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
}

/** The driver packages a file imports, type-only imports included. */
function driversOf(specifiers: string[]): string[] {
  return specifiers.filter((spec) =>
    DRIVERS.some((driver) =>
      driver.endsWith('/') || driver.endsWith('-')
        ? spec.startsWith(driver)
        : spec === driver || spec.startsWith(`${driver}/`),
    ),
  );
}

/** The repository files a file imports (relative specifiers only). */
function importsOf(file: string, found: string[], known: Set<string>): string[] {
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
    const specifiers = specifiersOf(root, file);
    if (!within(file, 'src/backend')) {
      for (const driver of driversOf(specifiers)) {
        forbidden.push(`${file} imports ${driver} (only src/backend talks to databases, Redis and S3)`);
      }
    }
    const targets = importsOf(file, specifiers, known);
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
