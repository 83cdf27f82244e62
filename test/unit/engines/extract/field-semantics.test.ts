import { describeField } from '../../../../src/engines/extract/field-semantics';
import { compileSchema } from '../../../../src/engines/extract/schema-model';

const role = (
  key: string,
  extra: { description?: string; parents?: string[]; format?: string; inTable?: boolean } = {},
) => {
  const meta = extra.description ? { key, description: extra.description } : { key };
  const ancestors = (extra.parents ?? []).map((p) => ({ key: p }));
  const context = extra.format
    ? { format: extra.format, inTable: extra.inTable ?? false }
    : { inTable: extra.inTable ?? false };
  const s = describeField(meta, ancestors, context);
  return s.party ? `${s.role}/${s.party}` : s.role;
};

describe('field semantics', () => {
  it('derives roles and parties from names, parents and descriptions', () => {
    expect([
      role('company', { description: 'the issuing business as printed' }),
      role('address', { description: "The issuing business's address" }),
      role('merchantName'),
      role('customer_name'),
      role('city', { parents: ['customer_billing_address'] }),
      role('total'),
      role('subtotal'),
      role('total_tax'),
      role('invoice_issue_date', { format: 'date' }),
      role('transaction_date', { format: 'date-time' }),
      role('invoice_id'),
      role('issuer_vat_id'),
      role('cashier_name'),
      role('total_price', { inTable: true }),
      role('name', { inTable: true }),
      role('type', { parents: ['payment_method'], description: 'Type of payment (e.g., cash, card)' }),
    ]).toEqual([
      'issuer-name/issuer',
      'address/issuer',
      'issuer-name/issuer',
      'customer-name/customer',
      'city/customer',
      'total',
      'subtotal',
      'tax',
      'date',
      'datetime',
      'reference',
      'tax-id/issuer',
      'text',
      'line-amount',
      'description',
      'payment-method',
    ]);
  });

  it('labels qualified fields with their own words only', () => {
    expect(describeField({ key: 'due_date' }, [], { inTable: false }).labels).toEqual(['due date', 'date due']);
    expect(describeField({ key: 'purchase_order_number' }, [], { inTable: false }).labels).toEqual([
      'purchase order number',
      'purchase order no',
      'purchase order #',
      'purchase order id',
      'purchase order ref',
    ]);
    expect(describeField({ key: 'cashier_name' }, [], { inTable: false }).labels).toEqual(['cashier name', 'cashier']);
  });
});

describe('schema compilation', () => {
  it('folds nullable forms, resolves refs and keeps enum members', () => {
    const node = compileSchema({
      type: 'object',
      definitions: { Money: { type: 'number', title: 'Amount' } },
      properties: {
        a: { type: ['string', 'null'] },
        b: { anyOf: [{ $ref: '#/definitions/Money' }, { type: 'null' }], description: 'Paid' },
        c: { enum: ['x', 'y', null] },
        d: { type: 'integer', nullable: true },
      },
    });
    expect(node).toEqual({
      kind: 'object',
      meta: { key: '' },
      nullable: false,
      properties: [
        { key: 'a', node: { kind: 'scalar', meta: { key: 'a' }, nullable: true, type: 'string' } },
        {
          key: 'b',
          node: {
            kind: 'scalar',
            meta: { key: 'b', title: 'Amount', description: 'Paid' },
            nullable: true,
            type: 'number',
          },
        },
        {
          key: 'c',
          node: { kind: 'scalar', meta: { key: 'c' }, nullable: true, type: 'string', enumValues: ['x', 'y'] },
        },
        { key: 'd', node: { kind: 'scalar', meta: { key: 'd' }, nullable: true, type: 'integer' } },
      ],
    });
  });
});
