/**
 * Reads what a schema field is about from its key, title and description (and its parents' keys): a role such as
 * `total`, `date`, `issuer-name` or `street`, the party it belongs to (issuer or customer), and the label phrases to
 * look for on the page. This is what lets one extractor serve any schema instead of a fixed set of field names.
 */
import type { FieldMeta } from './schema-model';
import { splitIdentifier } from './text-normalize';
import { CUSTOMER_WORDS, ISSUER_WORDS, ROLE_LABELS, ROLE_TERMS } from './vocabulary';

export type Party = 'issuer' | 'customer';

/** What the extractor knows about one field. */
export interface FieldSemantics {
  role: string;
  party?: Party;
  /** Label phrases (lower case), most specific first. */
  labels: string[];
  /** Qualifying words of the key beyond the role (`due` in `due_date`), used to tell similar fields apart. */
  qualifiers: string[];
  /** True inside the items of an array (a table row). */
  inTable: boolean;
}

const ID_WORDS = new Set(['id', 'number', 'no', 'num', 'nr', 'ref', 'reference', 'code', 'identifier']);
const PLAIN_WORDS = new Set(['name', 'text', 'value', 'field', 'info', 'information', 'details']);
const AMOUNT_ROLES = new Set([
  'total',
  'subtotal',
  'tax',
  'discount',
  'rounding',
  'tendered',
  'change',
  'tip',
  'amount',
]);
const TEXTUAL_WORDS = new Set(['description', 'desc', 'reason', 'note', 'notes', 'type', 'method', 'name', 'code']);
const CUSTOMER_ROLES = new Set(['customer-name', 'address', 'street', 'city', 'state', 'postal-code', 'country']);
const GENERIC_WORDS = new Set(['the', 'of', 'a', 'an', 'and', 'or', 'if', 'any', 'as', 'for', 'on', 'in', 'to']);

const hasPhrase = (words: string, phrase: string): boolean => ` ${words} `.includes(` ${phrase} `);
const phraseOf = (text: string | undefined): string => splitIdentifier(text ?? '').join(' ');

function roleFrom(words: string): string | undefined {
  for (const [role, terms] of ROLE_TERMS) if (terms.some((t) => hasPhrase(words, t))) return role;
  return undefined;
}

function partyFrom(words: string): Party | undefined {
  if (CUSTOMER_WORDS.some((w) => hasPhrase(words, w))) return 'customer';
  if (ISSUER_WORDS.some((w) => hasPhrase(words, w))) return 'issuer';
  return undefined;
}

function tableRole(role: string): string {
  if (role === 'total' || role === 'amount') return 'line-amount';
  if (role === 'name') return 'description';
  return role;
}

function resolveName(name: string, party: Party | undefined, inTable: boolean): string {
  if (inTable) return 'description';
  if (party === 'customer') return 'customer-name';
  if (party === 'issuer' || ISSUER_WORDS.some((w) => hasPhrase(name, w))) return 'issuer-name';
  return 'text';
}

/** Characters of a field's description read to classify it. */
const DESCRIPTION_READ_CHARS = 1000;

/**
 * Classifies a field. `ancestors` are the metas of the enclosing objects and arrays, outermost first; `inTable`
 * says the field is a column of an array of objects.
 */
export function describeField(
  meta: FieldMeta,
  ancestors: FieldMeta[],
  context: { format?: string; inTable: boolean },
): FieldSemantics {
  const { format, inTable } = context;
  const name = phraseOf(meta.key);
  const title = (meta.title ?? '').toLowerCase();
  // Only a description's opening is read for the field's role and party: the words that matter come first, and
  // reading all of a 400 KB description for each of 2,000 fields that share it was most of a request's 94 s.
  const description = (meta.description ?? '')
    .slice(0, DESCRIPTION_READ_CHARS)
    .toLowerCase()
    .replace(/[^a-z0-9#\s-]/g, ' ');
  const parents = ancestors.map((a) => phraseOf(a.key)).join(' ');
  const named = roleFrom(name) ?? roleFrom(phraseOf(meta.title));
  let role = named ?? roleFrom(description) ?? 'text';
  // A description mentioning "total" or "tax" does not make a field the document's total: it is read by its own label.
  if (!named && AMOUNT_ROLES.has(role)) role = 'amount';
  if (format === 'date') role = 'date';
  if (format === 'date-time') role = 'datetime';
  if (format === 'email') role = 'email';
  if (format === 'uri') role = 'url';
  const party = partyFrom(name) ?? partyFrom(parents) ?? partyFrom(title) ?? partyFrom(description);
  if (role === 'name') role = resolveName(name, party, inTable);
  // `discount_description`, `payment_type`: text about an amount, not the amount.
  if (AMOUNT_ROLES.has(role) && name.split(' ').some((w) => TEXTUAL_WORDS.has(w))) role = 'text';
  if (inTable) role = tableRole(role);
  if (role === 'date' && hasPhrase(name, 'time')) role = 'datetime';
  const roleWords = new Set((ROLE_TERMS.find(([r]) => r === role)?.[1] ?? []).flatMap((t) => t.split(' ')));
  const qualifiers = name.split(' ').filter((w) => w && !roleWords.has(w) && !ID_WORDS.has(w) && !GENERIC_WORDS.has(w));
  // The customer's details are taken only under labels that name the customer, never the document's own.
  const own = party !== 'customer' || CUSTOMER_ROLES.has(role);
  const labels = labelsFor(role, name, title, qualifiers, own);
  const semantics: FieldSemantics = { role, labels, qualifiers, inTable };
  if (party) semantics.party = party;
  return semantics;
}

function labelsFor(role: string, name: string, title: string, qualifiers: string[], generic: boolean): string[] {
  const labels = new Set<string>();
  if (name) labels.add(name);
  if (title) {
    labels.add(
      title
        .replace(/[^a-z0-9#\s/]/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    );
  }
  const base = name
    .split(' ')
    .filter((w) => !ID_WORDS.has(w))
    .join(' ');
  if (role === 'reference' && base) {
    for (const suffix of ['no', 'number', '#', 'id', 'ref']) labels.add(`${base} ${suffix}`);
  }
  // A qualified identifier (`purchase_order_number`) must not take the document's own number.
  const ownNumber = role !== 'reference' || !base || base.split(' ').every((w) => DOCUMENT_WORDS.has(w));
  if ((role === 'date' || role === 'datetime') && qualifiers.length > 0) {
    labels.add(`${qualifiers.join(' ')} date`);
    labels.add(`date ${qualifiers.join(' ')}`);
  }
  const specificDate = (role === 'date' || role === 'datetime') && qualifiers.some((q) => !GENERIC_DATE.has(q));
  if (generic && !specificDate && ownNumber) {
    for (const l of ROLE_LABELS[role === 'datetime' ? 'date' : role] ?? []) labels.add(l);
  }
  const bare = base
    .split(' ')
    .filter((w) => !PLAIN_WORDS.has(w))
    .join(' ');
  if (role === 'text' && bare && bare !== name) labels.add(bare);
  return [...labels].filter(Boolean);
}

/** Words naming the document itself: its number and date take the generic labels. */
const DOCUMENT_WORDS = new Set(['receipt', 'invoice', 'document', 'doc', 'transaction', 'bill', 'reference', 'ref']);

/** Qualifiers that still mean "the document's date" (so the generic date labels apply). */
const GENERIC_DATE = new Set(['transaction', 'issue', 'issued', 'invoice', 'receipt', 'purchase', 'document', 'bill']);
