import { extractFromLayout } from '../../../../src/engines/extract';
import { layoutOf } from './layout-builder';

// A two-column invoice: issuer block left, document details right, a bill-to block, a table with a header, totals.
const INVOICE = layoutOf([
  [
    [20, 'NORTHWIND SUPPLIES LTD'],
    [500, 'INVOICE'],
  ],
  [
    [20, '14 Baker Street'],
    [500, 'Invoice No: NW-2024-017'],
  ],
  [
    [20, 'London NW1 6XE'],
    [500, 'Invoice Date: 2024-03-15'],
  ],
  [
    [20, 'United Kingdom'],
    [500, 'Due Date: 14/04/2024'],
  ],
  'Email: billing@northwind.example',
  'Phone: +44 20 7946 0958',
  '',
  'Bill To:',
  'Contoso Retail GmbH',
  'Hauptstrasse 5',
  '10115 Berlin',
  '',
  [
    [20, 'Description'],
    [400, 'Qty'],
    [500, 'Unit Price'],
    [650, 'Amount'],
  ],
  [
    [20, 'Blue widgets'],
    [400, '10'],
    [500, '2.50'],
    [650, '25.00'],
  ],
  [
    [20, 'Red gadgets, large'],
    [400, '3'],
    [500, '12.00'],
    [650, '36.00'],
  ],
  [
    [20, 'Installation service'],
    [400, '1'],
    [500, '1,150.00'],
    [650, '1,150.00'],
  ],
  [
    [500, 'Subtotal'],
    [650, '1,211.00'],
  ],
  [
    [500, 'VAT 20%'],
    [650, '242.20'],
  ],
  [
    [500, 'Total Due'],
    [650, 'GBP 1,453.20'],
  ],
  'Paid: No',
]);

const nullableString = { type: ['string', 'null'] };

const INVOICE_SCHEMA = {
  type: 'object',
  $defs: {
    Address: {
      type: 'object',
      properties: {
        street: nullableString,
        city: nullableString,
        postal_code: nullableString,
        country: nullableString,
      },
    },
    Party: {
      type: 'object',
      properties: { name: { type: 'string' }, address: { $ref: '#/$defs/Address' } },
    },
  },
  properties: {
    invoice_number: { type: 'string', description: 'Invoice number' },
    issue_date: { type: 'string', format: 'date' },
    due_date: { anyOf: [{ type: 'string', format: 'date' }, { type: 'null' }] },
    issuer: { $ref: '#/$defs/Party', description: 'The seller' },
    customer: { $ref: '#/$defs/Party', description: 'The buyer' },
    issuer_email: { type: 'string' },
    issuer_phone: { type: 'string' },
    currency: { type: 'string', enum: ['USD', 'EUR', 'GBP'] },
    paid: { type: 'boolean', description: 'Whether the invoice is marked paid' },
    items: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          description: { type: 'string' },
          quantity: { type: 'integer' },
          unit_price: { type: 'number' },
          amount: { type: 'number' },
        },
      },
    },
    subtotal: { type: 'number' },
    tax: { type: 'number' },
    total: { type: 'number' },
    purchase_order: { type: ['string', 'null'], description: 'PO number' },
    notes: { anyOf: [{ type: 'string' }, { type: 'null' }] },
  },
};

describe('invoice extraction with a nested schema', () => {
  const result = extractFromLayout(INVOICE, INVOICE_SCHEMA, { confidence: true, grounding: true });

  it('fills nested objects resolved through $ref, typed as the schema says', () => {
    expect(result.data).toEqual({
      invoice_number: 'NW-2024-017',
      issue_date: '2024-03-15',
      due_date: '2024-04-14',
      issuer: {
        name: 'NORTHWIND SUPPLIES LTD',
        address: { street: '14 Baker Street', city: 'London', postal_code: 'NW1 6XE', country: 'United Kingdom' },
      },
      customer: {
        name: 'Contoso Retail GmbH',
        address: { street: 'Hauptstrasse 5', city: 'Berlin', postal_code: '10115', country: null },
      },
      issuer_email: 'billing@northwind.example',
      issuer_phone: '+44 20 7946 0958',
      currency: 'GBP',
      paid: false,
      items: [
        { description: 'Blue widgets', quantity: 10, unit_price: 2.5, amount: 25 },
        { description: 'Red gadgets, large', quantity: 3, unit_price: 12, amount: 36 },
        { description: 'Installation service', quantity: 1, unit_price: 1150, amount: 1150 },
      ],
      subtotal: 1211,
      tax: 242.2,
      total: 1453.2,
      purchase_order: null,
      notes: null,
    });
  });

  it('keys confidence and grounding by dotted paths, including array rows', () => {
    expect(result.grounding['items.1.amount']).toEqual({ page: 0, box: { x0: 650, y0: 440, x1: 700, y1: 460 } });
    expect(result.grounding['issuer.name']?.box.y0).toBe(20);
    expect(result.confidence['total']).toBeGreaterThan(0.5);
    expect(result.confidence['purchase_order']).toBeUndefined();
    expect(result.grounding['notes']).toBeUndefined();
  });
});

describe('schema shapes', () => {
  const layout = layoutOf(['ACME TRADING', 'Order Ref: A-77', 'Date: 2023-12-01', 'Total 12.00']);

  it('resolves allOf, const/enum without type, and a scalar root', () => {
    const schema = {
      allOf: [
        { type: 'object', properties: { order_ref: { type: 'string' } } },
        { properties: { kind: { enum: ['order', 'refund'] }, total: { const: 12 } } },
      ],
    };
    expect(extractFromLayout(layout, schema, {}).data).toEqual({ order_ref: 'A-77', kind: null, total: 12 });
    expect(extractFromLayout(layout, { type: 'string', format: 'date', title: 'Date' }, {}).data).toEqual({
      value: '2023-12-01',
    });
  });

  it('returns nulls, empty arrays and empty objects of nulls for an empty layout', () => {
    const schema = {
      type: 'object',
      properties: {
        vendor: { type: 'object', properties: { name: { type: 'string' }, phone: { type: 'string' } } },
        lines: { type: 'array', items: { type: 'object', properties: { amount: { type: 'number' } } } },
        emails: { type: 'array', items: { type: 'string', format: 'email' } },
        total: { type: 'number' },
      },
    };
    expect(extractFromLayout({ pages: [] }, schema, { confidence: true }).data).toEqual({
      vendor: { name: null, phone: null },
      lines: [],
      emails: [],
      total: null,
    });
  });

  it('skips pages whose OCR failed', () => {
    const failed = { ...layoutOf(['TOTAL 99.00']).pages[0]!, status: 'error' as const, error: 'unreadable' };
    expect(extractFromLayout({ pages: [failed] }, { properties: { total: { type: 'number' } } }, {}).data).toEqual({
      total: null,
    });
  });

  it('survives a recursive $ref', () => {
    const schema = {
      $defs: { Node: { type: 'object', properties: { name: { type: 'string' }, child: { $ref: '#/$defs/Node' } } } },
      $ref: '#/$defs/Node',
    };
    const data = extractFromLayout(layout, schema, {}).data;
    expect(Object.keys(data)).toEqual(['name', 'child']);
  });
});
