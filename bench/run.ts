/**
 * `npm run bench`: every benchmark, each as a ratio against a baseline measured in the same run, plus the memory
 * check of 200 sequential predictions. `npm run bench -- files ocr` runs only the named groups.
 */
import { agentBenchmarks } from './agents.bench';
import { decisionBenchmarks } from './decisions.bench';
import { embeddingBenchmarks } from './embeddings.bench';
import { evaluationBenchmarks } from './evaluations.bench';
import { filesBenchmarks } from './files.bench';
import { gatewayBenchmarks } from './gateway.bench';
import { printResults, runCase, type BenchCase, type BenchResult } from './harness';
import { mcpBenchmarks } from './mcp.bench';
import { ocrBenchmarks } from './ocr.bench';
import { pdfBenchmarks } from './pdf.bench';
import { predictionBenchmarks } from './predictions.bench';
import { receiptsBenchmarks } from './receipts-cv';
import { runsBenchmarks } from './runs.bench';
import { skillsBenchmarks } from './skills.bench';
import { storesBenchmarks } from './stores.bench';
import { tracingBenchmarks } from './tracing.bench';
import { workersBenchmarks } from './workers.bench';

interface Group {
  cases: BenchCase[];
  /** Figures that are not a ratio against a baseline (CPU times, scores), printed after the table. */
  notes?: () => Promise<string[]>;
  close: () => Promise<void>;
}

const GROUPS: Record<string, () => Promise<Group>> = {
  files: filesBenchmarks,
  embeddings: embeddingBenchmarks,
  ocr: ocrBenchmarks,
  pdf: pdfBenchmarks,
  predictions: predictionBenchmarks,
  mcp: mcpBenchmarks,
  skills: skillsBenchmarks,
  stores: storesBenchmarks,
};

async function main(): Promise<void> {
  const asked = process.argv.slice(2);
  const wanted = asked.filter((name) => name in GROUPS);
  const names = asked.length > 0 ? wanted : Object.keys(GROUPS);
  const results: BenchResult[] = [];
  const notes: string[] = [];
  for (const name of names) {
    const group = await (GROUPS[name] as () => Promise<Group>)();
    try {
      for (const bench of group.cases) results.push(await runCase(bench));
      if (group.notes) notes.push(...(await group.notes()));
      if (name === 'predictions' && 'memory' in group) {
        const memory = await (group as Awaited<ReturnType<typeof predictionBenchmarks>>).memory();
        notes.push(
          `memory over ${memory.predictions} sequential predictions: heap ${memory.heapAfter50Mb} MB after 50 -> ` +
            `${memory.heapAfter200Mb} MB after 200; RSS ${memory.rssAfter50Mb} MB -> ${memory.rssAfter200Mb} MB`,
        );
      }
    } finally {
      await group.close();
    }
  }
  if (asked.length === 0 || asked.includes('gateway')) notes.push(...(await gatewayBenchmarks()));
  if (asked.length === 0 || asked.includes('agents')) notes.push(...(await agentBenchmarks()));
  if (asked.length === 0 || asked.includes('runs')) notes.push(...(await runsBenchmarks()));
  if (asked.length === 0 || asked.includes('decisions')) notes.push(...(await decisionBenchmarks()));
  if (asked.length === 0 || asked.includes('evaluations')) notes.push(...(await evaluationBenchmarks()));
  if (asked.length === 0 || asked.includes('receipts')) notes.push((await receiptsBenchmarks()).join('\n'));
  if (asked.length === 0 || asked.includes('workers')) notes.push(...(await workersBenchmarks()));
  if (asked.length === 0 || asked.includes('tracing')) notes.push(...(await tracingBenchmarks()));
  printResults(results);
  for (const note of notes) console.log(`\n${note}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
