import { extractFromLayout } from '../../../../src/engines/extract';
import { layoutOf } from './layout-builder';

// The shape of the hub's document.receipt schema (nullable fields, a nested address, line items, payment method).
const n = (type: string, extra: Record<string, unknown> = {}) => ({ type: [type, 'null'], ...extra });
const HUB_RECEIPT = {
  type: 'object',
  properties: {
    receipt_id: n('string', { description: 'Unique receipt identifier' }),
    transaction_date: n('string', { format: 'date-time', description: 'Date and time of the transaction' }),
    merchant_name: n('string', { description: 'Name of the merchant' }),
    merchant_address: {
      anyOf: [
        {
          type: 'object',
          properties: { street: n('string'), city: n('string'), state: n('string'), postal_code: n('string') },
        },
        { type: 'null' },
      ],
    },
    merchant_phone: n('string', { description: 'Phone number of the merchant' }),
    cashier_name: n('string', { description: 'Name of the cashier' }),
    items: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          description: { type: 'string' },
          quantity: n('number'),
          unit_price: n('number'),
          total_price: n('number'),
        },
      },
    },
    subtotal: n('number'),
    tax: n('number'),
    total: { type: 'number' },
    currency: { type: 'string' },
    payment_method: {
      type: 'object',
      properties: { type: { type: 'string', description: 'Type of payment (e.g., cash, credit card, debit card)' } },
    },
    discount_amount: n('number'),
    tip_amount: n('number'),
  },
};

describe('hub receipt schema on a receipt whose items print the name above the numbers', () => {
  const layout = layoutOf([
    [[150, 'RESTORAN SELERA KAMPUNG']],
    [[170, 'NO 3, JALAN SS 2/24,']],
    [[160, '47300 PETALING JAYA, SELANGOR']],
    [[180, 'TEL: 03-7877 6543']],
    'Receipt #: 000451',
    'Date: 14/02/2019 19:05:33',
    'Cashier: Siti',
    'NASI LEMAK AYAM',
    '2 x 8.50 17.00',
    'TEH TARIK',
    '3 x 2.20 6.60',
    'Subtotal RM 23.60',
    'Service Tax 6% RM 1.42',
    'Rounding RM -0.02',
    'TOTAL RM 25.00',
    'CASH RM 30.00',
    'CHANGE RM 5.00',
  ]);

  it('fills every field the receipt prints and leaves the rest null', () => {
    expect(extractFromLayout(layout, HUB_RECEIPT, {}).data).toEqual({
      receipt_id: '000451',
      transaction_date: '2019-02-14T19:05:33Z',
      merchant_name: 'RESTORAN SELERA KAMPUNG',
      merchant_address: {
        street: 'NO 3, JALAN SS 2/24',
        city: 'PETALING JAYA',
        state: 'SELANGOR',
        postal_code: '47300',
      },
      merchant_phone: '03-7877 6543',
      cashier_name: 'Siti',
      items: [
        { description: 'NASI LEMAK AYAM', quantity: 2, unit_price: 8.5, total_price: 17 },
        { description: 'TEH TARIK', quantity: 3, unit_price: 2.2, total_price: 6.6 },
      ],
      subtotal: 23.6,
      tax: 1.42,
      total: 25,
      currency: 'MYR',
      payment_method: { type: 'CASH' },
      discount_amount: null,
      tip_amount: null,
    });
  });
});
