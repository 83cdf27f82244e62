/**
 * The bench's results files and what reads them: the comparison prints each shared figure's change and names what
 * only one run has or what failed; the generated docs/benchmarks.md carries the run's commit and load average and
 * each group's figures. (Running the groups themselves is `npm run bench`, not a test.)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { compareResults } from '../../../bench/compare';
import { benchmarksMarkdown } from '../../../bench/render-docs';
import { readResults, resultsPath, type BenchResults } from '../../../bench/results-file';

const run = (commit: string, groups: BenchResults['groups'], asked: string[] = []): BenchResults => ({
  version: 1,
  startedAt: '2026-11-29T03:00:00.000Z',
  finishedAt: '2026-11-29T03:20:00.000Z',
  commit,
  dirty: false,
  node: 'v20.20.2',
  cpus: 2,
  loadBefore: [1.5, 1.2, 0.9],
  loadAfter: [2.1, 1.6, 1.1],
  asked,
  groups,
});

describe('bench results', () => {
  const before = run('aaaa', {
    agents: { status: 'ok', seconds: 30, figures: { replay_speedup_x: 30, loop_cpu_ms: 2 }, notes: ['agents: x'] },
    decisions: { status: 'failed', seconds: 1, figures: {}, notes: [], error: 'Error: 429' },
    workers: { status: 'skipped', seconds: 0, figures: {}, notes: ['workers: skipped (no PostgreSQL)'] },
  });
  const after = run('bbbb', {
    agents: { status: 'ok', seconds: 25, figures: { replay_speedup_x: 90, chat_x: 1.7 }, notes: ['agents: y'] },
    decisions: { status: 'ok', seconds: 20, figures: { one_session_frames_per_s: 210 }, notes: [] },
  });

  it('compares each shared figure with its change, and names the rest', () => {
    const lines = compareResults(before, after);
    expect(lines[0]).toContain('aaaa');
    expect(lines).toContain('agents.replay_speedup_x: 30.00 -> 90.00 (+200.0 %; after/before 3.00x)');
    expect(lines).toContain('decisions: failed -> ok');
    expect(lines).toContain('decisions.one_session_frames_per_s: only in the after run');
    expect(lines).toContain('agents.loop_cpu_ms: only in the before run');
    expect(lines).toContain('workers: only in the before run');
  });

  it('writes docs from one run with its commit, load average, statuses and figures', () => {
    const md = benchmarksMarkdown(before, path.join(__dirname, 'x.json'));
    expect(md).toContain('commit `aaaa`');
    expect(md).toContain('load average 1.5 / 1.2 / 0.9');
    expect(md).toContain('| decisions | failed: Error: 429 | 1 |');
    expect(md).toContain('| workers | skipped | 0 |');
    expect(md).toContain('| replay_speedup_x | 30.00 |');
    expect(md).toContain('workers: skipped (no PostgreSQL)');
  });

  it('shows a group run alone (kept in bench/results/groups) in place of a whole run that skipped it', () => {
    const alone = {
      ...run('dddd', {
        workers: { status: 'ok', seconds: 300, figures: { 'op.p50_ms.1M': 0.4 }, notes: ['at size'] },
      }),
      startedAt: '2026-11-29T04:00:00.000Z',
    };
    const md = benchmarksMarkdown(before, path.join(__dirname, 'x.json'), [
      { file: path.join(__dirname, 'groups', 'g.json'), results: alone },
    ]);
    expect(md).toContain('| workers | ok | 300 |');
    expect(md).toContain('From a run of this group alone: commit `dddd`');
    expect(md).toContain('| op.p50_ms.1M | 0.400 |');
    expect(md).not.toContain('workers: skipped (no PostgreSQL)');
    // The whole run's own ok group, newer than the group run, stays.
    const newer = { ...after, startedAt: '2026-11-29T05:00:00.000Z' };
    const kept = benchmarksMarkdown(newer, path.join(__dirname, 'x.json'), [
      {
        file: path.join(__dirname, 'groups', 'g.json'),
        results: { ...alone, groups: { agents: alone.groups.workers! } },
      },
    ]);
    expect(kept).toContain('| chat_x | 1.70 |');
    expect(kept).not.toContain('From a run of this group alone');
  });

  it('files a whole run by date and commit, a partial one apart, and reads only results files back', () => {
    expect(resultsPath(before)).toMatch(/bench\/results\/2026-11-29T030000Z-aaaa\.json$/);
    expect(resultsPath(run('cccc', {}, ['agents', 'decisions']))).toMatch(
      /bench\/results\/partial\/2026-11-29T030000Z-cccc-agents-decisions\.json$/,
    );
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-bench-results-'));
    try {
      const good = path.join(dir, 'good.json');
      fs.writeFileSync(good, JSON.stringify(after));
      expect(readResults(good).commit).toBe('bbbb');
      const bad = path.join(dir, 'bad.json');
      fs.writeFileSync(bad, JSON.stringify({ hello: 1 }));
      expect(() => readResults(bad)).toThrow(/not a bench results file/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
