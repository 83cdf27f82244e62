/**
 * Routes one scalar field to the finder that suits its role (issuer block, amounts, dates, choices, label: value)
 * and returns what was found, unconverted. The engine then coerces it to the schema's type.
 */
import { splitAddress, type AddressParts } from './address-parts';
import { findAmountOfClass, findTotal } from './amount.finder';
import { findBoolean, findCurrency, findEnum, findPaymentMethod } from './choice.finder';
import { coerceValue } from './coerce';
import { findDate } from './date.finder';
import type { DocumentContext } from './document-context';
import type { FieldSemantics } from './field-semantics';
import { foundIn, type FoundValue } from './found-value';
import { findLabels } from './label-matcher';
import { findLabelledValue, findUnlabelled, mayHoldContact } from './label-value.finder';
import type { Row } from './layout-index';
import type { ScalarNode } from './schema-model';
import { isTitleLine } from './line-kinds';
import {
  findAmounts,
  findDates,
  findEmails,
  findPhones,
  findTime,
  findUrls,
  type PatternMatch,
} from './value-patterns';
import { ROLE_LABELS } from './vocabulary';

const SUMMARY_ROLES = new Set(['subtotal', 'tax', 'discount', 'rounding', 'tendered', 'change', 'tip']);
const ADDRESS_PARTS: Record<string, keyof AddressParts> = {
  street: 'street',
  city: 'city',
  state: 'state',
  'postal-code': 'postal_code',
  country: 'country',
};

function partyAddress(ctx: DocumentContext, field: FieldSemantics): FoundValue | undefined {
  return field.party === 'customer' ? ctx.customer().address : ctx.issuer().address;
}

function addressPart(ctx: DocumentContext, field: FieldSemantics): FoundValue | undefined {
  const address = partyAddress(ctx, field);
  const part = ADDRESS_PARTS[field.role];
  if (!address || !part) return undefined;
  const text = splitAddress(address.lines ?? [address.text])[part];
  return text ? { ...address, text, strength: address.strength * 0.8 } : undefined;
}

function findTimeField(ctx: DocumentContext, field: FieldSemantics): FoundValue | undefined {
  const labelled = findLabelledValue(ctx.index, field, false);
  const inLabel = labelled && findTime(labelled.text);
  if (labelled && inLabel) return { ...labelled, text: inLabel.text, parsed: inLabel.value };
  for (const row of ctx.index.rows) {
    const m = findTime(row.text);
    if (m) return foundIn(row, m.start, m.end, m.text, 0.5, m.value);
  }
  return undefined;
}

/** Rows from the issuer's name to a few rows past its address, stopping at a title or an amount. */
function issuerBlockRows(ctx: DocumentContext): Row[] {
  const issuer = ctx.issuer();
  const first = issuer.nameRows[0];
  const last = issuer.addressRows[issuer.addressRows.length - 1] ?? issuer.nameRows[issuer.nameRows.length - 1];
  if (!first || !last) return [];
  const rows = ctx.index.rows.filter((r) => r.page === first.page && r.box.y0 >= first.box.y0 - 2);
  const end = rows.findIndex((r) => r.box.y0 > last.box.y1 - 2 && (isTitleLine(r) || findAmounts(r.text).length > 0));
  const lastIndex = rows.findIndex((r) => r.box.y0 > last.box.y1 - 2);
  const cap = lastIndex < 0 ? rows.length : lastIndex + 4;
  return rows.slice(0, Math.min(cap, end < 0 ? rows.length : end));
}

function byRole(ctx: DocumentContext, node: ScalarNode, field: FieldSemantics): FoundValue | undefined {
  const numeric = node.type === 'number' || node.type === 'integer';
  switch (field.role) {
    case 'issuer-name':
      return ctx.issuer().name ?? findLabelledValue(ctx.index, field, false);
    case 'customer-name':
      return ctx.customer().name ?? findLabelledValue(ctx.index, field, false);
    case 'address':
      return partyAddress(ctx, field);
    case 'street':
    case 'city':
    case 'state':
    case 'postal-code':
    case 'country':
      return addressPart(ctx, field);
    case 'date':
    case 'datetime':
      return findDate(ctx.index, field);
    case 'time':
      return findTimeField(ctx, field);
    case 'total':
      return findTotal(ctx.index, ctx.mentions());
    case 'currency':
      return findCurrency(ctx.index);
    case 'payment-method':
      return findPaymentMethod(ctx.mentions());
    case 'phone':
    case 'fax':
    case 'email':
    case 'url': {
      const labelled = findLabelledValue(ctx.index, field, false);
      if (labelled || field.party === 'customer') return labelled;
      return findUnlabelled(issuerBlockRows(ctx), field);
    }
    default:
      if (SUMMARY_ROLES.has(field.role)) return findAmountOfClass(ctx.mentions(), field.role as 'tax');
      return findLabelledValue(ctx.index, field, numeric);
  }
}

/** What the page says for one scalar field, or undefined when it says nothing defensible. */
export function resolveScalar(ctx: DocumentContext, node: ScalarNode, field: FieldSemantics): FoundValue | undefined {
  if (node.type === 'boolean') return findBoolean(ctx.index, field);
  if (node.enumValues && node.enumValues.length > 0) {
    const found = byRole(ctx, node, field);
    const match = found ? coerceValue(node, found) : undefined;
    if (found && match !== undefined) return { ...found, parsed: match };
    return findEnum(ctx.index, field, node.enumValues);
  }
  return byRole(ctx, node, field);
}

const LIST_FINDERS: Record<string, (text: string) => PatternMatch<unknown>[]> = {
  phone: findPhones,
  fax: findPhones,
  email: findEmails,
  url: findUrls,
  date: findDates,
  datetime: findDates,
};

/**
 * Every value of a list field (`phone_numbers: string[]`), for roles with a recognisable shape. Phone numbers are
 * taken only from rows labelled as contact details or from the issuer's header block, never from item codes.
 */
export function resolveList(ctx: DocumentContext, field: FieldSemantics): FoundValue[] {
  const finder = LIST_FINDERS[field.role];
  if (!finder) return [];
  let rows = ctx.index.rows;
  if (field.role === 'phone' || field.role === 'fax') {
    const labels = [...(ROLE_LABELS['phone'] ?? []), ...(ROLE_LABELS['fax'] ?? [])];
    const header = new Set(issuerBlockRows(ctx));
    rows = rows.filter((r) => findLabels(r, labels).length > 0 || (header.has(r) && mayHoldContact(r)));
  }
  return rows.flatMap((row) => finder(row.text).map((m) => foundIn(row, m.start, m.end, m.text, 0.5, m.value)));
}
