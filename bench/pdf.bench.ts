/**
 * PDF benchmarks: Prism's text-layer path (open, text with positions, words and lines) on a 20-page invoice-like
 * PDF against bare pdfjs `getTextContent` on the same file, and a scanned page (render at 150 dpi + OCR) against
 * OCR of the same image handed over directly. Divide the text case by 20 for milliseconds per page.
 */
import { createOcrEngine } from '../src/engines/ocr/ocr.engine';
import { createPdfEngine } from '../src/engines/pdf/pdf.engine';
import { openPdf } from '../src/engines/pdf/pdfjs-loader';
import { createLogger } from '../src/lib/logger';
import { makeScannedPdf, makeTextPdf, renderReceiptImage } from '../test/helpers/media-fixtures';
import type { BenchCase } from './harness';

const PAGES = 20;

function invoicePage(n: number): string[] {
  const items = Array.from({ length: 24 }, (_, i) => {
    const qty = ((i * 7 + n) % 9) + 1;
    return `Item ${n}-${i + 1}   Widget type ${String.fromCharCode(65 + (i % 26))}   qty ${qty}   ${(qty * 4.25).toFixed(2)} EUR`;
  });
  return [
    `INVOICE 2025-${1000 + n}`,
    'Northwind Traders Ltd, 44 Market Street, Leeds',
    ...items,
    'Total due 1,234.56 EUR',
  ];
}

export async function pdfBenchmarks(): Promise<{ cases: BenchCase[]; close: () => Promise<void> }> {
  const logger = createLogger('silent');
  const ocr = createOcrEngine({ logger, workers: 1 });
  const pdf = createPdfEngine({ ocr, logger }, { dpi: 150 });
  const textPdf = await makeTextPdf(Array.from({ length: PAGES }, (_, n) => invoicePage(n + 1)));
  const receipt = renderReceiptImage();
  const scannedPdf = await makeScannedPdf(receipt);

  const cases: BenchCase[] = [
    {
      name: `text PDF, ${PAGES} pages (÷${PAGES} for ms/page)`,
      iterations: 15,
      baseline: {
        name: 'pdfjs open + getTextContent',
        run: async () => {
          const doc = await openPdf(textPdf);
          for (let i = 1; i <= doc.numPages; i += 1) {
            const page = await doc.getPage(i);
            await page.getTextContent();
            page.cleanup();
          }
          await doc.destroy();
        },
      },
      subject: { name: 'pdf.layout → lines and words', run: async () => void (await pdf.layout(textPdf)) },
    },
    {
      name: 'scanned PDF page (1000x1400 at 150 dpi)',
      iterations: 7,
      warmup: 2,
      baseline: { name: 'ocr.recognize of the PNG', run: async () => void (await ocr.recognize(receipt)) },
      subject: { name: 'pdf.layout (render + OCR)', run: async () => void (await pdf.layout(scannedPdf)) },
    },
  ];
  return {
    cases,
    close: async () => {
      await pdf.close();
      await ocr.close();
    },
  };
}
