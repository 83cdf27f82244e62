/**
 * Embedding benchmarks: the local text embedder on a batch of short texts against the floor of merely tokenising
 * and hashing the same words (ratio = what SIF pooling, n-gram hashing and normalisation cost on top), the
 * word-vector table load against a bare gunzip of the same file, and one image through the multimodal embedder
 * (pixel features, fake OCR) against a bare sharp decode. The text case's name carries single-core throughput in
 * texts per second, measured while the group is set up.
 */
import fs from 'node:fs';
import zlib from 'node:zlib';
import sharp from 'sharp';
import { hashString } from '../src/engines/embeddings/hashed-features';
import { createMultimodalEmbeddingEngine } from '../src/engines/embeddings/multimodal-embedding.engine';
import { createTextEmbeddingEngine, type TextEmbeddingEngine } from '../src/engines/embeddings/text-embedding.engine';
import { normalizeWord, scanText } from '../src/engines/embeddings/text-tokenizer';
import { defaultWordVectorsPath, parseWordVectors } from '../src/engines/embeddings/word-vectors';
import { renderTextImage } from '../test/helpers/media-fixtures';
import type { BenchCase } from './harness';

const BATCH = 1000;
const WORDS = (
  'the invoice payment is due today customer account balance report quarterly sales growth market price ' +
  'cat dog weather rain sunny flight delayed hotel room clean train station london paris order shipped ' +
  'refund request password reset login error server crashed memory leak INV-4471 SKU-88 getUserName 2024'
).split(' ');

/** `count` deterministic short texts (6–14 words, ~50–90 characters). */
export function shortTexts(count: number): string[] {
  let seed = 42;
  const next = (): number => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 0x100000000;
  };
  return Array.from({ length: count }, () => {
    const length = 6 + Math.floor(next() * 9);
    const words = Array.from({ length }, () => WORDS[Math.floor(next() * WORDS.length)] as string);
    return `${words.join(' ')}.`;
  });
}

/** Texts per second of `engine.embedTexts` on one core, over about `ms` milliseconds. */
export function measureTextThroughput(engine: TextEmbeddingEngine, texts: string[], ms = 1000): number {
  engine.embedTexts(texts);
  const started = performance.now();
  let done = 0;
  while (performance.now() - started < ms) {
    engine.embedTexts(texts);
    done += texts.length;
  }
  return done / ((performance.now() - started) / 1000);
}

export async function embeddingBenchmarks(): Promise<{ cases: BenchCase[]; close: () => Promise<void> }> {
  const text = createTextEmbeddingEngine();
  const texts = shortTexts(BATCH);
  const perSecond = measureTextThroughput(text, texts);
  const tableFile = fs.readFileSync(defaultWordVectorsPath());
  const image = renderTextImage(['Quarterly sales report', 'Invoice INV-4471'], { width: 800, height: 200 });
  const multimodal = createMultimodalEmbeddingEngine({
    text,
    ocr: {
      recognize: async () => ({ index: 0, width: 1, height: 1, source: 'ocr', lines: [], status: 'ok' }),
    },
  });

  const cases: BenchCase[] = [
    {
      name: `text embeddings, ${BATCH} short texts (${Math.round(perSecond).toLocaleString('en')} texts/s, one core)`,
      iterations: 30,
      baseline: {
        name: 'tokenise + hash each word',
        run: async () => {
          let sink = 0;
          for (const t of texts) for (const w of scanText(t).words) sink ^= hashString(normalizeWord(w));
          if (sink === 0.5) throw new Error('unreachable');
        },
      },
      subject: { name: 'embedTexts (768 dims)', run: async () => void text.embedTexts(texts) },
    },
    {
      name: 'load the word-vector table (5 MB gzipped)',
      iterations: 15,
      baseline: { name: 'gunzip only', run: async () => void zlib.gunzipSync(tableFile) },
      subject: { name: 'parseWordVectors', run: async () => void parseWordVectors(tableFile) },
    },
    {
      name: 'multimodal embedding of one 800x200 image (OCR stubbed)',
      iterations: 30,
      baseline: {
        name: 'sharp decode + resize to raw 128x128',
        run: async () => void (await sharp(image).resize(128, 128, { fit: 'fill' }).raw().toBuffer()),
      },
      subject: {
        name: 'embed image part (2048 dims)',
        run: async () => void (await multimodal.embed([[{ type: 'image', data: image }]])),
      },
    },
  ];
  return { cases, close: async () => undefined };
}
