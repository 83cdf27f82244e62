/**
 * `npm run bench`: every benchmark group, each figure a ratio against a baseline measured in the same run where it
 * can be, plus the memory check of 200 sequential predictions. `npm run bench -- files ocr` runs only the named
 * groups.
 *
 * Every group runs to the end even when one fails (the run then exits 1, naming it); groups that need something this
 * machine lacks (PostgreSQL, the SROIE folder) skip with one line. The figures go to a results file
 * (bench/results-file.ts: a whole run to bench/results/<date>-<commit>.json, which also regenerates
 * docs/benchmarks.md; named groups to bench/results/partial/), and `npm run bench:compare -- a.json b.json` prints
 * each figure's change between two runs.
 *
 * Adding a group is one line in GROUPS: a function returning table cases (`Group`), or lines and named figures
 * (`GroupReport`), or just lines (`string[]`).
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { agentBenchmarks } from './agents.bench';
import { decisionBenchmarks } from './decisions.bench';
import { embeddingBenchmarks } from './embeddings.bench';
import { evaluationBenchmarks } from './evaluations.bench';
import { filesBenchmarks } from './files.bench';
import { gatewayBenchmarks } from './gateway.bench';
import { printResults, runCase, type BenchCase, type BenchResult, type GroupReport } from './harness';
import { langgraphBenchmarks } from './langgraph.bench';
import { mcpBenchmarks } from './mcp.bench';
import { ocrBenchmarks } from './ocr.bench';
import { pdfBenchmarks } from './pdf.bench';
import { predictionBenchmarks } from './predictions.bench';
import { receiptsBenchmarks } from './receipts-cv';
import { renderBenchmarksDoc } from './render-docs';
import { writeResults, runHeader, type BenchResults, type GroupRecord } from './results-file';
import { readerBenchmarks } from './reader';
import { runsBenchmarks } from './runs.bench';
import { skillsBenchmarks } from './skills.bench';
import { storesBenchmarks } from './stores.bench';
import { storesSizeBenchmarks } from './stores-size.bench';
import { tracingBenchmarks } from './tracing.bench';
import { transcriptionBenchmarks } from './transcriptions.bench';
import { workersBenchmarks } from './workers.bench';
import { callsBenchmarks } from './calls.bench';

interface Group {
  cases: BenchCase[];
  /** Figures that are not a ratio against a baseline (CPU times, scores), printed after the table. */
  notes?: () => Promise<string[]>;
  close: () => Promise<void>;
}

type GroupOutcome = Group | GroupReport | string[];

/** The groups, in the order a whole run takes them. One line each. */
const GROUPS: Record<string, () => Promise<GroupOutcome>> = {
  files: filesBenchmarks,
  embeddings: embeddingBenchmarks,
  ocr: ocrBenchmarks,
  pdf: pdfBenchmarks,
  predictions: predictionBenchmarks,
  mcp: mcpBenchmarks,
  skills: skillsBenchmarks,
  stores: storesBenchmarks,
  'stores-size': storesSizeBenchmarks,
  gateway: gatewayBenchmarks,
  transcriptions: transcriptionBenchmarks,
  agents: agentBenchmarks,
  runs: runsBenchmarks,
  langgraph: langgraphBenchmarks,
  decisions: decisionBenchmarks,
  evaluations: evaluationBenchmarks,
  receipts: async () => [(await receiptsBenchmarks()).join('\n')],
  reader: async () => [(await readerBenchmarks()).join('\n')],
  workers: workersBenchmarks,
  calls: callsBenchmarks,
  tracing: tracingBenchmarks,
};

/** Options a group reads that take a value (bench/stores-size.bench.ts). */
const VALUE_OPTIONS = ['--rows'];

/** A group that printed only lines saying it was skipped (no PostgreSQL, no data folder) counts as skipped. */
const SKIPPED = /\bskipped\b/i;

/** Runs one group; its table rows go to `table`, everything else to the record. Never throws. */
async function runGroup(name: string, table: BenchResult[]): Promise<GroupRecord> {
  const started = performance.now();
  const record: GroupRecord = { status: 'ok', seconds: 0, figures: {}, notes: [] };
  try {
    const outcome = await (GROUPS[name] as () => Promise<GroupOutcome>)();
    if (Array.isArray(outcome)) record.notes.push(...outcome);
    else if ('cases' in outcome) {
      try {
        for (const bench of outcome.cases) {
          const result = await runCase(bench);
          table.push(result);
          record.figures[`${result.name}.ratio`] = result.ratio;
          record.figures[`${result.name}.baseline_ms`] = result.baselineMs;
          record.figures[`${result.name}.subject_ms`] = result.subjectMs;
        }
        if (outcome.notes) record.notes.push(...(await outcome.notes()));
        if (name === 'predictions' && 'memory' in outcome) {
          const memory = await (outcome as Awaited<ReturnType<typeof predictionBenchmarks>>).memory();
          record.notes.push(
            `memory over ${memory.predictions} sequential predictions: heap ${memory.heapAfter50Mb} MB after 50 -> ` +
              `${memory.heapAfter200Mb} MB after 200; RSS ${memory.rssAfter50Mb} MB -> ${memory.rssAfter200Mb} MB`,
          );
          record.figures['memory.heap_growth_mb_50_to_200'] = memory.heapAfter200Mb - memory.heapAfter50Mb;
        }
      } finally {
        await outcome.close();
      }
    } else {
      record.notes.push(...outcome.notes);
      Object.assign(record.figures, outcome.figures ?? {});
    }
    const onlySkips = record.notes.length > 0 && record.notes.every((line) => SKIPPED.test(line));
    if (onlySkips && Object.keys(record.figures).length === 0) record.status = 'skipped';
  } catch (error) {
    record.status = 'failed';
    record.error = error instanceof Error ? (error.stack ?? error.message) : String(error);
  }
  record.seconds = Number(((performance.now() - started) / 1000).toFixed(1));
  return record;
}

async function main(): Promise<void> {
  // Options are for the groups (`--rows 1e5`, `--explain`); an option's value is not a group name.
  const args = process.argv.slice(2);
  const asked = args.filter((arg, i) => !arg.startsWith('-') && !VALUE_OPTIONS.includes(args[i - 1] ?? ''));
  const unknown = asked.filter((name) => !(name in GROUPS));
  if (unknown.length > 0) {
    console.error(`unknown bench group(s): ${unknown.join(', ')}; groups: ${Object.keys(GROUPS).join(', ')}`);
    process.exitCode = 2;
    return;
  }
  const names = asked.length > 0 ? asked : Object.keys(GROUPS);
  const header = runHeader(asked);
  const table: BenchResult[] = [];
  const groups: Record<string, GroupRecord> = {};
  for (const name of names) {
    console.error(`bench: ${name} ...`);
    const record = await runGroup(name, table);
    groups[name] = record;
    console.error(`bench: ${name} ${record.status} in ${record.seconds} s`);
    if (record.error) console.error(record.error);
  }
  const results: BenchResults = {
    ...header,
    finishedAt: new Date().toISOString(),
    loadAfter: os.loadavg().map((n) => Number(n.toFixed(2))),
    groups,
  };
  printResults(table);
  for (const record of Object.values(groups)) for (const note of record.notes) console.log(`\n${note}`);
  console.log('');
  for (const [name, record] of Object.entries(groups)) {
    console.log(
      `${name}: ${record.status} (${record.seconds} s)${record.error ? ` - ${record.error.split('\n')[0]}` : ''}`,
    );
  }
  console.log(`load average ${results.loadBefore.join(' ')} at the start, ${results.loadAfter.join(' ')} at the end`);
  const file = writeResults(results);
  console.log(`results: ${file}`);
  if (asked.length === 0) console.log(`docs: ${renderBenchmarksDoc(file)}`);
  const failed = Object.entries(groups).filter(([, r]) => r.status === 'failed');
  if (failed.length > 0) {
    console.error(`bench: ${failed.length} group(s) failed: ${failed.map(([name]) => name).join(', ')}`);
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
