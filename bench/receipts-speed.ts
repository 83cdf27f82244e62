/**
 * How long a receipt takes through the server, and where the time goes: the receipts bench's speed section. It starts
 * the real server in this process (default settings: PP-OCR, one onnxruntime thread per core, a fresh SQLite file),
 * sends each receipt of a folder the way the external evaluator does (`POST /v1/image/generate` with its schema, one
 * at a time, plain HTTP), and then reads the same images with the service's own OCR path alone and runs the
 * extractor alone on what OCR read. Each part is given as wall time p50 and CPU time per receipt (process.cpuUsage:
 * every thread of this process, which is the server's too), so a reader can tell the shared machine's queueing from
 * the work itself: on a busy host wall time grows, CPU time does not.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config/config';
import { extractFromLayout } from '../src/engines/extract';
import { createLocalEngines } from '../src/engines/local/document-engines';
import { startServer } from '../src/http-server';
import { createLogger } from '../src/lib/logger';
import type { DocumentLayout } from '../src/engines/types';

/** Wall and CPU milliseconds of one timed step. */
interface Timed {
  wallMs: number;
  cpuMs: number;
}

async function timed<T>(run: () => Promise<T> | T): Promise<{ value: T; t: Timed }> {
  const started = performance.now();
  const before = process.cpuUsage();
  const value = await run();
  const used = process.cpuUsage(before);
  return { value, t: { wallMs: performance.now() - started, cpuMs: (used.user + used.system) / 1000 } };
}

/** Nearest-rank percentile, as the evaluator computes its latency p50 / p95. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}
const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);

function summary(label: string, times: Timed[]): string {
  const wall = times.map((t) => t.wallMs);
  const cpu = times.map((t) => t.cpuMs);
  const ms = (v: number): string => `${Math.round(v)} ms`;
  return `  ${label.padEnd(36)} wall p50 ${ms(percentile(wall, 50)).padStart(8)}  p95 ${ms(percentile(wall, 95)).padStart(8)}  CPU p50 ${ms(percentile(cpu, 50)).padStart(8)}  mean ${ms(mean(cpu)).padStart(8)}`;
}

/** A prediction's final state: the POST's reply, or the poll of it until it is finished. */
async function finished(base: string, key: string, reply: Record<string, unknown>): Promise<Record<string, unknown>> {
  let current = reply;
  while (current['status'] !== 'completed' && current['status'] !== 'failed') {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const res = await fetch(`${base}/v1/predictions/${String(current['id'])}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    current = (await res.json()) as Record<string, unknown>;
  }
  return current;
}

/**
 * The speed report over the receipts of `dataDir` (images/<ID>.jpg), asking for `schema` as the evaluator does. One
 * warm-up request (it loads the OCR models) precedes the timed ones; each receipt is then timed once.
 */
export async function receiptSpeed(dataDir: string, schema: Record<string, unknown>): Promise<string[]> {
  const ids = fs
    .readdirSync(path.join(dataDir, 'images'))
    .filter((f) => f.endsWith('.jpg'))
    .map((f) => f.slice(0, -4))
    .sort();
  const images = new Map(ids.map((id) => [id, fs.readFileSync(path.join(dataDir, 'images', `${id}.jpg`))]));
  const lines: string[] = [];

  // 1. Through the server.
  const dataHome = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-bench-receipts-'));
  // PRISM_OCR_DECODER passes through, so the speed of either CTC decoder can be measured.
  const decoder = process.env['PRISM_OCR_DECODER'];
  const config = loadConfig({
    PRISM_DATA_DIR: dataHome,
    PORT: '0',
    HOST: '127.0.0.1',
    PRISM_LOG_LEVEL: 'silent',
    ...(decoder ? { PRISM_OCR_DECODER: decoder } : {}),
  });
  const running = await startServer(config, { announce: () => undefined });
  const server: Timed[] = [];
  let failed = 0;
  try {
    const key = fs.readFileSync(config.data.ownerKeyPath, 'utf8').trim();
    const predict = async (image: Buffer): Promise<Record<string, unknown>> => {
      const res = await fetch(`${running.url}/v1/image/generate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'prism-1',
          domain: 'document.receipt',
          images: [`data:image/jpeg;base64,${image.toString('base64')}`],
          config: { json_schema: schema },
        }),
      });
      return finished(running.url, key, (await res.json()) as Record<string, unknown>);
    };
    const first = images.get(ids[0] ?? '');
    if (first) await predict(first);
    for (const id of ids) {
      const { value, t } = await timed(() => predict(images.get(id) as Buffer));
      if (value['status'] !== 'completed') failed += 1;
      server.push(t);
    }
  } finally {
    await running.close();
    fs.rmSync(dataHome, { recursive: true, force: true });
  }

  // 2. The same images through the service's OCR path alone (same engine and threads as the server's defaults),
  // 3. and the extractor alone on what it read.
  const engines = createLocalEngines({
    logger: createLogger('silent'),
    ocr: {
      engine: config.engines.ocrEngine,
      ppocr: { threads: config.engines.ocrThreads || os.availableParallelism(), decoder: config.engines.ocrDecoder },
    },
  });
  const ocr: Timed[] = [];
  const extraction: Timed[] = [];
  try {
    const first = images.get(ids[0] ?? '');
    if (first) await engines.layoutFromImage(first);
    for (const id of ids) {
      const read = await timed(() => engines.layoutFromImage(images.get(id) as Buffer));
      ocr.push(read.t);
      const layout: DocumentLayout = read.value;
      extraction.push((await timed(() => extractFromLayout(layout, schema, { confidence: true }))).t);
    }
  } finally {
    await engines.close();
  }
  lines.push(
    `speed on ${path.basename(dataDir)} (${ids.length} receipts, one at a time, ${os.availableParallelism()} cores, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}):`,
  );
  lines.push(summary(`through the server${failed ? ` (${failed} failed)` : ''}`, server));
  lines.push(summary('  of which OCR (service path alone)', ocr));
  lines.push(summary('  of which extraction', extraction));
  return lines;
}
