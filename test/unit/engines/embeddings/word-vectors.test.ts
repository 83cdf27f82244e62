import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  defaultWordVectorsPath,
  loadWordVectors,
  parseWordVectors,
} from '../../../../src/engines/embeddings/word-vectors';

const ROOT = path.resolve(__dirname, '../../../../');

describe('bundled word vectors', () => {
  it('is the committed 50k x 100 table, at most 6 MB, in frequency order', () => {
    const file = defaultWordVectorsPath();
    expect(path.relative(ROOT, file)).toBe(path.join('assets', 'embeddings', 'glove-6b-100d-50k.i8.bin.gz'));
    expect(fs.statSync(file).size).toBeLessThanOrEqual(6 * 1024 * 1024);
    const started = performance.now();
    const table = loadWordVectors(file);
    console.log(
      `word vectors: ${fs.statSync(file).size} bytes, loaded in ${(performance.now() - started).toFixed(1)} ms`,
    );
    expect([table.rows, table.dims]).toEqual([50_000, 100]);
    expect(table.index.get('the')).toBe(0);
    expect(table.index.has('e-mail')).toBe(true);
    expect(table.index.has(',')).toBe(false);
    // SIF weights grow with rank (rarer words weigh more) and stay in (0, 1).
    expect(table.sif[0]).toBeLessThan(0.05);
    expect(table.sif[49_999]).toBeGreaterThan(0.99);
    expect(table.sif[100]).toBeGreaterThan(table.sif[10] as number);
    let commonNorm = 0;
    for (const v of table.common) commonNorm += v * v;
    expect(commonNorm).toBeCloseTo(1, 4);
  });

  it('rejects files that are not a table', () => {
    expect(() => parseWordVectors(Buffer.from('not a table at all, clearly not one'))).toThrow(/bad magic/);
  });
});

describe('scripts/build-word-vectors.ts', () => {
  it('converts a wink-format JSON into a table the loader reads back', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-wv-'));
    try {
      const words = ['the', ',', 'cat', 'dog', "don't", 'well-known'];
      const vectors: Record<string, number[]> = {};
      words.forEach((word, i) => {
        const values = Array.from({ length: 4 }, (_, j) => ((i + 1) * (j - 1.5)) / 4);
        vectors[word] = [...values, Math.hypot(...values), i];
      });
      const from = path.join(dir, 'wink.json');
      fs.writeFileSync(from, JSON.stringify({ dimensions: 4, size: words.length, words, vectors }));
      const out = path.join(dir, 'table.bin.gz');
      execFileSync(
        process.execPath,
        ['--import', 'tsx', 'scripts/build-word-vectors.ts', '--from', from, '--out', out, '--words', '4'],
        {
          cwd: ROOT,
          stdio: 'pipe',
        },
      );
      const table = loadWordVectors(out);
      expect([table.rows, table.dims]).toEqual([4, 4]);
      expect([...table.index.keys()]).toEqual(['the', 'cat', 'dog', "don't"]);
      const row = table.index.get('dog') as number;
      const decoded = Array.from(
        { length: 4 },
        (_, j) => (table.values[row * 4 + j] as number) * (table.scales[row] as number),
      );
      decoded.forEach((value, j) => expect(value).toBeCloseTo((4 * (j - 1.5)) / 4, 1));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
