/**
 * The embedded engines in one bundle: OCR, images and PDFs, wired together and closed together.
 *
 * The composition root builds this once; services then ask for a layout of an image or a PDF without knowing which
 * library reads it. Nothing here reads configuration or the environment: the caller passes the numbers in.
 */
import type { Logger } from '../../lib/logger';
import { createImageEngine, type ImageEngine, type ImageEngineOptions } from '../image/image.engine';
import { createOcrEngine, type OcrEngine, type OcrEngineOptions } from '../ocr/ocr.engine';
import {
  createPdfEngine,
  type PdfEngine,
  type PdfEngineOptions,
  type PdfLayout,
  type PdfReadOptions,
} from '../pdf/pdf.engine';
import type { DocumentLayout } from '../types';
import { tracingOn, withSpan } from '../../lib/tracing';

export interface LocalEnginesOptions {
  logger: Logger;
  /** OCR pool size (default `os.availableParallelism()`). */
  ocrWorkers?: number;
  ocr?: Omit<OcrEngineOptions, 'logger' | 'workers'>;
  image?: ImageEngineOptions;
  pdf?: PdfEngineOptions;
}

export interface LocalEngines {
  ocr: OcrEngine;
  image: ImageEngine;
  pdf: PdfEngine;
  /** Validates an image (400 `invalid_media` if unusable) and OCRs it into a one-page layout. */
  layoutFromImage(image: Buffer): Promise<DocumentLayout>;
  /** Reads a PDF (400 `invalid_document` if unusable); pages that failed three times have `status: 'error'`. */
  layoutFromPdf(pdf: Buffer, opts?: PdfReadOptions): Promise<PdfLayout>;
  /** Destroys open documents, then waits for queued OCR and terminates the workers. */
  close(): Promise<void>;
}

/** Builds OCR, image and PDF engines sharing one OCR pool. */
export function createLocalEngines(options: LocalEnginesOptions): LocalEngines {
  const { logger } = options;
  const ocr = tracedOcr(
    createOcrEngine({
      ...options.ocr,
      logger,
      ...(options.ocrWorkers === undefined ? {} : { workers: options.ocrWorkers }),
    }),
  );
  const image = createImageEngine(options.image);
  const pdf = createPdfEngine({ ocr, logger }, options.pdf);
  return {
    ocr,
    image,
    pdf,
    async layoutFromImage(buffer) {
      await image.inspect(buffer);
      return { pages: [await ocr.recognize(buffer)] };
    },
    layoutFromPdf: (buffer, opts) => pdf.layout(buffer, opts),
    async close() {
      await pdf.close();
      await ocr.close();
    },
  };
}

/** Each OCR read in a span (`ocr`, with the page's size and the lines read) when tracing is on. */
function tracedOcr(engine: OcrEngine): OcrEngine {
  const recognize = engine.recognize.bind(engine);
  engine.recognize = (image, opts) =>
    tracingOn()
      ? withSpan('ocr', { 'prism.ocr.bytes': image.length }, async (span) => {
          const page = await recognize(image, opts);
          span?.setAttribute('prism.ocr.lines', page.lines.length);
          return page;
        })
      : recognize(image, opts);
  return engine;
}
