/**
 * Generated media for engine tests and benchmarks: text rendered to PNG with the system DejaVu fonts, and PDFs
 * (text-layer pages and image-only "scanned" pages) built with pdf-lib. Generating them keeps the repository free of
 * binary fixtures and lets each test say exactly which words it expects to read back.
 */
import { createCanvas } from '@napi-rs/canvas';
import { PDFDocument, StandardFonts, rgb } from 'pdf-lib';

export interface RenderTextOptions {
  /** Canvas width in pixels (default 1000). */
  width?: number;
  /** Canvas height in pixels (default: just tall enough for the lines). */
  height?: number;
  /** Font size in pixels (default 28). */
  fontSize?: number;
  /** A fontconfig family (default `DejaVu Sans`); `DejaVu Sans Mono` suits receipts. */
  fontFamily?: string;
  /** Baseline-to-baseline distance in pixels (default 1.6 × fontSize). */
  lineHeight?: number;
  /** Left and top margin in pixels (default 40). */
  margin?: number;
  /** Output encoding (default png). */
  format?: 'png' | 'jpeg';
}

/** Where a rendered line ended up, in image pixels, origin top-left. */
export interface RenderedLine {
  text: string;
  box: { x0: number; y0: number; x1: number; y1: number };
}

/** Renders one line of text per entry, black on white, and reports each line's box. */
export function renderTextImageWithBoxes(
  lines: string[],
  opts: RenderTextOptions = {},
): { image: Buffer; width: number; height: number; lines: RenderedLine[] } {
  const fontSize = opts.fontSize ?? 28;
  const lineHeight = opts.lineHeight ?? Math.round(fontSize * 1.6);
  const margin = opts.margin ?? 40;
  const width = opts.width ?? 1000;
  const height = opts.height ?? margin * 2 + lineHeight * lines.length;
  const canvas = createCanvas(width, height);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, width, height);
  ctx.fillStyle = '#000000';
  ctx.font = `${fontSize}px "${opts.fontFamily ?? 'DejaVu Sans'}"`;
  ctx.textBaseline = 'alphabetic';
  const rendered: RenderedLine[] = [];
  lines.forEach((text, i) => {
    const baseline = margin + lineHeight * i + fontSize;
    ctx.fillText(text, margin, baseline);
    const m = ctx.measureText(text);
    rendered.push({
      text,
      box: {
        x0: margin,
        y0: Math.round(baseline - m.actualBoundingBoxAscent),
        x1: Math.round(margin + m.width),
        y1: Math.round(baseline + m.actualBoundingBoxDescent),
      },
    });
  });
  const image = opts.format === 'jpeg' ? canvas.toBuffer('image/jpeg', 90) : canvas.toBuffer('image/png');
  return { image, width, height, lines: rendered };
}

/** Renders text lines to an image (PNG unless `format: 'jpeg'`). */
export function renderTextImage(lines: string[], opts: RenderTextOptions = {}): Buffer {
  return renderTextImageWithBoxes(lines, opts).image;
}

/** A 19-line shop receipt with amounts, in the spirit of the receipts the extractor reads. */
export const RECEIPT_LINES: readonly string[] = [
  'GREENLEAF GROCERY LTD',
  '12 Harbour Road, Portsmouth',
  'Tel 023 9200 1122',
  'Date: 14/03/2025  Time: 18:42',
  'Receipt No: 004512',
  '--------------------------------',
  'Bananas 1kg            2.40',
  'Whole Milk 2L          1.85',
  'Sourdough Bread        3.20',
  'Free Range Eggs        2.95',
  'Cheddar Cheese         4.10',
  'Olive Oil 500ml        5.60',
  'Tomatoes               1.75',
  '--------------------------------',
  'SUBTOTAL              21.85',
  'VAT 20%                4.37',
  'TOTAL                 26.22',
  'CARD PAYMENT          26.22',
  'Thank you for shopping!',
];

/** How `renderReceiptImage` lays the receipt out (pass to `renderTextImageWithBoxes` to get line boxes too). */
export const RECEIPT_RENDER_OPTIONS: RenderTextOptions = {
  width: 1000,
  height: 1400,
  fontSize: 34,
  lineHeight: 66,
  margin: 60,
  fontFamily: 'DejaVu Sans Mono',
};

/** The synthetic receipt as a 1000×1400 PNG in DejaVu Sans Mono. */
export function renderReceiptImage(): Buffer {
  return renderTextImage([...RECEIPT_LINES], RECEIPT_RENDER_OPTIONS);
}

/** A piece of text placed on a US-Letter page: `x`, `y` in points from the top-left corner (`y` is the baseline). */
export interface PlacedText {
  text: string;
  x: number;
  y: number;
  size?: number;
}

/**
 * One PDF page: lines of text from the top-left margin, pieces of text placed anywhere (both give a text layer), or
 * an image (a scan with no text layer).
 */
export type PdfPageSpec =
  { lines: string[]; fontSize?: number } | { items: PlacedText[] } | { png: Buffer; dpi?: number };

/** Builds a PDF from page specs. Text pages are US Letter with Helvetica; image pages are sized at `dpi` (150). */
export async function makePdf(pages: PdfPageSpec[]): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const spec of pages) {
    if ('lines' in spec || 'items' in spec) {
      const page = doc.addPage([612, 792]);
      const size = 'lines' in spec ? (spec.fontSize ?? 12) : 12;
      const items: PlacedText[] =
        'lines' in spec
          ? spec.lines.map((text, i) => ({ text, x: 72, y: 72 + size + i * size * 1.8, size }))
          : spec.items;
      for (const item of items) {
        const s = item.size ?? size;
        page.drawText(item.text, { x: item.x, y: 792 - item.y, size: s, font, color: rgb(0, 0, 0) });
      }
    } else {
      const image = await doc.embedPng(spec.png);
      const scale = 72 / (spec.dpi ?? 150);
      const width = image.width * scale;
      const height = image.height * scale;
      doc.addPage([width, height]).drawImage(image, { x: 0, y: 0, width, height });
    }
  }
  return Buffer.from(await doc.save());
}

/** A PDF whose pages carry a text layer, one array of lines per page. */
export function makeTextPdf(pages: string[][]): Promise<Buffer> {
  return makePdf(pages.map((lines) => ({ lines })));
}

/** A PDF with one image-only page per PNG, as a scanner would produce. */
export function makeScannedPdf(png: Buffer | Buffer[]): Promise<Buffer> {
  return makePdf((Array.isArray(png) ? png : [png]).map((p) => ({ png: p })));
}
