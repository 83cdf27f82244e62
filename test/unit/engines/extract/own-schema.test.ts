/**
 * Prism's built-in domains must accept Prism's own answers: every hub domain's schema is filled from the text of
 * the SROIE development receipts (the dataset's line-level truth laid out as OCR lines, so the test is fast and
 * needs no model) and checked with the same ajv the API uses. The only violations allowed are required values no
 * reading can honestly supply (a required value the page does not print stays null, never a guess); the receipt
 * and invoice domains must pass outright, bar a receipt that prints no currency (the receipt domain on every sroie-dev receipt, the others on
 * three, to keep the unit suite fast). Also the repairs themselves, on made-up values.
 */
import fs from 'node:fs';
import path from 'node:path';
import { extractFromLayout } from '../../../../src/engines/extract';
import { rfc3339 } from '../../../../src/engines/extract/coerce';
import { fitToSchema } from '../../../../src/engines/extract/schema-fit';
import { checkAgainstSchema } from '../../../../src/lib/json-schema';
import { createHubService } from '../../../../src/services/hub/hub.service';
import type { DocumentLayout } from '../../../../src/engines/types';
import { parseTruthCsv } from '../../../../bench/reader-metrics';
import { layoutOf } from './layout-builder';

const SHARED = process.env['PRISM_TEST_SHARED_DIR'] ?? path.resolve(__dirname, '../../../../../shared');
const FOLDERS = ['sroie-dev', 'sroie-dev2'].map((n) => path.join(SHARED, 'data', n, 'ocr-truth'));
const present = FOLDERS.filter((dir) => fs.existsSync(dir));

function truthLayout(file: string): DocumentLayout {
  const lines = parseTruthCsv(fs.readFileSync(file, 'utf8'));
  return {
    pages: [
      {
        index: 0,
        width: Math.max(...lines.map((l) => l.box.x1)) + 10,
        height: Math.max(...lines.map((l) => l.box.y1)) + 10,
        source: 'ocr',
        status: 'ok',
        lines: lines.map((l) => ({ text: l.text, box: l.box, confidence: 0.9, words: [] })),
      },
    ],
  };
}

describe('dates for format: date-time', () => {
  it('writes the printed wall clock with seconds and an offset, midnight when no time is printed', () => {
    expect(rfc3339('2018-03-14', '13:45')).toBe('2018-03-14T13:45:00Z');
    expect(rfc3339('2018-03-14', '13:45:07')).toBe('2018-03-14T13:45:07Z');
    expect(rfc3339('2018-03-14', undefined)).toBe('2018-03-14T00:00:00Z');
  });
});

describe('fitToSchema', () => {
  const schema = {
    type: 'object',
    required: ['currency', 'total', 'items'],
    properties: {
      currency: { type: 'string' },
      total: { type: 'number' },
      site: { anyOf: [{ type: 'string', format: 'uri' }, { type: 'null' }] },
      payment: {
        anyOf: [
          { type: 'object', required: ['kind'], properties: { kind: { type: 'string', enum: ['cash'] } } },
          { type: 'null' },
        ],
      },
      items: {
        type: 'array',
        items: { type: 'object', required: ['description'], properties: { description: { type: 'string' } } },
      },
    },
  };
  it('drops rows missing what they need, nulls broken objects and values that break their own node', () => {
    const fitted = fitToSchema(schema, {
      currency: null,
      total: 12.5,
      site: 'not a uri',
      payment: { kind: null },
      items: [{ description: 'TEA' }, { description: null }],
    });
    expect(fitted).toEqual({ currency: null, total: 12.5, site: null, payment: null, items: [{ description: 'TEA' }] });
    expect(checkAgainstSchema(schema, fitted).errors).toEqual(['/currency must be string']);
  });
  it('leaves a required number it has no value for as null rather than inventing one', () => {
    const fitted = fitToSchema(schema, { currency: 'MYR', total: null, items: [] }) as Record<string, unknown>;
    expect(fitted['total']).toBeNull();
    expect(checkAgainstSchema(schema, fitted).valid).toBe(false);
  });
  it('keeps a receipt answer of the extractor valid on a made-up receipt', () => {
    const hub = createHubService();
    const receipt = hub.get('document.receipt').jsonSchema;
    const layout = layoutOf(['KEDAI MAJU SDN BHD', 'DATE: 14/03/2018 13:45', 'TEA 2.50', 'TOTAL 2.50']);
    const data = extractFromLayout(layout, receipt).data;
    // Neither a currency nor a way of paying is printed: those two stay null; everything found passes.
    expect(checkAgainstSchema(receipt, data).errors).toEqual([
      '/currency must be string',
      '/payment_method/type must be string',
    ]);
    expect(data['transaction_date']).toBe('2018-03-14T13:45:00Z');
  });
});

const withData = present.length > 0 ? describe : describe.skip;
if (present.length === 0) {
  process.stderr.write(`own-schema: the dev-receipt check skipped, no ocr-truth under ${SHARED}\n`);
}

withData('every built-in domain on the development receipts', () => {
  const hub = createHubService();
  // Unit tests stay fast: the receipt domain on every receipt of the first folder, every domain on three receipts.
  // Listed when a test runs: a skipped describe still runs its body, and without the folder there is nothing to list.
  const files = (): string[] => fs.readdirSync(present[0] as string).map((f) => path.join(present[0] as string, f));
  const strict = ['document.receipt', 'document.invoice'];
  const layoutsFor = (name: string): DocumentLayout[] =>
    (name === 'document.receipt' ? files() : files().slice(0, 3)).map(truthLayout);

  it.each(hub.list().map((d) => [d.domain]))('%s passes its own schema (bar unprintable required values)', (name) => {
    const domain = hub.get(name);
    const problems = new Set<string>();
    for (const layout of layoutsFor(name)) {
      const data = extractFromLayout(layout, domain.jsonSchema).data;
      const check = checkAgainstSchema(domain.jsonSchema, data);
      for (const error of check.errors) problems.add(error.replace(/\/\d+\//g, '/*/'));
    }
    // The receipt's `currency` and `payment_method.type` are required, yet many receipts print neither: null, no guess.
    const unprinted = ['/currency must be string', '/payment_method/type must be string'];
    if (strict.includes(name)) expect([...problems].filter((p) => !unprinted.includes(p))).toEqual([]);
    // What may remain: a required value that is null because nothing printed it (type, enum or format errors on it).
    for (const problem of problems) expect(problem).toMatch(/must be (number|integer|boolean|string|equal to one of)/);
  });
});
