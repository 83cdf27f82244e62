/**
 * Plain text as a layout, so `fill_json_schema` can fill a schema from text a model or a skill produced (an email
 * body, fetched HTML stripped to text) with the same extractor it uses on OCR output. Boxes are synthetic: one row
 * per line, one column per character, which keeps "label: value" and same-line relations intact.
 */
import type { DocumentLayout, LayoutLine } from '../../src/agents/sdk';

const CHAR_W = 8;
const LINE_H = 20;

export function textLayout(text: string): DocumentLayout {
  const rows = text.split(/\r?\n/).filter((row) => row.trim().length > 0);
  const lines: LayoutLine[] = rows.map((row, r) => {
    const y0 = r * LINE_H;
    const words = [...row.matchAll(/\S+/g)].map((m) => ({
      text: m[0],
      confidence: 1,
      box: { x0: m.index * CHAR_W, y0, x1: (m.index + m[0].length) * CHAR_W, y1: y0 + LINE_H - 4 },
    }));
    const x0 = words[0]?.box.x0 ?? 0;
    const x1 = words.at(-1)?.box.x1 ?? 0;
    return { text: row.trim(), confidence: 1, words, box: { x0, y0, x1, y1: y0 + LINE_H - 4 } };
  });
  const width = Math.max(CHAR_W, ...lines.map((l) => l.box.x1));
  return {
    pages: [
      { index: 0, width, height: Math.max(LINE_H, rows.length * LINE_H), source: 'text-layer', lines, status: 'ok' },
    ],
  };
}
