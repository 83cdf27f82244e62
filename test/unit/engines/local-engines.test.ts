import { createLocalEngines, type LocalEngines } from '../../../src/engines/local/document-engines';
import { createLogger } from '../../../src/lib/logger';
import { makePdf, renderTextImage } from '../../helpers/media-fixtures';

describe('local engines', () => {
  let engines: LocalEngines;
  beforeAll(() => {
    engines = createLocalEngines({ ocrWorkers: 1, logger: createLogger('silent') });
  });
  afterAll(() => engines.close());

  it('sizes the OCR pool as asked', () => {
    expect(engines.ocr.workers).toBe(1);
  });

  it('turns an image into a one-page layout', async () => {
    const image = renderTextImage(['Order 5531 shipped', 'Balance 0.00'], { fontSize: 30, format: 'jpeg' });
    const layout = await engines.layoutFromImage(image);
    expect(layout.pages).toHaveLength(1);
    expect(layout.pages[0]).toMatchObject({ index: 0, source: 'ocr', status: 'ok' });
    expect(layout.pages[0]?.lines.map((l) => l.text)).toEqual(['Order 5531 shipped', 'Balance 0.00']);
  });

  it('refuses media the image engine does not accept, before OCR sees it', async () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="90" height="90"><text>hi</text></svg>');
    await expect(engines.layoutFromImage(svg)).rejects.toMatchObject({ status: 400, code: 'invalid_media' });
  });

  it('turns a PDF with text and scanned pages into a layout', async () => {
    const scan = renderTextImage(['Scanned statement page'], { fontSize: 30, width: 600 });
    const pdf = await makePdf([{ lines: ['Statement for March with a text layer'] }, { png: scan }]);
    const layout = await engines.layoutFromPdf(pdf, { dpi: 150, maxPages: 5 });
    expect(layout.pageCount).toBe(2);
    expect(layout.pages.map((p) => [p.source, p.lines.map((l) => l.text)])).toEqual([
      ['text-layer', ['Statement for March with a text layer']],
      ['ocr', ['Scanned statement page']],
    ]);
  });
});
