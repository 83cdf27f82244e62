/**
 * Finds the date a field asks for. Every well-formed date on the page is a candidate (OCR slips in its digits repaired); a matching label on its row (or
 * the row above), a time printed next to it (transaction stamps) and an early position raise it, and labels of other
 * kinds of date (expiry, due, birth...) that the field did not ask for lower it. A field qualified by a word such as
 * `due` or `expiry` must find that word near the date, or it stays null.
 */
import type { FieldSemantics } from './field-semantics';
import { foundIn, type FoundValue } from './found-value';
import type { LayoutIndex } from './layout-index';
import { findLabels, hasLabel } from './label-matcher';
import { repairNumeric } from './text-normalize';
import { findDates, isoDate } from './value-patterns';

const OTHER_DATES = 'expiry|exp|expires|valid|validity|due|birth|dob|born|delivery|ship|print|printed|start|end|until';

/** Dates of the document that suit `field`, best first. */
export function findDate(index: LayoutIndex, field: FieldSemantics): FoundValue | undefined {
  const specific = field.qualifiers.filter(
    (q) => !['transaction', 'issue', 'invoice', 'receipt', 'purchase'].includes(q),
  );
  const others = OTHER_DATES.split('|').filter((w) => !field.qualifiers.includes(w));
  let best: { found: FoundValue; score: number } | undefined;
  let rank = 0;
  for (const original of index.rows) {
    // Letter/digit slips inside a date-like token (`1O/O5/2O18`) are repaired; lengths, hence offsets, are kept.
    // A year's `0` read as `8` (`23/04/2817`) makes a year no document carries: it is read back as `0`.
    const text = original.text
      .split(' ')
      .map(repairNumeric)
      .join(' ')
      .replace(/(?<=\b\d{1,2}[/.-]\d{1,2}[/.-]2)8(?=\d{2}\b)/g, '0');
    const row = text === original.text ? original : { ...original, text };
    for (const d of findDates(row.text)) {
      const before = { ...row, text: row.text.slice(0, d.start) };
      const above = index.rows[row.index - 1];
      const labelled = findLabels(before, field.labels).length > 0 || (above ? hasLabel(above, field.labels) : false);
      const qualified =
        specific.length === 0 || specific.some((q) => hasLabel(before, [q]) || (above ? hasLabel(above, [q]) : false));
      if (!qualified) continue;
      let score = 1 + (labelled ? 1 : 0) + (d.value.time ? 0.5 : 0) - rank * 0.02;
      if (hasLabel(before, others)) score -= 1.5;
      rank += 1;
      if (best && score <= best.score) continue;
      let end = d.end;
      let text = d.text;
      if (field.role === 'datetime' && d.value.time) {
        const tail = /^\s*[-,T@]?\s*\d{1,2}[:.]\d{2}(?:[:.]\d{2})?(?:\s*[AaPp]\.?[Mm]\.?)?/.exec(row.text.slice(d.end));
        if (tail) {
          end = d.end + tail[0].length;
          text = row.text.slice(d.start, end);
        }
      }
      const iso = isoDate(d.value);
      const parsed = field.role === 'datetime' && d.value.time ? `${iso}T${d.value.time}` : iso;
      best = { found: foundIn(row, d.start, end, text.trim(), Math.min(1, score / 2.5), parsed), score };
    }
  }
  return best && best.score > 0 ? best.found : undefined;
}
