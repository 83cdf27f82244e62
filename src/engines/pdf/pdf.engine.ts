/**
 * The PDF engine: pages of a PDF as layout pages, from the text layer where there is one and from OCR of the
 * rendered page where there is not (scans).
 *
 * Each page is tried up to `attempts` times; a page that still fails comes back with `status: 'error'` and a safe
 * message, and the other pages are still returned — deciding what a partly failed document means (e.g. 502 when
 * every page failed) is the service's job. An unreadable file is a 400 `invalid_document` before any page is read.
 *
 * Work that nobody wants any more (its work signal, lib/work-tenant.ts, aborted: the client left or its deadline
 * answered first) stops starting pages: pages already being read finish, the others are not read, and `layout`
 * rejects with `WorkCancelledError`. A cancelled page is not retried and not reported as a failed page.
 *
 * Scanned pages are rendered at 150 dpi by default. Measured on a US-Letter page of invoice text (8, 10 and 12 pt)
 * rendered at 300 dpi, blurred, rotated 1° and JPEG-compressed at q40, then embedded as a scan: CER at 100 dpi
 * 0.5–0.65 % (and 8 pt text needs the OCR engine's enlarged second read, 1.5 s), at 150 dpi 0–0.16 %, at 200 dpi
 * 0–0.16 % and at 300 dpi 0 %; time per page 0.9–1.1 s at 150 dpi, 1.1–1.3 s at 200, 1.2–1.4 s at 300 (one OCR
 * worker). 150 dpi is where accuracy stops improving, so higher resolutions only cost time and memory.
 */
import type { PDFDocumentProxy } from 'pdfjs-dist';
import { AppError, BadRequestError } from '../../domain/errors';
import { isCancellation, throwIfCancelled, WorkCancelledError, type CancelSignal } from '../../lib/cancel';
import type { Logger } from '../../lib/logger';
import { currentWorkSignal } from '../../lib/work-tenant';
import type { OcrEngine } from '../ocr/ocr.engine';
import type { DocumentLayout, LayoutPage } from '../types';
import { renderPage, type RenderedPage } from './page-render';
import { openPdf } from './pdfjs-loader';
import { groupIntoLines, placeWords, type PdfTextItem } from './text-layer';

export interface PdfEngineDeps {
  /** Reads pages that have no text layer; only `recognize` is used, so tests can pass a fake. */
  ocr: Pick<OcrEngine, 'recognize'>;
  logger: Logger;
}

export interface PdfEngineOptions {
  /** Resolution scanned pages are rendered at for OCR (default 150; scale = dpi / 72). */
  dpi?: number;
  /** Pages read per document at most (default 1000); later pages are skipped, `pageCount` still says how many. */
  maxPages?: number;
  /** Tries per page before it is reported as an error (default 3). */
  attempts?: number;
  /** Pages read at once per document (default 2: one renders while another is OCR'd). */
  concurrency?: number;
  /** A text layer with fewer non-space characters than this is treated as a scan and OCR'd (default 16). */
  minTextChars?: number;
}

export interface PdfReadOptions {
  dpi?: number;
  maxPages?: number;
  /** 0-based pages to read (spec `page_indices`); out-of-range indices are ignored. Default: every page. */
  pageIndices?: number[];
  /** Called after each page with pages done and pages to read. */
  onProgress?: (done: number, total: number) => void;
  /**
   * Epoch ms after which no further page is started (pages already started finish): a long scan stops taking the
   * shared OCR pool once its request's time is up. Pages not read are reported as errors saying why.
   */
  deadlineMs?: number;
}

/** Largest raster a scanned page is rendered to (width × height); larger is a deterministic failure. */
export const MAX_RENDER_PIXELS = 60_000_000;

/** A page that will fail the same way every time: not retried; the message says what to change. */
class DeterministicPageError extends Error {}

/** A document layout plus how many pages the file has (more than `pages.length` when `maxPages` cut it). */
export interface PdfLayout extends DocumentLayout {
  pageCount: number;
}

/** An open PDF. Pages may be read concurrently. */
export interface PdfDocument {
  readonly pageCount: number;
  /** Reads one page (0-based) once, throwing on failure; `layout` adds the retries. */
  readPage(index: number, opts?: { dpi?: number }): Promise<LayoutPage>;
  /**
   * Reads pages (up to `maxPages`) with retries; failed pages have `status: 'error'`.
   * @throws WorkCancelledError when the work signal aborts before every page was started.
   */
  layout(opts?: PdfReadOptions): Promise<PdfLayout>;
  /** Renders one page (0-based) to PNG at `dpi` (lowered for very large pages); a bad index is a 400. */
  render(index: number, dpi: number): Promise<RenderedPage>;
  close(): Promise<void>;
}

export interface PdfEngine {
  /** Opens a PDF; throws a 400 `invalid_document` if it cannot be read. */
  open(pdf: Buffer): Promise<PdfDocument>;
  /** Opens, reads every page (up to `maxPages`) and closes. */
  layout(pdf: Buffer, opts?: PdfReadOptions): Promise<PdfLayout>;
  /** Destroys every document still open. */
  close(): Promise<void>;
}

/** Builds the PDF engine over an OCR engine (used only for pages without a text layer). */
export function createPdfEngine(deps: PdfEngineDeps, options: PdfEngineOptions = {}): PdfEngine {
  const defaults = {
    dpi: options.dpi ?? 150,
    maxPages: options.maxPages ?? 1000,
    attempts: Math.max(1, options.attempts ?? 3),
    concurrency: Math.max(1, options.concurrency ?? 2),
    minTextChars: options.minTextChars ?? 16,
  };
  const open = new Set<PDFDocumentProxy>();

  const wrap = (doc: PDFDocumentProxy): PdfDocument => {
    const readPage = async (index: number, opts: { dpi?: number } = {}): Promise<LayoutPage> => {
      const page = await doc.getPage(index + 1);
      try {
        const content = await page.getTextContent();
        const items = content.items.filter((item): item is PdfTextItem & typeof item => 'str' in item);
        const chars = items.reduce((n, item) => n + item.str.replace(/\s+/g, '').length, 0);
        if (chars >= defaults.minTextChars) {
          const viewport = page.getViewport({ scale: 1 });
          const toPage = (x: number, y: number): [number, number] => {
            const [px = 0, py = 0] = viewport.convertToViewportPoint(x, y) as number[];
            return [px, py];
          };
          const lines = groupIntoLines(placeWords(items, content.styles, toPage));
          const size = { width: round2(viewport.width), height: round2(viewport.height) };
          return { index, ...size, source: 'text-layer', lines, status: 'ok' };
        }
        const dpi = opts.dpi ?? defaults.dpi;
        const base = page.getViewport({ scale: dpi / 72 });
        if (base.width * base.height > MAX_RENDER_PIXELS) {
          throw new DeterministicPageError(
            `Page ${index + 1} is too large to render at ${dpi} dpi; send a lower document_dpi or a smaller page.`,
          );
        }
        const rendered = await renderPage(page, dpi);
        const ocr = await deps.ocr.recognize(rendered.png, { index });
        return { ...ocr, index, width: rendered.width, height: rendered.height, source: 'ocr' };
      } finally {
        page.cleanup();
      }
    };

    const readWithRetries = async (index: number, dpi: number, signal?: CancelSignal): Promise<LayoutPage> => {
      let last: unknown;
      for (let attempt = 1; attempt <= defaults.attempts; attempt += 1) {
        try {
          return await readPage(index, { dpi });
        } catch (error) {
          // Cancelled work is neither transient nor a failed page: it stops here.
          if (isCancellation(error, signal)) throw new WorkCancelledError();
          last = error;
          deps.logger.warn('pdf page failed', { page: index, attempt, error: describe(error) });
          if (error instanceof DeterministicPageError || isBrokenStructure(error)) break;
        }
      }
      const size = await pageSize(doc, index).catch(() => ({ width: 0, height: 0 }));
      return { index, ...size, source: 'text-layer', lines: [], status: 'error', error: safeMessage(index, last) };
    };

    const timedOutPage = async (index: number): Promise<LayoutPage> => {
      const size = await pageSize(doc, index).catch(() => ({ width: 0, height: 0 }));
      const error = `Page ${index + 1} was not read: the request's time limit ran out; send fewer pages (page_indices).`;
      return { index, ...size, source: 'text-layer', lines: [], status: 'error', error };
    };

    return {
      pageCount: doc.numPages,
      readPage,
      async layout(opts = {}) {
        const limit = Math.max(0, opts.maxPages ?? defaults.maxPages);
        const wanted = opts.pageIndices
          ? [...new Set(opts.pageIndices)]
              .filter((i) => Number.isInteger(i) && i >= 0 && i < doc.numPages)
              .sort((a, b) => a - b)
          : Array.from({ length: doc.numPages }, (_, i) => i);
        const indices = wanted.slice(0, limit);
        const dpi = opts.dpi ?? defaults.dpi;
        const signal = currentWorkSignal();
        let done = 0;
        try {
          const pages = await mapLimit(indices.length, defaults.concurrency, async (i) => {
            throwIfCancelled(signal);
            const index = indices[i] as number;
            const page =
              opts.deadlineMs !== undefined && Date.now() > opts.deadlineMs
                ? await timedOutPage(index)
                : await readWithRetries(index, dpi, signal);
            done += 1;
            opts.onProgress?.(done, indices.length);
            return page;
          });
          return { pageCount: doc.numPages, pages };
        } catch (error) {
          if (error instanceof WorkCancelledError) {
            deps.logger.info('pdf read cancelled', { pagesRead: done, pages: indices.length });
          }
          throw error;
        }
      },
      async render(index, dpi) {
        if (!Number.isInteger(index) || index < 0 || index >= doc.numPages) {
          throw new BadRequestError(
            `Page ${index} does not exist: the document has ${doc.numPages} page(s), numbered from 0.`,
            'invalid_document',
            'page_index',
          );
        }
        const page = await doc.getPage(index + 1);
        try {
          return await renderPage(page, dpi);
        } finally {
          page.cleanup();
        }
      },
      async close() {
        open.delete(doc);
        await doc.destroy();
      },
    };
  };

  const engine: PdfEngine = {
    async open(pdf) {
      const doc = await openPdf(pdf);
      open.add(doc);
      return wrap(doc);
    },
    async layout(pdf, opts) {
      const doc = await engine.open(pdf);
      try {
        return await doc.layout(opts);
      } finally {
        await doc.close();
      }
    },
    async close() {
      const docs = [...open];
      open.clear();
      await Promise.allSettled(docs.map((d) => d.destroy()));
    },
  };
  return engine;
}

/**
 * Runs `fn` for 0..count-1 with at most `limit` at once; results keep their index order. The first failure stops
 * every lane from starting more, and is thrown once the calls already running have settled (so nothing of the
 * document is still being read when the caller closes it).
 */
async function mapLimit<T>(count: number, limit: number, fn: (index: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  let failure: { error: unknown } | null = null;
  const lane = async (): Promise<void> => {
    while (next < count && failure === null) {
      const i = next;
      next += 1;
      try {
        results[i] = await fn(i);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, lane));
  if (failure !== null) throw (failure as { error: unknown }).error;
  return results;
}

async function pageSize(doc: PDFDocumentProxy, index: number): Promise<{ width: number; height: number }> {
  const viewport = (await doc.getPage(index + 1)).getViewport({ scale: 1 });
  return { width: round2(viewport.width), height: round2(viewport.height) };
}

/** Spec error rule 7: deterministic failures say what to change; transient ones end with "Please retry." */
function safeMessage(index: number, error: unknown): string {
  if (error instanceof DeterministicPageError) return error.message;
  if (isBrokenStructure(error)) return `Page ${index + 1} could not be read: the PDF's page tree is broken (circular).`;
  const reason = error instanceof AppError ? ` (${error.message})` : '';
  return `Page ${index + 1} could not be read${reason}. Please retry.`;
}

/** pdfjs's errors for a malformed page tree: the same on every try, so not transient. */
function isBrokenStructure(error: unknown): boolean {
  return error instanceof Error && /circular reference|page tree|pages tree/i.test(error.message);
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

const round2 = (v: number): number => Math.round(v * 100) / 100;
