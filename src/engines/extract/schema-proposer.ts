/**
 * Proposes a JSON schema from a document's own content (POST /v1/image/schema): each printed `Label: value` pair
 * becomes a property typed from its value (date, number, integer, e-mail, string), labelled summary amounts
 * (total, tax, ...) become numbers, the issuer block becomes name and address, and a table header becomes an array of
 * item objects. The proposal only names what is on the page; it is meant to be edited.
 */
import type { JsonSchema } from '../types';
import { createDocumentContext } from './document-context';
import type { LayoutIndex } from './layout-index';
import { findLabels } from './label-matcher';
import { findAmounts, findDates, findEmails, parseNumber } from './value-patterns';

type Property = Record<string, unknown>;

const PAIR_RE =
  /([A-Za-z][A-Za-z .#/&()'-]{0,38}?)\s*[:=]\s*(.+?)(?=\s+[A-Za-z][A-Za-z .#/&()'-]{0,38}?\s*[:=]\s*\S|$)/g;
const SUMMARY_KEYS: Record<string, string> = {
  total: 'total',
  subtotal: 'subtotal',
  tax: 'tax',
  discount: 'discount',
  rounding: 'rounding',
  tendered: 'amount_tendered',
  change: 'change',
  tip: 'tip',
};
const COLUMNS: [string, string, Property][] = [
  ['description', 'description|item|items|product|particulars|details', { type: 'string' }],
  ['quantity', 'qty|quantity|qnty|units', { type: 'number' }],
  ['unit_price', 'unit price|u.price|u/price|s/price|price|rate', { type: 'number' }],
  ['amount', 'amount|amt|total|line total', { type: 'number' }],
];

/** `Invoice No.` → `invoice_no`; undefined when nothing word-like is left. */
export function toKey(label: string): string | undefined {
  const key = label
    .toLowerCase()
    .replace(/#/g, ' number ')
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return /[a-z]{2}/.test(key) ? key.slice(0, 40) : undefined;
}

/** The JSON schema type of a printed value. */
export function inferType(value: string): Property {
  const v = value.trim();
  if (findDates(v).some((d) => d.start === 0)) return { type: ['string', 'null'], format: 'date' };
  if (findEmails(v).length > 0) return { type: ['string', 'null'], format: 'email' };
  const amounts = findAmounts(v);
  if (amounts.length === 1 && amounts[0]?.text.length === v.replace(/\s/g, '').length) {
    return { type: ['number', 'null'] };
  }
  if (/^-?\d{1,6}$/.test(v) && parseNumber(v) !== undefined) return { type: ['integer', 'null'] };
  return { type: ['string', 'null'] };
}

function tableProperty(index: LayoutIndex): Property | undefined {
  for (const row of index.rows) {
    if (findAmounts(row.text).length > 0) continue;
    const found = COLUMNS.filter(([, labels]) => findLabels(row, labels.split('|')).length > 0);
    if (found.length < 2) continue;
    const properties = Object.fromEntries(
      found.map(([key, , schema]) => [key, { ...schema, type: [schema['type'], 'null'] }]),
    );
    return { type: 'array', description: 'Rows of the table', items: { type: 'object', properties } };
  }
  return undefined;
}

/** A JSON schema for what `layout` prints, with one property per label found. */
export function proposeSchema(layout: Parameters<typeof createDocumentContext>[0]): JsonSchema {
  const ctx = createDocumentContext(layout);
  const properties: Record<string, Property> = {};
  const add = (key: string | undefined, schema: Property): void => {
    if (key && !(key in properties) && Object.keys(properties).length < 60) properties[key] = schema;
  };
  const issuer = ctx.issuer();
  if (issuer.name) add('issuer_name', { type: ['string', 'null'], description: 'Name of the issuer, as printed' });
  if (issuer.address) {
    add('issuer_address', { type: ['string', 'null'], description: 'Address of the issuer, as printed' });
  }
  for (const row of ctx.index.rows) {
    for (const m of row.text.matchAll(PAIR_RE)) {
      const label = (m[1] ?? '').trim();
      const value = (m[2] ?? '').trim();
      if (!value || label.split(/\s+/).length > 5) continue;
      add(toKey(label), { ...inferType(value), description: `"${label}" as printed` });
    }
  }
  for (const mention of ctx.mentions()) {
    const key = SUMMARY_KEYS[mention.cls];
    if (key) add(key, { type: ['number', 'null'], description: `The ${key.replace(/_/g, ' ')} amount` });
  }
  if (
    !Object.values(properties).some((p) => p['format'] === 'date') &&
    ctx.index.rows.some((r) => findDates(r.text).length > 0)
  ) {
    add('date', { type: ['string', 'null'], format: 'date', description: 'The document date' });
  }
  const table = tableProperty(ctx.index);
  if (table) add('items', table);
  return { type: 'object', title: 'ProposedSchema', properties };
}
