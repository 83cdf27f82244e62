import sharp from 'sharp';
import { AppError } from '../../../src/domain/errors';
import { whitenDarkBorder } from '../../../src/engines/ocr/ocr-preprocess';
import { createOcrEngine, medianWordHeight, type OcrEngine } from '../../../src/engines/ocr/ocr.engine';
import { linesFromTesseract } from '../../../src/engines/ocr/tesseract-layout';
import { withTimeout } from '../../../src/engines/ocr/tesseract-worker';
import type { Box, LayoutPage } from '../../../src/engines/types';
import { createLogger } from '../../../src/lib/logger';
import { RECEIPT_LINES, RECEIPT_RENDER_OPTIONS, renderTextImageWithBoxes } from '../../helpers/media-fixtures';

const texts = (page: LayoutPage): string[] => page.lines.map((l) => l.text);
const inside = (inner: Box, outer: Box, slack = 2): boolean =>
  inner.x0 >= outer.x0 - slack &&
  inner.y0 >= outer.y0 - slack &&
  inner.x1 <= outer.x1 + slack &&
  inner.y1 <= outer.y1 + slack;

describe('OCR engine (tesseract.js, offline)', () => {
  let ocr: OcrEngine;
  beforeAll(() => {
    ocr = createOcrEngine({ logger: createLogger('silent'), workers: 2 });
  });
  afterAll(() => ocr.close());

  it('reads a rendered receipt into lines and words with boxes, in reading order', async () => {
    const rendered = renderTextImageWithBoxes([...RECEIPT_LINES], RECEIPT_RENDER_OPTIONS);
    const page = await ocr.recognize(rendered.image, { index: 3 });

    expect(page).toMatchObject({ index: 3, width: 1000, height: 1400, source: 'ocr', status: 'ok' });
    // Every text line but the dashed rules; one line in the monospaced font is known to read `0il 560ml`.
    const expected = RECEIPT_LINES.filter((l) => !/^-+$/.test(l) && !l.startsWith('Olive')).map((l) =>
      l.replace(/\s+/g, ' '),
    );
    expect(texts(page)).toEqual(expect.arrayContaining(expected));

    const tops = page.lines.map((l) => l.box.y0);
    expect(tops).toEqual([...tops].sort((a, b) => a - b));
    for (const line of page.lines) {
      expect(line.confidence).toBeGreaterThan(0.5);
      expect(line.confidence).toBeLessThanOrEqual(1);
      expect(line.text).toBe(line.words.map((w) => w.text).join(' '));
      for (const word of line.words) {
        expect(word.confidence).toBeGreaterThanOrEqual(0);
        expect(word.confidence).toBeLessThanOrEqual(1);
        expect(inside(word.box, line.box)).toBe(true);
      }
    }
    const total = page.lines.find((l) => l.text === 'TOTAL 26.22');
    const truth = rendered.lines.find((l) => l.text.startsWith('TOTAL'))?.box;
    expect(total && truth).toBeTruthy();
    expect(Math.abs((total?.box.y0 ?? 0) - (truth?.y0 ?? 0))).toBeLessThanOrEqual(6);
    expect(Math.abs((total?.box.y1 ?? 0) - (truth?.y1 ?? 0))).toBeLessThanOrEqual(6);
    expect(Math.abs((total?.box.x0 ?? 0) - (truth?.x0 ?? 0))).toBeLessThanOrEqual(6);
  });

  it('reads photos upright using their EXIF orientation, with boxes in upright pixels', async () => {
    const upright = renderTextImageWithBoxes(['Invoice number 4711', 'Amount due 125.00'], { fontSize: 32 });
    const stored = await sharp(upright.image)
      .rotate(-90)
      .jpeg({ quality: 95 })
      .withMetadata({ orientation: 6 })
      .toBuffer();
    const page = await ocr.recognize(stored);
    expect([page.width, page.height]).toEqual([upright.width, upright.height]);
    expect(texts(page)).toEqual(['Invoice number 4711', 'Amount due 125.00']);
    expect(inside(page.lines[0]?.box ?? upright.lines[1]!.box, { x0: 0, y0: 0, x1: upright.width, y1: 90 })).toBe(true);
  });

  it('enlarges small text before reading it, and reports boxes in the caller’s pixels', async () => {
    const lines = ['Invoice number 12345', 'Total due 99.50 EUR', 'Payment within 30 days'];
    const small = renderTextImageWithBoxes(lines, { fontSize: 9, margin: 6, width: 160 });
    const page = await ocr.recognize(small.image);
    expect(texts(page)).toEqual(lines);
    page.lines.forEach((line, i) => {
      expect(inside(line.box, small.lines[i]!.box, 3)).toBe(true);
    });
  });

  it('serves concurrent reads from its pool', async () => {
    expect(ocr.workers).toBe(2);
    const images = ['first page', 'second page', 'third page'].map(
      (t) => renderTextImageWithBoxes([t], { fontSize: 30, width: 400 }).image,
    );
    const pages = await Promise.all(images.map((image, index) => ocr.recognize(image, { index })));
    expect(pages.map((p) => [p.index, texts(p)])).toEqual([
      [0, ['first page']],
      [1, ['second page']],
      [2, ['third page']],
    ]);
  });

  it('refuses undecodable input with invalid_media', async () => {
    const error = await ocr.recognize(Buffer.from('nope')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ status: 400, code: 'invalid_media' });
  });
});

describe('tesseract layout mapping', () => {
  const word = (text: string, x0: number, y0: number, confidence = 90) => ({
    text,
    confidence,
    bbox: { x0, y0, x1: x0 + 10 * text.length, y1: y0 + 20 },
  });

  it('flattens blocks into lines in reading order, scales boxes back and drops empty words', () => {
    const page = {
      blocks: [
        { paragraphs: [{ lines: [{ confidence: 80, words: [word('lower', 0, 200)] }] }] },
        {
          paragraphs: [
            {
              lines: [
                { confidence: 95, words: [word('right', 200, 0), word('left', 0, 2), word(' ', 100, 0)] },
                { confidence: 10, words: [word('', 0, 100)] },
              ],
            },
          ],
        },
      ],
    };
    const lines = linesFromTesseract(page, 2);
    expect(lines.map((l) => l.text)).toEqual(['left right', 'lower']);
    expect(lines[0]).toMatchObject({ confidence: 0.95, box: { x0: 0, y0: 0, x1: 125, y1: 11 } });
    expect(lines[0]?.words[1]).toEqual({ text: 'right', confidence: 0.9, box: { x0: 100, y0: 0, x1: 125, y1: 10 } });
  });

  it('measures the median height of real words', () => {
    const lines = linesFromTesseract({
      blocks: [{ paragraphs: [{ lines: [{ confidence: 90, words: [word('ab', 0, 0), word('c', 0, 0)] }] }] }],
    });
    expect(medianWordHeight(lines)).toBe(20);
    expect(medianWordHeight([])).toBe(0);
  });
});

describe('dark border whitening', () => {
  it('whitens a large dark area touching the border but keeps dark text inside the page', () => {
    const width = 20;
    const height = 20;
    const pixels = new Uint8Array(width * height).fill(255);
    for (let x = 0; x < width; x += 1) for (let y = 0; y < 3; y += 1) pixels[y * width + x] = 0; // torn top edge
    pixels[10 * width + 10] = 0; // a "text" pixel
    expect(whitenDarkBorder(pixels, width, height)).toBe(60);
    expect(pixels[0]).toBe(255);
    expect(pixels[10 * width + 10]).toBe(0);
  });

  it('leaves a few dark specks on the edge alone', () => {
    const pixels = new Uint8Array(100 * 100).fill(255);
    pixels[0] = 0;
    expect(whitenDarkBorder(pixels, 100, 100)).toBe(0);
    expect(pixels[0]).toBe(0);
  });
});

describe('OCR timeouts', () => {
  afterEach(() => jest.useRealTimers());

  it('passes results through and turns a hang into an error', async () => {
    jest.useFakeTimers();
    await expect(withTimeout(Promise.resolve('done'), 1000, 'too slow')).resolves.toBe('done');
    const hung = withTimeout(new Promise<never>(() => undefined), 1000, 'OCR of an image timed out');
    jest.advanceTimersByTime(1000);
    await expect(hung).rejects.toThrow('OCR of an image timed out');
  });
});
