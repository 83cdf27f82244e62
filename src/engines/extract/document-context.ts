/**
 * Per-document analyses shared by every field of one extraction (row index, classified amounts, the issuer block,
 * the customer block), each computed at most once and only when a field needs it.
 */
import type { DocumentLayout } from '../types';
import { collectAmounts, type AmountMention } from './amount-mentions';
import { foundIn, foundInRows, type FoundValue } from './found-value';
import { cleanAddressLine, cleanName } from './issuer-text';
import { findIssuer, type Issuer } from './issuer.finder';
import type { NameWeights } from './issuer-weights';
import { createLayoutIndex, type LayoutIndex, type Row } from './layout-index';
import { findLabels, textAfter } from './label-matcher';
import { isStopLine, isTitleLine } from './line-kinds';
import { ROLE_LABELS } from './vocabulary';

/** A party's printed block: its name and address, as found. */
export interface PartyBlock {
  name?: FoundValue;
  address?: FoundValue;
}

export interface DocumentContext {
  index: LayoutIndex;
  mentions: () => AmountMention[];
  issuer: () => Issuer;
  customer: () => PartyBlock;
}

function lazy<T>(compute: () => T): () => T {
  let value: { v: T } | undefined;
  return () => (value ??= { v: compute() }).v;
}

/** The block under a "Bill to" / "Customer" label: the name on the label's row or the next, then address lines. */
function findCustomer(index: LayoutIndex): PartyBlock {
  const labels = ROLE_LABELS['customer-name'] ?? [];
  for (const row of index.lines) {
    const hit = findLabels(row, labels)[0];
    if (!hit || hit.start > 2) continue;
    const after = textAfter(hit);
    const below = index.lines.filter(
      (l) => l.page === row.page && l.box.y0 >= row.box.y1 - 2 && Math.abs(l.box.x0 - row.box.x0) < 3 * index.rowHeight,
    );
    const block: Row[] = [];
    let previous = row;
    for (const l of below.slice(0, 6)) {
      if (isStopLine(l.text) || isTitleLine(l) || l.box.y0 - previous.box.y1 > 1.2 * index.rowHeight) break;
      block.push(l);
      previous = l;
    }
    const out: PartyBlock = {};
    const nameRow = after.text ? undefined : block.shift();
    if (after.text) out.name = foundIn(row, after.start, row.text.length, cleanName(after.text), 0.8);
    const nameBelow = nameRow && foundInRows([nameRow], cleanName(nameRow.text), 0.8);
    if (nameBelow) out.name = nameBelow;
    const lines = block.map((l) => cleanAddressLine(l.text));
    const address = foundInRows(block, lines.join(' '), 0.7, lines);
    if (address) out.address = address;
    return out;
  }
  return {};
}

/** Builds the lazy analyses of one document. */
export function createDocumentContext(layout: DocumentLayout, nameWeights?: NameWeights): DocumentContext {
  const index = createLayoutIndex(layout);
  return {
    index,
    mentions: lazy(() => collectAmounts(index)),
    issuer: lazy(() => findIssuer(index, nameWeights)),
    customer: lazy(() => findCustomer(index)),
  };
}
