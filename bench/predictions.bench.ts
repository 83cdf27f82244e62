/**
 * Prediction benchmarks: the cost the service adds around OCR (HTTP, JSON, blob write, SQLite, extraction) against
 * calling the OCR engine directly on the same image, and memory across 200 sequential predictions (it must stay
 * flat: heap and RSS after 200 are compared with after the first 50, once warm).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createCanvas } from '@napi-rs/canvas';
import { loadConfig } from '../src/config/config';
import { createOcrEngine } from '../src/engines/ocr/ocr.engine';
import { startServer } from '../src/http-server';
import { createLogger } from '../src/lib/logger';
import type { BenchCase } from './harness';

/** A small receipt-like image (fast to OCR, so the service's own cost shows). */
export function smallReceipt(): Buffer {
  const canvas = createCanvas(600, 300);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = 'white';
  ctx.fillRect(0, 0, 600, 300);
  ctx.fillStyle = 'black';
  ctx.font = '24px DejaVu Sans';
  ['CORNER BAKERY LTD', '5 Mill Lane, Bristol', 'Date: 02/01/2025', 'TOTAL 7.40'].forEach((line, i) =>
    ctx.fillText(line, 20, 50 + i * 60),
  );
  return canvas.toBuffer('image/png');
}

export interface MemoryReport {
  predictions: number;
  heapAfter50Mb: number;
  heapAfter200Mb: number;
  rssAfter50Mb: number;
  rssAfter200Mb: number;
}

export async function predictionBenchmarks(): Promise<{
  cases: BenchCase[];
  memory: () => Promise<MemoryReport>;
  close: () => Promise<void>;
}> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-bench-pred-'));
  const config = loadConfig({ PRISM_DATA_DIR: dataDir, PORT: '0', PRISM_LOG_LEVEL: 'silent', PRISM_OCR_WORKERS: '1' });
  const running = await startServer(config, { announce: () => undefined });
  const key = fs.readFileSync(config.data.ownerKeyPath, 'utf8').trim();
  const ocr = createOcrEngine({ logger: createLogger('silent'), workers: 1 });
  const image = smallReceipt();
  const body = JSON.stringify({
    model: 'prism-1',
    images: [`data:image/png;base64,${image.toString('base64')}`],
    config: {
      json_schema: {
        type: 'object',
        properties: { company: { type: 'string' }, date: { type: 'string' }, total: { type: 'string' } },
      },
    },
  });
  const predict = async (): Promise<void> => {
    const res = await fetch(`${running.url}/v1/image/generate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body,
    });
    if (res.status !== 201) throw new Error(`prediction failed: ${res.status} ${await res.text()}`);
    await res.json();
  };

  const mb = (bytes: number): number => Math.round((bytes / 1024 / 1024) * 10) / 10;
  const settle = (): { heap: number; rss: number } => {
    (globalThis as { gc?: () => void }).gc?.();
    const usage = process.memoryUsage();
    return { heap: usage.heapUsed, rss: usage.rss };
  };

  return {
    cases: [
      {
        name: 'image prediction (small receipt, 1 OCR worker)',
        iterations: 20,
        warmup: 3,
        baseline: { name: 'OCR engine recognize()', run: async () => void (await ocr.recognize(image)) },
        subject: { name: 'POST /v1/image/generate', run: predict },
      },
    ],
    async memory() {
      for (let i = 0; i < 50; i += 1) await predict();
      const after50 = settle();
      for (let i = 50; i < 200; i += 1) await predict();
      const after200 = settle();
      return {
        predictions: 200,
        heapAfter50Mb: mb(after50.heap),
        heapAfter200Mb: mb(after200.heap),
        rssAfter50Mb: mb(after50.rss),
        rssAfter200Mb: mb(after200.rss),
      };
    },
    async close() {
      await ocr.close();
      await running.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
