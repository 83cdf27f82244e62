import { extractFromLayout } from '../../../../src/engines/extract';
import { layoutOf, RECEIPT_SCHEMA } from './layout-builder';

describe('receipt extraction (company, address, date, total)', () => {
  it('reads a centred receipt: legal entity, address up to the phone line, stamped date, final total', () => {
    const layout = layoutOf([
      [[220, 'Welcome']],
      [[120, 'KEDAI RUNCIT MAJU JAYA SDN BHD']],
      [[200, '(123456-X)']],
      [[140, 'NO 12, JALAN BUNGA RAYA 3,']],
      [[150, 'TAMAN SERI INDAH,']],
      [[160, '47100 PUCHONG, SELANGOR']],
      [[160, 'TEL: 03-8070 1234']],
      [[160, 'GST ID: 000123456789']],
      [[180, 'TAX INVOICE']],
      'Invoice No: INV-0042 Date: 03/07/2019 14:22',
      'Cashier: AMIN',
      'Item Qty Price Amount',
      'SUGAR 1KG 2 2.90 5.80',
      'COOKING OIL 5KG 1 24.50 24.50',
      'Sub Total 30.30',
      'GST 6% 1.82',
      'Rounding Adj -0.02',
      'Total (Inclusive of GST) 32.10',
      'CASH 50.00',
      'CHANGE 17.90',
      'THANK YOU, PLEASE COME AGAIN',
    ]);
    const { data } = extractFromLayout(layout, RECEIPT_SCHEMA, {});
    expect(data).toEqual({
      company: 'KEDAI RUNCIT MAJU JAYA SDN BHD',
      address: 'NO 12, JALAN BUNGA RAYA 3, TAMAN SERI INDAH, 47100 PUCHONG, SELANGOR',
      date: '03/07/2019',
      total: '32.10',
    });
  });

  it('prefers the legal entity over a brand line and joins a suffix-only second line', () => {
    const layout = layoutOf([
      [[200, 'GOLDEN SPOON']],
      [[150, 'LIM & SONS TRADING']],
      [[170, 'CO. (M) SDN BHD']],
      [[160, 'LOT 7, JALAN PERUSAHAAN 2,']],
      [[160, '81200 JOHOR BAHRU, JOHOR.']],
      'Date: 21-11-18 Time: 09:15',
      'Nett Total: 12.40',
      'Cash 20.00',
      'Change 7.60',
    ]);
    const { data } = extractFromLayout(layout, RECEIPT_SCHEMA, {});
    expect(data).toEqual({
      company: 'LIM & SONS TRADING CO. (M) SDN BHD',
      address: 'LOT 7, JALAN PERUSAHAAN 2, 81200 JOHOR BAHRU, JOHOR.',
      date: '21-11-18',
      total: '12.40',
    });
  });

  it('reads a US-style receipt with a written month and a currency sign', () => {
    const layout = layoutOf([
      [[200, 'BLUE HARBOR CAFE LLC']],
      [[190, '1200 Ocean Avenue']],
      [[190, 'Santa Cruz, CA 95060']],
      [[190, 'Tel (831) 555-0199']],
      'Mar 5, 2021 8:41 AM',
      'Latte 4.50',
      'Bagel 3.25',
      'Subtotal $7.75',
      'Tax $0.70',
      'Tip $1.50',
      'TOTAL $9.95',
      'VISA $9.95',
    ]);
    const { data } = extractFromLayout(layout, RECEIPT_SCHEMA, {});
    expect(data).toEqual({
      company: 'BLUE HARBOR CAFE LLC',
      address: '1200 Ocean Avenue Santa Cruz, CA 95060',
      date: 'Mar 5, 2021',
      total: '$9.95',
    });
  });

  it('ignores subtotal, tax summary and card-expiry lines when choosing total and date', () => {
    const layout = layoutOf([
      'ACME HARDWARE ENTERPRISE',
      'Card Expiry: 31/05/18',
      '27/02/18 21:22 Slip No: 8020188757',
      'Total Excl. GST 37.74',
      'Total Incl. GST 40.00',
      'Rounding Adj 0.00',
      'Total 40.00',
      'Cash 50.00',
      'Change 10.00',
      'GST Summary Amount Tax',
      'Total 37.74 2.26',
    ]);
    const { data } = extractFromLayout(layout, RECEIPT_SCHEMA, {});
    expect(data['date']).toBe('27/02/18');
    expect(data['total']).toBe('40.00');
    expect(data['company']).toBe('ACME HARDWARE ENTERPRISE');
  });

  it('takes the amount actually paid (cash − change) when the total label is unreadable', () => {
    const layout = layoutOf([
      'MEGA MART SDN BHD',
      'Total Excl GST 28.11',
      'Add GST @ 6% 1.69',
      [[600, '29.80']],
      'CASH 50.00',
      'CHANGE 20.20',
    ]);
    expect(extractFromLayout(layout, RECEIPT_SCHEMA, {}).data['total']).toBe('29.80');
  });

  it('prefers the rounded amount that matches cash − change over a pre-rounding total', () => {
    const layout = layoutOf([
      'SPEEDY MART S/B',
      'Total Sales (Inclusive GST) RM 14.38',
      'Rounding Adjustment RM 0.02',
      'Rounding RM 14.40',
      'CASH RM 20.00',
      'CHANGE RM 5.60',
    ]);
    expect(extractFromLayout(layout, RECEIPT_SCHEMA, {}).data['total']).toBe('14.40');
  });

  it('returns null for what the receipt does not print, never a guess', () => {
    const layout = layoutOf(['THANK YOU', 'PLEASE COME AGAIN', 'Item 1 2.00']);
    expect(extractFromLayout(layout, RECEIPT_SCHEMA, {}).data).toEqual({
      company: null,
      address: null,
      date: null,
      total: null,
    });
  });

  it('returns null for a name or address whose words OCR could barely read', () => {
    const layout = layoutOf(['PERNIAGAAN SRI MAJU', 'NO 5, JALAN MAWAR, 43000 KAJANG', 'TOTAL 5.00'], {
      confidence: 0.3,
    });
    const { data } = extractFromLayout(layout, RECEIPT_SCHEMA, {});
    expect(data['company']).toBeNull();
    expect(data['address']).toBeNull();
    expect(data['total']).toBe('5.00');
  });

  it('reports confidence and grounding only when asked, for found fields only', () => {
    const layout = layoutOf(['MAJU ENTERPRISE', 'Date: 01/02/2020', 'Total 10.00']);
    const plain = extractFromLayout(layout, RECEIPT_SCHEMA, {});
    expect(plain.confidence).toEqual({});
    expect(plain.grounding).toEqual({});
    const rich = extractFromLayout(layout, RECEIPT_SCHEMA, { confidence: true, grounding: true });
    expect(Object.keys(rich.confidence).sort()).toEqual(['company', 'date', 'total']);
    expect(Object.keys(rich.grounding).sort()).toEqual(['company', 'date', 'total']);
    for (const c of Object.values(rich.confidence)) {
      expect(c).toBeGreaterThan(0);
      expect(c).toBeLessThanOrEqual(1);
    }
    // "10.00" sits on the third row (y 80..100), after "Total " (6 characters from x 20).
    expect(rich.grounding['total']).toEqual({ page: 0, box: { x0: 80, y0: 80, x1: 130, y1: 100 } });
    expect(rich.grounding['date']).toEqual({ page: 0, box: { x0: 80, y0: 50, x1: 180, y1: 70 } });
  });
});
