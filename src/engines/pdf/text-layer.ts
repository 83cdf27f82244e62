/**
 * Turns a pdfjs page's text content (positioned runs of text in PDF user space, origin bottom-left) into layout
 * lines in page points with a top-left origin: runs are split into words with boxes proportional to their
 * characters, fragments of one word are glued back together, and words are grouped into lines by baseline.
 */
import type { Box, LayoutLine } from '../types';
import { lineFromWords, sortReadingOrder, unionBox } from '../ocr/layout-geometry';

/** The fields of a pdfjs `TextItem` this module reads. */
export interface PdfTextItem {
  str: string;
  /** [a, b, c, d, e, f]: the text matrix times the font size; (e, f) is the run's origin on the baseline. */
  transform: number[];
  /** Advance of the whole run in user space. */
  width: number;
  fontName: string;
}

/** Maps a point in PDF user space to page space (pdfjs's `viewport.convertToViewportPoint` at scale 1). */
export type PointMapper = (x: number, y: number) => [number, number];

interface PlacedWord {
  text: string;
  box: Box;
  /** No space before/after it inside its run, so it may continue a word from a neighbouring run. */
  glueLeft: boolean;
  glueRight: boolean;
}

/** Fallbacks when the font reports no metrics: typical Latin ascent and descent as a share of the size. */
const ASCENT = 0.8;
const DESCENT = 0.2;

/** Splits each run on whitespace and places every word by its share of the run's characters. */
export function placeWords(
  items: PdfTextItem[],
  styles: Record<string, { ascent?: number; descent?: number }>,
  toPage: PointMapper,
): PlacedWord[] {
  const words: PlacedWord[] = [];
  for (const item of items) {
    const chars = [...item.str];
    if (chars.length === 0 || item.str.trim() === '') continue;
    const [a = 1, b = 0, c = 0, d = 1, e = 0, f = 0] = item.transform;
    const size = Math.hypot(c, d) || 1;
    const cos = a / (Math.hypot(a, b) || 1);
    const sin = b / (Math.hypot(a, b) || 1);
    const style = styles[item.fontName];
    const ascent = style?.ascent && style.ascent > 0 ? style.ascent : ASCENT;
    const descent = style?.descent && style.descent < 0 ? -style.descent : DESCENT;
    const perChar = item.width / chars.length;
    const pattern = /\S+/gu;
    const text = chars.join('');
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      const start = [...text.slice(0, match.index)].length;
      const length = [...match[0]].length;
      const along = [start * perChar, (start + length) * perChar];
      const across = [-descent * size, ascent * size];
      const corners = along.flatMap((u) =>
        across.map((v) => {
          const [x, y] = toPage(e + u * cos - v * sin, f + u * sin + v * cos);
          return { x0: x, y0: y, x1: x, y1: y };
        }),
      );
      words.push({
        text: match[0],
        box: unionBox(corners),
        glueLeft: start === 0,
        glueRight: start + length === chars.length,
      });
    }
  }
  return words;
}

/** Groups placed words into lines (shared vertical band), glues split words, and sorts into reading order. */
export function groupIntoLines(words: PlacedWord[]): LayoutLine[] {
  const byCentre = [...words].sort((p, q) => centre(p.box) - centre(q.box));
  const rows: { band: Box; words: PlacedWord[] }[] = [];
  for (const word of byCentre) {
    // Rows are created top to bottom, so the row a word belongs to is among the last ones.
    let row: (typeof rows)[number] | undefined;
    for (let i = rows.length - 1; i >= 0 && !row; i -= 1) {
      const candidate = rows[i] as (typeof rows)[number];
      if (sameRow(candidate.band, word.box)) row = candidate;
      else if (candidate.band.y1 < word.box.y0) break;
    }
    if (row) {
      row.words.push(word);
      row.band = unionBox([row.band, word.box]);
    } else {
      rows.push({ band: word.box, words: [word] });
    }
  }
  const lines = rows.map((row) => {
    const merged = glue(row.words.sort((p, q) => p.box.x0 - q.box.x0));
    return lineFromWords(
      merged.map((w) => ({ text: w.text, box: roundBox(w.box), confidence: 1 })),
      1,
    );
  });
  return sortReadingOrder(lines);
}

const centre = (b: Box): number => (b.y0 + b.y1) / 2;

/** A word joins a row when its vertical centre lies inside the row's band and their heights overlap by half. */
function sameRow(band: Box, box: Box): boolean {
  const overlap = Math.min(band.y1, box.y1) - Math.max(band.y0, box.y0);
  const c = centre(box);
  return c >= band.y0 && c <= band.y1 && overlap >= 0.5 * Math.min(band.y1 - band.y0, box.y1 - box.y0);
}

/** Joins neighbours that come from adjacent runs with no space between them (kerned or re-encoded words). */
function glue(row: PlacedWord[]): PlacedWord[] {
  const out: PlacedWord[] = [];
  for (const word of row) {
    const prev = out[out.length - 1];
    const height = word.box.y1 - word.box.y0;
    if (prev && prev.glueRight && word.glueLeft && word.box.x0 - prev.box.x1 < 0.15 * height) {
      out[out.length - 1] = {
        text: prev.text + word.text,
        box: unionBox([prev.box, word.box]),
        glueLeft: prev.glueLeft,
        glueRight: word.glueRight,
      };
    } else {
      out.push(word);
    }
  }
  return out;
}

function roundBox(b: Box): Box {
  const r = (v: number): number => Math.round(v * 100) / 100;
  return { x0: r(b.x0), y0: r(b.y0), x1: r(b.x1), y1: r(b.y1) };
}
