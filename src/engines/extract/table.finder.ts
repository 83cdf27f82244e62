/**
 * Reads line items (an array of objects) from a table: the header row is the first row naming two or more of the
 * item fields; item rows run from below it to the first summary row (total, tax, payment). A row carrying amounts is
 * one item; text-only rows are its description (above or below it, whichever way the table is printed). With a header,
 * numbers are assigned to the nearest column; without one, the last amount is the line amount, the one before it the
 * unit price and a small integer (or `2 x`) the quantity.
 */
import type { FieldSemantics } from './field-semantics';
import { foundIn, foundInRows, type FoundValue } from './found-value';
import type { LayoutIndex, Row } from './layout-index';
import { findLabels } from './label-matcher';
import { isRegistration, isStopLine, isTitleLine } from './line-kinds';
import { squash } from './text-normalize';
import { findAmounts } from './value-patterns';

/** One column the caller wants: the item property's key and what it means. */
export interface TableColumn {
  key: string;
  field: FieldSemantics;
}

const SUMMARY =
  /^\W*(sub\s*-?\s*total|total|grand|tax|gst|vat|sst|discount|rounding|cash|change|balance|amount\s+due|net|nett|item\s*count|items?\s*:|qty\s*:|tender|payment|paid)\b/i;
const HEADER_ROLES = new Set(['description', 'quantity', 'unit-price', 'line-amount']);

interface Header {
  row: Row;
  /** Horizontal extent of each column's header label. */
  spans: Map<string, { x0: number; x1: number }>;
}

function findHeader(index: LayoutIndex, columns: TableColumn[]): Header | undefined {
  let best: Header | undefined;
  for (const row of index.rows) {
    const spans = new Map<string, { x0: number; x1: number }>();
    for (const col of columns) {
      const hit = findLabels(row, col.field.labels)[0];
      if (!hit) continue;
      const words = row.words.filter((w) => w.start < hit.end && w.end > hit.start);
      const x0 = Math.min(...words.map((w) => w.box.x0));
      const x1 = Math.max(...words.map((w) => w.box.x1));
      spans.set(col.key, { x0, x1 });
    }
    const known = [...spans.keys()].filter((k) => HEADER_ROLES.has(columns.find((c) => c.key === k)?.field.role ?? ''));
    if (known.length >= 2 && findAmounts(row.text).length === 0 && (!best || spans.size > best.spans.size)) {
      best = { row, spans };
      if (spans.size >= Math.min(3, columns.length)) break;
    }
  }
  return best;
}

interface Item {
  numbers: Row;
  text: Row[];
}

function groupItems(rows: Row[]): Item[] {
  const hasAmount = (r: Row): boolean => findAmounts(r.text).length > 0;
  const isText = (r: Row): boolean => !hasAmount(r) && (r.text.match(/[A-Za-z]/g) ?? []).length >= 3;
  const firstText = rows.findIndex(isText);
  const firstNumbers = rows.findIndex(hasAmount);
  const leadingLetters = (r: Row): number => (r.text.split(/\s\S*\d[.,]\d{2}/)[0]?.match(/[A-Za-z]/g) ?? []).length;
  // Description below the numbers when the table starts with a numbers row that has no words of its own.
  const below =
    firstNumbers >= 0 && (firstText < 0 || firstNumbers < firstText) && leadingLetters(rows[firstNumbers] as Row) < 3;
  const items: Item[] = [];
  let pending: Row[] = [];
  for (const row of rows) {
    if (hasAmount(row)) {
      items.push({ numbers: row, text: below ? [] : pending });
      pending = [];
    } else if (isText(row)) {
      const last = items[items.length - 1];
      if (below && last) last.text.push(row);
      else pending.push(row);
    }
  }
  return items;
}

/** The column whose header is nearest to `x`, if `x` lies under it (within one header width either side). */
function nearestColumn(header: Header, x: number, keys: string[]): string | undefined {
  let best: { key: string; d: number } | undefined;
  for (const key of keys) {
    const span = header.spans.get(key);
    if (!span) continue;
    const width = Math.max(span.x1 - span.x0, 20);
    if (x < span.x0 - width || x > span.x1 + width) continue;
    const d = Math.abs((span.x0 + span.x1) / 2 - x);
    if (!best || d < best.d) best = { key, d };
  }
  return best?.key;
}

function readItem(item: Item, columns: TableColumn[], header: Header | undefined): Record<string, FoundValue> {
  const out: Record<string, FoundValue> = {};
  const row = item.numbers;
  const amounts = findAmounts(row.text);
  const byRole = (role: string): TableColumn | undefined => columns.find((c) => c.field.role === role);
  const numericKeys = columns.filter((c) => c.field.role !== 'description').map((c) => c.key);
  if (header) {
    for (const a of amounts) {
      const w = row.words.find((x) => x.start <= a.start && x.end >= a.start);
      const key = w && nearestColumn(header, (w.box.x0 + w.box.x1) / 2, numericKeys);
      if (key) out[key] = foundIn(row, a.start, a.end, a.text, 0.8, a.value.value);
    }
  }
  const amount = byRole('line-amount');
  const price = byRole('unit-price');
  const last = amounts[amounts.length - 1];
  if (amount && last && !out[amount.key]) {
    out[amount.key] = foundIn(row, last.start, last.end, last.text, 0.7, last.value.value);
  }
  const prev = amounts[amounts.length - 2];
  if (price && prev && !out[price.key]) {
    out[price.key] = foundIn(row, prev.start, prev.end, prev.text, 0.6, prev.value.value);
  }
  const qty = byRole('quantity');
  if (header && qty && header.spans.has(qty.key)) {
    for (const w of row.words.filter((x) => /^\d{1,4}$/.test(x.text))) {
      if (nearestColumn(header, (w.box.x0 + w.box.x1) / 2, numericKeys) !== qty.key) continue;
      out[qty.key] = foundIn(row, w.start, w.end, w.text, 0.8, Number(w.text));
      break;
    }
  }
  const firstAmount = amounts[0]?.start ?? row.text.length;
  const q = /(?:^|\s)(\d{1,3})\s*[xX@*]|[xX]\s*(\d{1,3})(?=\s|$)|(?:^|\s)(\d{1,3})(?=\s+\S*$)/.exec(
    row.text.slice(0, firstAmount),
  );
  if (qty && q && !out[qty.key]) {
    const digits = q[1] ?? q[2] ?? q[3] ?? '';
    const at = q.index + q[0].indexOf(digits);
    out[qty.key] = foundIn(row, at, at + digits.length, digits, 0.6, Number(digits));
  }
  const desc = byRole('description');
  if (desc) {
    const lead = squash(row.text.slice(0, firstAmount).replace(/(?:^|\s)\d{1,3}\s*[xX@*]?\s*$/, ''));
    const own = (lead.match(/[A-Za-z]/g) ?? []).length >= 3 ? lead : '';
    const text = squash([...item.text.map((r) => r.text), own].join(' '));
    const rows = own ? [...item.text, row] : item.text;
    const found = text ? foundInRows(rows.length > 0 ? rows : [row], text, 0.7) : undefined;
    if (found) out[desc.key] = found;
  }
  return out;
}

/** Without a header: the first item row with amounts, plus up to two description rows right above it. */
function headerlessStart(index: LayoutIndex, startRow: number): number {
  const first = index.rows.find((r) => r.index >= startRow && findAmounts(r.text).length > 0 && !SUMMARY.test(r.text));
  if (!first) return index.rows.length;
  let start = first.index;
  while (start > startRow && first.index - start < 2) {
    const above = index.rows[start - 1];
    if (!above || isStopLine(above.text) || isTitleLine(above) || isRegistration(above.text)) break;
    start -= 1;
  }
  return start;
}

/** The table's items, each a map from column key to the value found in that item's row(s). */
export function findTableItems(index: LayoutIndex, columns: TableColumn[], startRow = 0): Record<string, FoundValue>[] {
  const header = findHeader(index, columns);
  const start = header ? header.row.index + 1 : headerlessStart(index, startRow);
  const rows: Row[] = [];
  for (const row of index.rows.slice(start)) {
    if (SUMMARY.test(row.text)) break;
    rows.push(row);
  }
  return groupItems(rows)
    .map((item) => readItem(item, columns, header))
    .filter((o) => Object.keys(o).length > 0);
}
