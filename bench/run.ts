/**
 * `npm run bench`: every benchmark, each as a ratio against a baseline measured in the same run.
 */
import { filesBenchmarks } from './files.bench';
import { printResults, runCase, type BenchResult } from './harness';

async function main(): Promise<void> {
  const results: BenchResult[] = [];
  const files = await filesBenchmarks();
  try {
    for (const bench of files.cases) results.push(await runCase(bench));
  } finally {
    await files.close();
  }
  printResults(results);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
