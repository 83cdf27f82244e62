/**
 * The machine-readable record of one `npm run bench`: which commit, when, on how loaded a machine, and each group's
 * status, figures and printed lines. bench/run.ts writes it; bench/compare.ts compares two; bench/render-docs.ts
 * makes docs/benchmarks.md from one. Kept apart so the three agree on one shape.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export type GroupStatus = 'ok' | 'skipped' | 'failed';

export interface GroupRecord {
  status: GroupStatus;
  seconds: number;
  /** Named figures: table cases as `<case>.ratio` (and `.baseline_ms`, `.subject_ms`), plus the group's own. */
  figures: Record<string, number>;
  /** The lines the group printed (its notes, or why it was skipped), or the error that failed it. */
  notes: string[];
  error?: string;
}

export interface BenchResults {
  /** 1 while the shape stays as it is. */
  version: 1;
  startedAt: string;
  finishedAt: string;
  commit: string;
  /** Uncommitted changes in the worktree when the run started. */
  dirty: boolean;
  node: string;
  cpus: number;
  /** os.loadavg() (1, 5, 15 min) at the start and at the end. */
  loadBefore: number[];
  loadAfter: number[];
  /** The group names asked for; empty for a whole run. */
  asked: string[];
  groups: Record<string, GroupRecord>;
}

export const RESULTS_DIR = path.resolve(__dirname, 'results');

function git(args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: __dirname, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

export function runHeader(asked: string[]): Omit<BenchResults, 'finishedAt' | 'loadAfter' | 'groups'> {
  return {
    version: 1,
    startedAt: new Date().toISOString(),
    commit: git(['rev-parse', '--short=12', 'HEAD']) || 'unknown',
    dirty: git(['status', '--porcelain', '--untracked-files=no']) !== '',
    node: process.version,
    cpus: os.cpus().length,
    loadBefore: os.loadavg().map((n) => Number(n.toFixed(2))),
    asked,
  };
}

/**
 * Where a run's results go: a whole run to bench/results/<date>-<commit>.json (committed, the history the compare
 * script reads), a run of named groups to bench/results/partial/ (ignored by git).
 */
export function resultsPath(results: BenchResults): string {
  const stamp = results.startedAt.replace(/[:]/g, '').replace(/\.\d+Z$/, 'Z');
  const name = `${stamp}-${results.commit}${results.dirty ? '-dirty' : ''}`;
  if (results.asked.length === 0) return path.join(RESULTS_DIR, `${name}.json`);
  return path.join(RESULTS_DIR, 'partial', `${name}-${results.asked.join('-')}.json`);
}

export function writeResults(results: BenchResults): string {
  const file = resultsPath(results);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  return file;
}

export function readResults(file: string): BenchResults {
  const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<BenchResults>;
  if (parsed.version !== 1 || typeof parsed.groups !== 'object' || parsed.groups === null) {
    throw new Error(`${file} is not a bench results file (version 1)`);
  }
  return parsed as BenchResults;
}

/** The newest whole-run results file, or null when there is none. */
export function latestResults(): string | null {
  if (!fs.existsSync(RESULTS_DIR)) return null;
  const files = fs
    .readdirSync(RESULTS_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort();
  const last = files.at(-1);
  return last ? path.join(RESULTS_DIR, last) : null;
}
