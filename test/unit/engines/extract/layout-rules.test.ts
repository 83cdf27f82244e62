/**
 * One synthetic layout per generic layout rule (receipts of merchants nobody tuned for, read by PP-OCR):
 * amounts OCR splits or garbles, percentages, tax-summary rows, totals with no total label, names printed over two
 * lines, outlet lines and comma-continued addresses, and dates run into their time. Each has a counter-case where the
 * rule must not fire.
 */
import { extractFromLayout } from '../../../../src/engines/extract';
import { repairAmountText } from '../../../../src/engines/extract/amount-mentions';
import { layoutOf, RECEIPT_SCHEMA, type RowSpec } from './layout-builder';

const extract = (rows: RowSpec[]): Record<string, unknown> =>
  extractFromLayout(layoutOf(rows), RECEIPT_SCHEMA, {}).data;

describe('amounts OCR split or garbled', () => {
  it('joins a decimal split by a space and reads RH / RN / RIM / a hyphen after RM as money, keeping the length', () => {
    for (const [from, to] of [
      ['RM 170. 00', 'RM 170.00 '],
      ['Total 4.0D RM4.0 0', 'Total 4.0D RM4.00 '],
      ['SUBTOTAL RH43.40', 'SUBTOTAL RM43.40'],
      ['Nett Total RIM367.10', 'Nett Total RM 367.10'],
      ['TOTAL RM 14-10', 'TOTAL RM 14.10'],
    ] as const) {
      expect(repairAmountText(from)).toBe(to);
      expect(repairAmountText(from)).toHaveLength(from.length);
    }
    // Not money: a phone number, a date, a code.
    expect(repairAmountText('TEL 03-7805 7889 12-02-2018 RHB10')).toBe('TEL 03-7805 7889 12-02-2018 RHB10');
  });

  it('reads the total from such a line', () => {
    expect(
      extract(['SAM TRADING CO', 'GST 6% RM 0.80', 'TOTAL RM 14-10', 'CASH RM 20.00', 'CHANGE RM 5.90']).total,
    ).toBe('14.10');
  });

  it('does not take a tax rate for the amount of its line', () => {
    expect(extract(['MAJU SDN BHD', 'Total Sales Inclusive GST @0.00%: 30.45', 'Cash Received: 30.50']).total).toBe(
      '30.45',
    );
  });
});

describe('choosing the total', () => {
  it('takes the amount to be paid after a rounding adjustment', () => {
    expect(
      extract([
        'VERDEX STATIONERY SDN BHD',
        'Total Sales Inclusive GST @6%: 25.44',
        'Rounding Adjustment: 0.01',
        'Amount To Be Paid : 25.45',
        'Cash Received : 25.50',
        'Change : 0.05',
      ]).total,
    ).toBe('25.45');
  });

  it('prefers a single-amount total to the column totals of a tax summary below it', () => {
    expect(
      extract(['RESTORAN DE COFFEE', 'TOTAL 11.60', 'GST SUMMARY', 'Tax Code % Amount GST', 'Total: 10.94 0.66']).total,
    ).toBe('11.60');
  });

  it('with no total label, takes the subtotal a tender settles exactly, else a tender with no change', () => {
    expect(extract(['ROTI BAKERY', 'Bacon RM4.90', 'SUBTOTAL RM20.40', 'CASH RM20.40']).total).toBe('RM20.40');
    expect(extract(['RESTAURANT SIN DU', 'DPT.05 RM 149.00', 'DPT.04 RM 21.00', 'CASH', 'RM 170. 00']).total).toBe(
      '170.00',
    );
    expect(extract(['KEDAI QXJ', 'SUBTOTAL 92.50', 'CASH 94.00', 'CHANGE 0.00']).total).toBe('94.00');
  });

  it('does not read a tender as the total when change is given back', () => {
    expect(extract(['KEDAI QXJ', 'ITEM A 3.00', 'CASH 10.00', 'CHANGE 7.00']).total).not.toBe('10.00');
  });
});

describe('issuer names printed over two lines', () => {
  it('joins the line above a legal name that names only a kind of business or opens with "&" or "("', () => {
    expect(
      extract(['SENG CHI PU LOKE VEGETARIAN', 'RESTAURANT SDN BHD', '54, JALAN SS23/11', 'TOTAL 9.00']).company,
    ).toBe('SENG CHI PU LOKE VEGETARIAN RESTAURANT SDN BHD');
    expect(
      extract(['THE COFFEE BREW', '& TEA LEAF (M) SDN. BHD.', 'Lot F36, First Floor,', 'TOTAL 9.00']).company,
    ).toBe('THE COFFEE BREW & TEA LEAF (M) SDN. BHD.');
    expect(extract(['PASAR RAYA MEGA MAJU', '(SEMENYIH) SDN BHD', 'NO 24, JALAN PUSAT 4', 'TOTAL 9.00']).company).toBe(
      'PASAR RAYA MEGA MAJU (SEMENYIH) SDN BHD',
    );
  });

  it('leaves a brand printed above a complete legal name out of it', () => {
    expect(
      extract(['KIKU JAPANESE RESTAURANT', 'TK DIVISION KITCHEN SDN BHD', 'NO 5, JALAN SS2/3', 'TOTAL 9.00']).company,
    ).toBe('TK DIVISION KITCHEN SDN BHD');
  });

  it('reads a name whose suffix has a line of its own, region words included, and TRADING alone below a name', () => {
    expect(extract(["Randi's Peppergrove Malaysia", 'Sdn Bhd', 'Unit G-13, Ground Floor', 'TOTAL 9.00']).company).toBe(
      "Randi's Peppergrove Malaysia Sdn Bhd",
    );
    expect(extract(['KVL POWER HARDWARE', 'TRADING', '13-1, Jalan PJU 5/10,', 'TOTAL 9.00']).company).toBe(
      'KVL POWER HARDWARE TRADING',
    );
  });

  it('keeps plurals of business words as printed', () => {
    expect(extract(['QRS BOOKSTORES', 'SDN BHD', 'Lot S319, 2nd Floor,', 'TOTAL 9.00']).company).toBe(
      'QRS BOOKSTORES SDN BHD',
    );
    expect(extract(['COLORAMA STATIONERS & PRINT SDN BHD', '44 JALAN SS21/58', 'TOTAL 9.00']).company).toBe(
      'COLORAMA STATIONERS & PRINT SDN BHD',
    );
  });
});

describe('issuer address', () => {
  it('continues past the postcode while lines end in a comma, and stops at the next plain line', () => {
    expect(
      extract([
        'VELUPATHIYA HOLDINGS SDN BHD',
        'NO.17, 18 & 41, JALAN BESAR,',
        '39100 SERINTING,',
        'KINABAT HIGHLANDS,',
        'PAHANG',
        'Document No. : T04-18',
        'TOTAL 9.00',
      ]).address,
    ).toBe('NO.17, 18 & 41, JALAN BESAR, 39100 SERINTING, KINABAT HIGHLANDS, PAHANG');
    expect(
      extract(['YONG ENTERPRISE', '8, JALAN SUBANG 3,', '40150 SHAH ALAM', 'CASH BILL COUNTER', 'TOTAL 9.00']).address,
    ).toBe('8, JALAN SUBANG 3, 40150 SHAH ALAM');
  });

  it('skips an outlet line repeating the business name above the numbered address', () => {
    expect(
      extract([
        'TEMARI INITIAL SDN BHD',
        'UDONS TEMARI PLAZA DANAU',
        'NO.37-1, PLAZA DANAU DESA 2,',
        '58100 KUALA LUMPUR',
        'TOTAL 9.00',
      ]).address,
    ).toBe('NO.37-1, PLAZA DANAU DESA 2, 58100 KUALA LUMPUR');
  });

  it('reads a section code whose second S came out as 5', () => {
    expect(extract(['FALCO SDN BHD', 'No.76, Jalan S515/4B,', '47500 Subang Jaya', 'TOTAL 9.00']).address).toBe(
      'No.76, Jalan SS15/4B, 47500 Subang Jaya',
    );
  });
});

describe('dates', () => {
  it('reads a four-digit year OCR ran into the time after it, and not a longer number', () => {
    expect(extract(['KVL TRADING', 'Date 10/10/20174:22:12 PM', 'TOTAL 9.00']).date).toBe('10/10/2017');
    expect(extract(['KVL TRADING', 'Ref 10/10/201745', 'TOTAL 9.00']).date).toBeNull();
  });
});
