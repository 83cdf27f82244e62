/**
 * Text clean-up for the issuer block: a company line stripped of edge noise and of a trailing registration number
 * (with a misread `SDN BHD` / `S/B` put right, also one glued into a single word), an address line stripped of stray marks, and the legibility test
 * (the weakest word's OCR confidence) that decides whether a name or address is reported at all.
 */
import { unionBox, type Row } from './layout-index';
import { squash } from './text-normalize';
import { ruleOn } from './rule-switches';

/** Names and addresses whose least legible word is below this OCR confidence are not reported (likely misread). */
export const MIN_WORD_CONFIDENCE = 0.3;

/** The lowest OCR confidence among the words of `rows` that carry text, ignoring words a repair vouched for. */
export function weakestWord(rows: Row[], fixed: Set<string>): number {
  const words = rows
    .flatMap((r) => r.words)
    .filter((w) => (w.text.match(/[A-Za-z0-9]/g) ?? []).length >= 2 && !fixed.has(w.text));
  return Math.min(1, ...words.map((w) => w.confidence));
}

/** Cleans a printed company line: edge noise, a trailing registration number, misread `SDN BHD`. */
export function cleanName(text: string): string {
  let t = text.replace(/\s+(co\.?\s*(reg|no)\b|company\s*no\b|roc\b|reg\.?\s*no\b|gst\b).*$/i, '');
  if (ruleOn('trailing-number')) t = t.replace(/\s*[([{][^)\]}]*\d[^)\]}]*[)\]}]?[^A-Za-z0-9]*$/, '');
  t = t.replace(/^[^A-Za-z0-9(]+/, '').replace(/[^A-Za-z0-9.)]+$/, '');
  t = t.replace(/\b[S5][DO0I][NM](\.?)(\s+)[B83E][HN]D\b/gi, (m: string, dot: string, sp: string) =>
    /^sdn\.?\s+bhd$/i.test(m) ? m : `SDN${dot}${sp}BHD`,
  );
  t = t.replace(/(?<=\s)[5S]\/[B8D]$/, 'S/B');
  // `SDN BHD` read as one word with its middle garbled (`SLIBHD`, `SDNBHD`).
  if (ruleOn('glued-suffix')) {
    t = t.replace(/(?<=\s)[S5][A-Z0-9|]{1,2}B[HN]D(\.?)$/, (m: string, dot: string) => `SDN BHD${dot}`);
  }
  // The legal-entity suffix ends the name: marks or a logo fragment read after it are not part of it.
  // A registration number or a short fragment read after it is dropped, and so is a label before such a name.
  const legal = /^(.*?\b(?:SDN\.?\s+BHD|S\/B|BHD|LTD|LLC|LLP|INC|PLC|GMBH|CORP)\.?)\s+(.+)$/i.exec(t);
  if (ruleOn('suffix-ends-name')) {
    if (legal && (/\d{4,}/.test(legal[2] ?? '') || /^[^()]{1,6}$/.test(legal[2] ?? ''))) t = legal[1] ?? t;
    if (legal) t = t.replace(/^[A-Za-z]+\s*:\s*(?=\S)/, '');
  }
  return squash(t);
}

/** Cleans one printed address line: edge noise such as `|`, `:` and stray marks. */
export function cleanAddressLine(text: string): string {
  // Stray marks OCR reads at a line's ends: punctuation, or a lone lower-case letter beside upper-case text.
  const tokens = text.split(/\s+/).filter(Boolean);
  const upper = /^[^a-z]*$/.test(tokens.filter((t) => t.length > 1).join(''));
  const stray = (t: string | undefined): boolean => !!t && (/^[^A-Za-z0-9(]+$/.test(t) || (upper && /^[a-z]$/.test(t)));
  while (stray(tokens[0])) tokens.shift();
  while (stray(tokens[tokens.length - 1])) tokens.pop();
  text = tokens.join(' ');
  // A detector row can join the address's last line with a labelled field printed beside it (`... JOHOR.
  // Document No : TD0116`): the address ends before the label.
  const label =
    /\s+(?:(?!lot\b|unit\b|no\b)[A-Za-z]+\s+)?(?:no|tel|fax|gst|date|phone|invoice|doc(?:ument)?|receipt)\b\.?\s*[:#].*$/i.exec(
      text,
    );
  if (ruleOn('address-label-cut') && label && label.index >= 10) text = text.slice(0, label.index);
  return squash(
    text
      .replace(/^[^A-Za-z0-9(]+/, '')
      .replace(/[\s|:;'"`~\\_=*#%-]+$/, '')
      .replace(/\s+[|]+\s+/g, ' '),
  );
}

/**
 * A short mark (one or two letters or digits, or punctuation) at either end of a line of words, set apart from them
 * by more than twice the widest gap between the other words and by at least half a line's height (`KEDAI CONTOH
 * S`, `x  RESTORAN MAJU`): a tick, a logo fragment or a stamp beside the text, not a word of it.
 */
function edgeMark(words: Row['words'], end: 'first' | 'last'): boolean {
  if (words.length < 3) return false;
  const mark = end === 'last' ? words[words.length - 1] : words[0];
  const next = end === 'last' ? words[words.length - 2] : words[1];
  const rest = end === 'last' ? words.slice(0, -1) : words.slice(1);
  if (!mark || !next || !/^([A-Za-z0-9]{1,2}|[^A-Za-z0-9\s]{1,3})$/.test(mark.text)) return false;
  const gaps = rest.slice(1).map((w, i) => w.box.x0 - (rest[i]?.box.x1 ?? w.box.x0));
  const gap = end === 'last' ? mark.box.x0 - next.box.x1 : next.box.x0 - mark.box.x1;
  const height = mark.box.y1 - mark.box.y0;
  return gap > 2 * Math.max(1, ...gaps) && gap >= 0.5 * height;
}

/** Drops barely legible specks at a line's ends (marks, a logo fragment read as `ee`, a stray `i`), and a lone mark. */
export function trimEdges(row: Row): Row {
  const speck = (w: Row['words'][number] | undefined): boolean =>
    !!w && w.confidence < 0.5 && /^[a-z]{0,2}$/.test(w.text.replace(/[^A-Za-z0-9]/g, ''));
  let from = 0;
  let to = row.words.length;
  if (ruleOn('edge-specks')) {
    while (from < to && speck(row.words[from])) from += 1;
    while (to > from && speck(row.words[to - 1])) to -= 1;
  }
  if (ruleOn('lone-mark') && from === 0 && to === row.words.length) {
    if (edgeMark(row.words, 'last')) to -= 1;
    else if (edgeMark(row.words, 'first')) from += 1;
  }
  if (from === 0 && to === row.words.length) return row;
  if (from >= to) return { ...row, text: '', words: [] };
  let text = '';
  const words = row.words.slice(from, to).map((w) => {
    if (text) text += ' ';
    const start = text.length;
    text += w.text;
    return { ...w, start, end: text.length };
  });
  const confidence = words.reduce((sum, w) => sum + w.confidence, 0) / words.length;
  return { ...row, text, words, confidence, box: unionBox(words.map((w) => w.box)) };
}
