/**
 * Contracts between the local engines and the services that use them.
 *
 * Every engine turns bytes into a {@link DocumentLayout}: pages of words with boxes, whatever the source (OCR of an
 * image, the text layer of a PDF, OCR of sampled video frames). Field extraction then reads only the layout, so the
 * same extractor serves images, documents and video.
 */

/** An axis-aligned box in page pixels (PDF points for text-layer pages), origin top-left. */
export interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

export interface LayoutWord {
  text: string;
  box: Box;
  /** 0..1; text-layer words are 1. */
  confidence: number;
}

export interface LayoutLine {
  text: string;
  box: Box;
  confidence: number;
  words: LayoutWord[];
}

export type PageSource = 'ocr' | 'text-layer';

export interface LayoutPage {
  /** 0-based page (or frame) index. */
  index: number;
  width: number;
  height: number;
  source: PageSource;
  /** Reading order, top to bottom. */
  lines: LayoutLine[];
  status: 'ok' | 'error';
  /** Set when status is 'error': a message safe to show to the caller. */
  error?: string;
  /** Timestamp in seconds for video frames. */
  timeS?: number;
}

export interface DocumentLayout {
  pages: LayoutPage[];
}

/** A JSON schema as received from callers or the hub (validated with ajv before use). */
export type JsonSchema = Record<string, unknown>;

export interface FieldGrounding {
  page: number;
  box: Box;
}

/** What schema-guided extraction returns: the data plus per-leaf-path confidence and grounding. */
export interface ExtractionResult {
  data: Record<string, unknown>;
  /** Keyed by JSON pointer-ish dotted path (`total`, `items.0.price`). */
  confidence: Record<string, number>;
  grounding: Record<string, FieldGrounding>;
}
