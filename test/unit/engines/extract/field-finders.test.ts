import { extractFromLayout } from '../../../../src/engines/extract';
import { layoutOf, RECEIPT_SCHEMA } from './layout-builder';

const schemaOf = (properties: Record<string, unknown>) => ({ type: 'object', properties });

describe('field finders', () => {
  it('reads a value printed below its label and one split into another block on the same row', () => {
    const layout = layoutOf([
      'Cashier:',
      'Nur Aisyah',
      [
        [20, 'GRAND TOTAL'],
        [600, '88.10'],
      ],
    ]);
    const { data } = extractFromLayout(
      layout,
      schemaOf({ cashier: { type: 'string' }, total: { type: 'number' } }),
      {},
    );
    expect(data).toEqual({ cashier: 'Nur Aisyah', total: 88.1 });
  });

  it("takes the issuer's unlabelled phone from its header block, and a customer's only under a customer label", () => {
    const layout = layoutOf([
      'ORCHID FLORIST ENTERPRISE',
      '8 LORONG MAWAR 2, 11900 BAYAN LEPAS',
      '04-642 1188',
      'Date: 01/06/2021',
      'Tel: 012-345 6789',
      'Total 45.00',
    ]);
    const schema = schemaOf({
      vendor_phone: { type: ['string', 'null'] },
      customer_phone: { type: ['string', 'null'] },
      buyer: { type: 'object', properties: { phone: { type: ['string', 'null'] } } },
    });
    expect(extractFromLayout(layout, schema, {}).data).toEqual({
      vendor_phone: '012-345 6789',
      customer_phone: null,
      buyer: { phone: null },
    });
    const unlabelled = layoutOf(['ORCHID FLORIST ENTERPRISE', '8 LORONG MAWAR 2, 11900 BAYAN LEPAS', '04-642 1188']);
    expect(extractFromLayout(unlabelled, schema, {}).data['vendor_phone']).toBe('04-642 1188');
  });

  it('reads enums from a labelled row or a row of their own, and booleans only when printed', () => {
    const layout = layoutOf(['CREDIT NOTE', 'Payment Mode: Card', 'Refund issued: Yes', 'Order Ref: A-77']);
    const schema = schemaOf({
      document_type: { enum: ['INVOICE', 'CREDIT NOTE'] },
      payment_mode: { type: 'string', enum: ['cash', 'card'] },
      refund_issued: { type: 'boolean' },
      gift_wrapped: { type: 'boolean' },
      kind: { enum: ['order', 'refund'] },
    });
    expect(extractFromLayout(layout, schema, {}).data).toEqual({
      document_type: 'CREDIT NOTE',
      payment_mode: 'card',
      refund_issued: true,
      gift_wrapped: null,
      kind: null,
    });
  });

  it('repairs OCR slips in a name and an address against the generic vocabulary', () => {
    const layout = layoutOf([
      { text: 'PERMNIAGAAN SINAR JAYA', confidence: 0.65 },
      { text: 'NO 3, JIN MELATI,', confidence: 0.25 },
      '56000 Koala Lumpur',
      'Total 5.00',
      'THANK YOU FOR SHOPPING AT',
      'PERNIAGAAN SINAR JAYA',
    ]);
    const { data } = extractFromLayout(layout, RECEIPT_SCHEMA, {});
    expect(data['company']).toBe('PERNIAGAAN SINAR JAYA');
    // "JIN" was repaired, so its low confidence does not veto the line; the other words of that line do.
    expect(data['address']).toBeNull();
    const legible = layoutOf(['SINAR JAYA TRADING', 'NO 3, JIN MELATI,', '56000 Koala Lumpur', 'Total 5.00']);
    expect(extractFromLayout(legible, RECEIPT_SCHEMA, {}).data['address']).toBe('NO 3, JLN MELATI, 56000 Kuala Lumpur');
  });

  it('reads `&` before a slash and digits as 6 and trusts that word despite its low confidence', () => {
    const layout = layoutOf([
      'FUN TOYS (SETIAN)',
      { text: 'LOT 37636,JALAN &/37A,', confidence: 0.9 },
      '52100 KUALA LUMPUR',
      'TOTAL 9.90',
    ]);
    layout.pages[0]!.lines[1]!.words[2]!.confidence = 0.14;
    expect(extractFromLayout(layout, RECEIPT_SCHEMA, {}).data['address']).toBe(
      'LOT 37636,JALAN 6/37A, 52100 KUALA LUMPUR',
    );
  });

  it('keeps `&` between house numbers as printed (NO 24,25&26, NO.6, 8, 10& 12)', () => {
    const layout = layoutOf([
      'PASAR RAYA MAJU SDN BHD',
      'NO 24,25&26, JALAN BUNGA RAYA 4,',
      'NO.6, 8, 10& 12 TAMAN PERMAS',
      '81750 JOHOR BAHRU',
      'TOTAL 9.90',
    ]);
    expect(extractFromLayout(layout, RECEIPT_SCHEMA, {}).data['address']).toBe(
      'NO 24,25&26, JALAN BUNGA RAYA 4, NO.6, 8, 10& 12 TAMAN PERMAS 81750 JOHOR BAHRU',
    );
  });

  it('lists contact numbers from labelled rows and the header only, and reads described amounts by their own label', () => {
    const layout = layoutOf([
      'SRI MUTIARA HARDWARE',
      '9, JALAN KERIAN 3, 81200 JOHOR BAHRU',
      'Tel: 07-331 2020 Fax: 07-331 2021',
      '0556767615726 PAINT BRUSH 2 11.00',
      'Total 11.00',
    ]);
    const schema = schemaOf({
      phone_numbers: { type: 'array', items: { type: 'string' } },
      current_charges: { type: ['number', 'null'], description: 'Total of the charges of this period' },
      vendor_address: {
        type: 'object',
        properties: { street: { type: 'string' }, city: { type: 'string' }, state: { type: ['string', 'null'] } },
      },
    });
    const result = extractFromLayout(layout, schema, { grounding: true });
    expect(result.data).toEqual({
      phone_numbers: ['07-331 2020', '07-331 2021'],
      current_charges: null,
      vendor_address: { street: '9, JALAN KERIAN 3', city: 'JOHOR BAHRU', state: null },
    });
    expect(Object.keys(result.grounding)).toEqual([
      'phone_numbers.0',
      'phone_numbers.1',
      'vendor_address.street',
      'vendor_address.city',
    ]);
  });

  it('reads a misread legal suffix as SDN BHD', () => {
    const layout = layoutOf(['GH TRADING SON BHD (1097826-H)', 'Total 1.00']);
    expect(extractFromLayout(layout, RECEIPT_SCHEMA, {}).data['company']).toBe('GH TRADING SDN BHD');
  });

  it('does not take a total far above the subtotal (a misread digit) or a count as the total', () => {
    const layout = layoutOf(['SubTotal 85.20', 'Net Total 385.20', 'Total Qty 4']);
    expect(extractFromLayout(layout, RECEIPT_SCHEMA, {}).data['total']).toBeNull();
  });
});
