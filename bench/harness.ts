/**
 * A tiny benchmark harness: runs a case and its baseline in the same process, interleaved, and reports the
 * ratio, so figures compare across machines (absolute numbers on a 2-core CI box mean little on their own).
 */
import { performance } from 'node:perf_hooks';

export interface BenchCase {
  name: string;
  /** What the case is compared against, measured in the same run. */
  baseline: { name: string; run: () => Promise<void> };
  subject: { name: string; run: () => Promise<void> };
  iterations: number;
  warmup?: number;
}

export interface BenchResult {
  name: string;
  baselineMs: number;
  subjectMs: number;
  ratio: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

async function timeOnce(run: () => Promise<void>): Promise<number> {
  const start = performance.now();
  await run();
  return performance.now() - start;
}

/** Runs baseline and subject alternately (so drift hits both) and compares medians. */
export async function runCase(bench: BenchCase): Promise<BenchResult> {
  for (let i = 0; i < (bench.warmup ?? 5); i += 1) {
    await bench.baseline.run();
    await bench.subject.run();
  }
  const baseline: number[] = [];
  const subject: number[] = [];
  for (let i = 0; i < bench.iterations; i += 1) {
    baseline.push(await timeOnce(bench.baseline.run));
    subject.push(await timeOnce(bench.subject.run));
  }
  const baselineMs = median(baseline);
  const subjectMs = median(subject);
  return { name: bench.name, baselineMs, subjectMs, ratio: subjectMs / baselineMs };
}

export function printResults(results: BenchResult[]): void {
  console.log('| benchmark | baseline median ms | prism median ms | ratio (prism / baseline) |');
  console.log('|---|---|---|---|');
  for (const r of results) {
    console.log(`| ${r.name} | ${r.baselineMs.toFixed(3)} | ${r.subjectMs.toFixed(3)} | ${r.ratio.toFixed(2)}x |`);
  }
}

/**
 * What a group gives the runner besides table cases: lines printed after the table, and named figures (ratios,
 * ms, frames/s) written to the results file under the group's name, which `bench/compare.ts` compares run to run.
 */
export interface GroupReport {
  notes: string[];
  figures?: Record<string, number>;
}

/** Makes `count` calls, `concurrency` at a time (each caller starts its next call when its last is answered). */
export async function callsInParallel(count: number, concurrency: number, call: () => Promise<void>): Promise<void> {
  let issued = 0;
  const caller = async (): Promise<void> => {
    while (issued < count) {
      issued += 1;
      await call();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, caller));
}
