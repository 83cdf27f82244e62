import { createOcrEngine, type OcrEngine } from '../../../src/engines/ocr/ocr.engine';
import { createPdfEngine } from '../../../src/engines/pdf/pdf.engine';
import { groupIntoLines, placeWords, type PdfTextItem } from '../../../src/engines/pdf/text-layer';
import type { Box, LayoutPage } from '../../../src/engines/types';
import { CancelController, WorkCancelledError } from '../../../src/lib/cancel';
import { createLogger } from '../../../src/lib/logger';
import { runForTenant } from '../../../src/lib/work-tenant';
import { failure } from '../../helpers/app-error';
import { makePdf, makeScannedPdf, makeTextPdf, renderReceiptImage } from '../../helpers/media-fixtures';

const silent = createLogger('silent');
const texts = (page: LayoutPage | undefined): string[] => page?.lines.map((l) => l.text) ?? [];
const inside = (inner: Box, outer: Box): boolean =>
  inner.x0 >= outer.x0 && inner.y0 >= outer.y0 && inner.x1 <= outer.x1 && inner.y1 <= outer.y1;

/** An OCR stand-in that fails `failures` times, then returns one fixed line; counts its calls. */
function scriptedOcr(failures: number) {
  const fake = {
    calls: 0,
    async recognize(_image: Buffer, opts: { index?: number } = {}): Promise<LayoutPage> {
      fake.calls += 1;
      if (fake.calls <= failures) throw new Error('tesseract exploded at /opt/secret/worker.js:12');
      const box = { x0: 10, y0: 10, x1: 90, y1: 30 };
      const words = [{ text: 'scanned', box, confidence: 0.9 }];
      const lines = [{ text: 'scanned', box, confidence: 0.9, words }];
      return { index: opts.index ?? 0, width: 1, height: 1, source: 'ocr', lines, status: 'ok' };
    },
  };
  return fake;
}

describe('PDF engine: text layer', () => {
  const pdf = createPdfEngine({ ocr: scriptedOcr(0), logger: silent });
  afterAll(() => pdf.close());

  it('reads text pages into lines and words in page points, top-left origin, reading order', async () => {
    const bytes = await makeTextPdf([
      ['Invoice INV-2025-001 for services', 'Total due: 99.50 EUR'],
      ['Second page with enough text on it'],
    ]);
    const layout = await pdf.layout(bytes);
    expect(layout.pageCount).toBe(2);
    expect(layout.pages.map((p) => [p.index, p.source, p.status, p.width, p.height])).toEqual([
      [0, 'text-layer', 'ok', 612, 792],
      [1, 'text-layer', 'ok', 612, 792],
    ]);
    const [first, second] = layout.pages;
    expect(texts(first)).toEqual(['Invoice INV-2025-001 for services', 'Total due: 99.50 EUR']);
    expect(texts(second)).toEqual(['Second page with enough text on it']);

    // Baseline at 84 pt from the top, Helvetica 12 pt: ascent ≈ 10.9 pt above, descent ≈ 2.5 pt below.
    const line = first?.lines[0];
    expect(line?.box.x0).toBeCloseTo(72, 0);
    expect(line?.box.y0).toBeGreaterThan(72);
    expect(line?.box.y0).toBeLessThan(75);
    expect(line?.box.y1).toBeGreaterThan(85);
    expect(line?.box.y1).toBeLessThan(88);
    expect(line?.words.map((w) => w.text)).toEqual(['Invoice', 'INV-2025-001', 'for', 'services']);
    for (const word of line?.words ?? []) {
      expect(word.confidence).toBe(1);
      expect(inside(word.box, line!.box)).toBe(true);
    }
    const xs = line?.words.map((w) => w.box.x0) ?? [];
    expect(xs).toEqual([...xs].sort((a, b) => a - b));
    expect(first!.lines[1]!.box.y0).toBeGreaterThan(line!.box.y1);
  });

  it('puts a label and a far-away value on the same baseline into one line', async () => {
    const bytes = await makePdf([
      {
        items: [
          { text: 'Amount due', x: 72, y: 200 },
          { text: '1,234.56', x: 480, y: 200 },
          { text: 'Invoice date', x: 72, y: 100 },
          { text: '2025-03-14', x: 480, y: 100.5 },
        ],
      },
    ]);
    const page = (await pdf.layout(bytes)).pages[0];
    expect(texts(page)).toEqual(['Invoice date 2025-03-14', 'Amount due 1,234.56']);
    expect(page?.lines[1]?.words.at(-1)?.box.x0).toBeCloseTo(480, 0);
  });

  it('stops at maxPages but reports the real page count', async () => {
    const bytes = await makeTextPdf([1, 2, 3].map((n) => [`This is page number ${n} of three`]));
    const layout = await pdf.layout(bytes, { maxPages: 2 });
    expect(layout.pageCount).toBe(3);
    expect(layout.pages.map((p) => texts(p))).toEqual([
      ['This is page number 1 of three'],
      ['This is page number 2 of three'],
    ]);
  });

  it.each([
    ['garbage', Buffer.from('this is not a PDF at all'), 'Invalid document: the file is not a readable PDF'],
    ['an empty file', Buffer.alloc(0), 'Invalid document: the file is empty'],
    ['a PNG', renderReceiptImage(), 'Invalid document: the file is not a readable PDF'],
  ])('refuses %s with a 400 invalid_document', async (_name, bytes, message) => {
    const error = await failure(pdf.layout(bytes));
    expect(error).toMatchObject({ status: 400, code: 'invalid_document', message });
  });

  it('refuses a truncated PDF', async () => {
    const bytes = await makeTextPdf([['Some text that will be cut off']]);
    const error = await failure(pdf.layout(bytes.subarray(0, bytes.length >> 2)));
    expect(error).toMatchObject({ status: 400, code: 'invalid_document' });
  });

  it('destroys documents still open when closed', async () => {
    const engine = createPdfEngine({ ocr: scriptedOcr(0), logger: silent });
    const doc = await engine.open(await makeTextPdf([['A page that is never read by anyone']]));
    expect(doc.pageCount).toBe(1);
    await engine.close();
    await expect(doc.readPage(0)).rejects.toThrow();
  });
});

describe('PDF engine: scanned pages and per-page failures', () => {
  it('retries a failing page and reports it as an error with a safe message after three tries', async () => {
    const ocr = scriptedOcr(Infinity);
    const warnings: string[] = [];
    const logger = createLogger('warn', (line) => void warnings.push(line));
    const pdf = createPdfEngine({ ocr, logger });
    const bytes = await makePdf([{ lines: ['A text page that reads fine'] }, { png: renderReceiptImage() }]);
    const layout = await pdf.layout(bytes);
    expect(ocr.calls).toBe(3);
    expect(warnings).toHaveLength(3);
    expect(layout.pages[0]).toMatchObject({ status: 'ok', source: 'text-layer' });
    expect(layout.pages[1]).toEqual({
      index: 1,
      width: 480,
      height: 672,
      source: 'text-layer',
      lines: [],
      status: 'error',
      error: 'Page 2 could not be read. Please retry.',
    });
    await pdf.close();
  });

  it('does not retry a page too large to render and says what to change', async () => {
    const ocr = scriptedOcr(0);
    const pdf = createPdfEngine({ ocr, logger: silent });
    const layout = await pdf.layout(await makeScannedPdf(renderReceiptImage()), { dpi: 8000 });
    expect(ocr.calls).toBe(0);
    expect(layout.pages[0]).toMatchObject({ status: 'error' });
    expect(layout.pages[0]?.error).toMatch(/too large to render at 8000 dpi; send a lower document_dpi/);
    await pdf.close();
  });

  it('reads only the pages asked for and reports progress', async () => {
    const pdf = createPdfEngine({ ocr: scriptedOcr(0), logger: silent });
    const bytes = await makeTextPdf([['First page text here'], ['Second page text here'], ['Third page text here']]);
    const progress: string[] = [];
    const layout = await pdf.layout(bytes, {
      pageIndices: [2, 0, 9],
      onProgress: (d, t) => progress.push(`${d}/${t}`),
    });
    expect(layout.pages.map((p) => p.index)).toEqual([0, 2]);
    expect(layout.pageCount).toBe(3);
    expect(progress).toEqual(['1/2', '2/2']);
    await pdf.close();
  });

  it('succeeds on the third try', async () => {
    const ocr = scriptedOcr(2);
    const pdf = createPdfEngine({ ocr, logger: silent }, { dpi: 72 });
    const layout = await pdf.layout(await makeScannedPdf(renderReceiptImage()));
    expect(ocr.calls).toBe(3);
    expect(layout.pages[0]).toMatchObject({ status: 'ok', source: 'ocr', width: 480, height: 672 });
    expect(texts(layout.pages[0])).toEqual(['scanned']);
    await pdf.close();
  });

  describe('cancelled work (the work signal aborts)', () => {
    it('stops starting pages: the pages already being read finish, the rest are never read, layout rejects', async () => {
      const cancel = new CancelController();
      const ocr = scriptedOcr(0);
      const recognize = ocr.recognize.bind(ocr);
      // The first page read cancels the work, as a client leaving mid-document would.
      ocr.recognize = async (image, opts) => {
        if (ocr.calls === 0) cancel.abort();
        return recognize(image, opts);
      };
      const logs: string[] = [];
      const pdf = createPdfEngine({ ocr, logger: createLogger('info', (line) => void logs.push(line)) });
      const bytes = await makeScannedPdf(Array.from({ length: 6 }, () => renderReceiptImage()));
      const progress: number[] = [];
      const error = await runForTenant(
        'org',
        () => pdf.layout(bytes, { dpi: 36, onProgress: (done) => progress.push(done) }),
        cancel.signal,
      ).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WorkCancelledError);
      // Two lanes: at most the two pages started before the abort were read; four of six never were.
      expect(ocr.calls).toBeLessThanOrEqual(2);
      expect(progress.length).toBeLessThanOrEqual(2);
      expect(logs.some((l) => l.includes('pdf read cancelled'))).toBe(true);
      await pdf.close();
    });

    it('does not retry a page whose read was cancelled, nor report it as a failed page', async () => {
      const cancel = new CancelController();
      let calls = 0;
      const warnings: string[] = [];
      const ocr = {
        // What the OCR pool does for a read whose signal aborted while it waited for a worker.
        async recognize(): Promise<LayoutPage> {
          calls += 1;
          cancel.abort();
          throw new WorkCancelledError();
        },
      };
      const pdf = createPdfEngine({ ocr, logger: createLogger('warn', (line) => void warnings.push(line)) });
      const bytes = await makeScannedPdf(renderReceiptImage());
      await expect(runForTenant('org', () => pdf.layout(bytes, { dpi: 36 }), cancel.signal)).rejects.toBeInstanceOf(
        WorkCancelledError,
      );
      expect(calls).toBe(1);
      expect(warnings).toEqual([]);
      await pdf.close();
    });

    it('reads nothing when the work was cancelled before it started', async () => {
      const cancel = new CancelController();
      cancel.abort();
      const ocr = scriptedOcr(0);
      const pdf = createPdfEngine({ ocr, logger: silent });
      const bytes = await makeScannedPdf(renderReceiptImage());
      await expect(runForTenant('org', () => pdf.layout(bytes), cancel.signal)).rejects.toBeInstanceOf(
        WorkCancelledError,
      );
      expect(ocr.calls).toBe(0);
      await pdf.close();
    });
  });

  describe('with the real OCR engine', () => {
    let ocr: OcrEngine;
    beforeAll(() => {
      ocr = createOcrEngine({ logger: silent, workers: 1 });
    });
    afterAll(() => ocr.close());

    it('renders an image-only page at the document dpi and OCRs it', async () => {
      const pdf = createPdfEngine({ ocr, logger: silent });
      const bytes = await makePdf([{ lines: ['Cover page of the scanned receipt'] }, { png: renderReceiptImage() }]);
      const layout = await pdf.layout(bytes);
      const scanned = layout.pages[1];
      // A 480×672 pt page at the default 150 dpi is 1000×1400 pixels.
      expect(scanned).toMatchObject({ index: 1, source: 'ocr', status: 'ok', width: 1000, height: 1400 });
      expect(texts(scanned)).toEqual(
        expect.arrayContaining(['GREENLEAF GROCERY LTD', 'TOTAL 26.22', 'Thank you for shopping!']),
      );
      const total = scanned?.lines.find((l) => l.text === 'TOTAL 26.22');
      expect(total?.box.x0).toBeGreaterThan(50);
      expect(total?.box.y0).toBeGreaterThan(1100);
      expect(total?.box.y1).toBeLessThan(1170);
      await pdf.close();
    });
  });
});

describe('text-layer grouping', () => {
  const item = (str: string, x: number, y: number, width: number): PdfTextItem => ({
    str,
    transform: [10, 0, 0, 10, x, y],
    width,
    fontName: 'f',
  });
  // A page 100 pt high with pdfjs's usual flip: y grows downwards from the top.
  const toPage = (x: number, y: number): [number, number] => [x, 100 - y];

  it('glues a word split across runs, keeps spaced words apart and orders lines top to bottom', () => {
    const words = placeWords(
      [item('low', 0, 20, 15), item('Hel', 0, 80, 15), item('lo world', 15, 80, 40), item('again', 60, 80.5, 25)],
      { f: { ascent: 0.8, descent: -0.2 } },
      toPage,
    );
    const lines = groupIntoLines(words);
    expect(lines.map((l) => l.text)).toEqual(['Hello world again', 'low']);
    expect(lines[0]?.words.map((w) => w.box)).toEqual([
      { x0: 0, y0: 12, x1: 25, y1: 22 },
      { x0: 30, y0: 12, x1: 55, y1: 22 },
      { x0: 60, y0: 11.5, x1: 85, y1: 21.5 },
    ]);
  });

  it('skips whitespace-only runs', () => {
    expect(placeWords([item('   ', 0, 0, 10), item('', 0, 0, 0)], {}, toPage)).toEqual([]);
  });
});

describe('PDF engine: request deadline', () => {
  it('starts no page once the deadline has passed and says why, without retrying', async () => {
    const ocr = scriptedOcr(0);
    const pdf = createPdfEngine({ ocr, logger: silent });
    try {
      const bytes = await makeTextPdf([['First page with enough text'], ['Second page with enough text']]);
      const late = await pdf.layout(bytes, { deadlineMs: Date.now() - 1 });
      expect(late.pages.map((p) => p.status)).toEqual(['error', 'error']);
      expect(late.pages[0]?.error).toMatch(/time limit ran out/);
      expect(late.pages[0]?.error).not.toMatch(/Please retry/);
      const inTime = await pdf.layout(bytes, { deadlineMs: Date.now() + 60_000 });
      expect(inTime.pages.map((p) => p.status)).toEqual(['ok', 'ok']);
    } finally {
      await pdf.close();
    }
  });
});
