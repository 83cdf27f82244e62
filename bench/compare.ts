/**
 * `npm run bench:compare -- <before.json> <after.json>`: each figure two bench runs share, before and after and its
 * change, so a regression shows up in review instead of beside old figures in a doc. With no arguments it compares
 * the two newest whole runs in bench/results/. Figures only one run has are listed apart; groups that failed or were
 * skipped in either run are named. Exits 0 either way: the change is for a person to read, on a loaded machine.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readResults, RESULTS_DIR, type BenchResults } from './results-file';

function newestTwo(): [string, string] {
  const files = fs
    .readdirSync(RESULTS_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort();
  if (files.length < 2) throw new Error(`bench/results/ holds ${files.length} whole-run file(s); name two files`);
  return [path.join(RESULTS_DIR, files.at(-2) as string), path.join(RESULTS_DIR, files.at(-1) as string)];
}

const fmt = (n: number): string => (Math.abs(n) >= 100 ? n.toFixed(1) : Math.abs(n) >= 1 ? n.toFixed(2) : n.toFixed(3));

const describe = (r: BenchResults): string =>
  `${r.commit}${r.dirty ? ' (dirty)' : ''} ${r.startedAt}, load ${r.loadBefore.join(' ')} -> ${r.loadAfter.join(' ')}`;

/** The lines of the comparison (exported for its test). */
export function compareResults(before: BenchResults, after: BenchResults): string[] {
  const lines = [`before: ${describe(before)}`, `after:  ${describe(after)}`, ''];
  const only: string[] = [];
  const groups = [...new Set([...Object.keys(before.groups), ...Object.keys(after.groups)])];
  for (const group of groups) {
    const a = before.groups[group];
    const b = after.groups[group];
    if (!a || !b) {
      only.push(`${group}: only in the ${a ? 'before' : 'after'} run`);
      continue;
    }
    if (a.status !== 'ok' || b.status !== 'ok') {
      lines.push(`${group}: ${a.status} -> ${b.status}`);
      if (a.status !== 'ok' && b.status !== 'ok') continue;
    }
    for (const figure of [...new Set([...Object.keys(a.figures), ...Object.keys(b.figures)])]) {
      const x = a.figures[figure];
      const y = b.figures[figure];
      if (x === undefined || y === undefined) {
        only.push(`${group}.${figure}: only in the ${x === undefined ? 'after' : 'before'} run`);
        continue;
      }
      const change = x === 0 ? (y === 0 ? '0 %' : 'new') : `${y >= x ? '+' : ''}${(((y - x) / x) * 100).toFixed(1)} %`;
      lines.push(`${group}.${figure}: ${fmt(x)} -> ${fmt(y)} (${change}; after/before ${x === 0 ? '-' : fmt(y / x)}x)`);
    }
  }
  if (only.length > 0) lines.push('', ...only);
  return lines;
}

function main(): void {
  const args = process.argv.slice(2);
  const [beforeFile, afterFile] = args.length >= 2 ? [args[0] as string, args[1] as string] : newestTwo();
  for (const line of compareResults(readResults(beforeFile), readResults(afterFile))) console.log(line);
}

if (require.main === module) {
  try {
    main();
  } catch (error) {
    console.error((error as Error).message);
    process.exitCode = 1;
  }
}
