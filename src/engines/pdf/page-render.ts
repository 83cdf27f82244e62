/**
 * Renders one PDF page to a PNG with pdfjs on an @napi-rs/canvas canvas, for pages that have no text layer and must
 * be OCR'd. The PNG is encoded off the main thread (`canvas.encode`).
 */
import { createCanvas } from '@napi-rs/canvas';
import type { PDFPageProxy } from 'pdfjs-dist';

export interface RenderedPage {
  png: Buffer;
  width: number;
  height: number;
}

/** Largest rendered page in pixels (a 200-dpi A0 poster would be ~62 Mpx); the dpi is lowered to fit. */
const MAX_PIXELS = 25_000_000;

/** Renders `page` at `dpi` (72 dpi = one pixel per point) on a white background. */
export async function renderPage(page: PDFPageProxy, dpi: number): Promise<RenderedPage> {
  const base = page.getViewport({ scale: 1 });
  let scale = dpi / 72;
  if (base.width * base.height * scale * scale > MAX_PIXELS) {
    scale = Math.sqrt(MAX_PIXELS / (base.width * base.height));
  }
  const viewport = page.getViewport({ scale });
  const width = Math.max(1, Math.round(viewport.width));
  const height = Math.max(1, Math.round(viewport.height));
  const canvas = createCanvas(width, height);
  const context = canvas.getContext('2d');
  context.fillStyle = '#ffffff';
  context.fillRect(0, 0, width, height);
  // pdfjs types its canvas as the DOM's (absent from our lib); @napi-rs/canvas implements the part it uses.
  await page.render({ canvas, viewport }).promise;
  return { png: await canvas.encode('png'), width, height };
}
