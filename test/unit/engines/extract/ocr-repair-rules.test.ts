/**
 * Synthetic layouts for the second round of issue-15 field rules: character-class OCR repairs in addresses (round
 * glyphs in numbers, a street word split in two, `U` for `O`, a slipped letter in a town name), and their
 * counter-cases, where a word as printed must be left alone. Names and places are invented or generic.
 */
import { extractFromLayout } from '../../../../src/engines/extract';
import { repairAmountText } from '../../../../src/engines/extract/amount-mentions';
import { cleanName } from '../../../../src/engines/extract/issuer-text';
import { repairAddress } from '../../../../src/engines/extract/ocr-fixes';
import { layoutOf, RECEIPT_SCHEMA, type RowSpec } from './layout-builder';

const extract = (rows: RowSpec[]): Record<string, unknown> =>
  extractFromLayout(layoutOf(rows), RECEIPT_SCHEMA, {}).data;
const fix = (text: string): string => repairAddress(text).text;

describe('round glyphs inside numbers', () => {
  it('reads a C or D between the digits of a long number, and an O beside a digit in a unit code, as 0', () => {
    expect(fix('12, JALAN TUN LEE, 500C0 KUALA LUMPUR.')).toBe('12, JALAN TUN LEE, 50000 KUALA LUMPUR.');
    expect(fix('LOT 21D12, JALAN MAJU')).toBe('LOT 21012, JALAN MAJU');
    expect(fix('A-G-O6, MEDAN ANGGERIK,')).toBe('A-G-06, MEDAN ANGGERIK,');
  });

  it('leaves short unit numbers, codes opening with letters and words alone', () => {
    expect(fix('NO 12C, JALAN 3D')).toBe('NO 12C, JALAN 3D');
    expect(fix('BLOCK C3D4, UNIT OD-1')).toBe('BLOCK C3D4, UNIT OD-1');
    expect(fix('G-OK, PLAZA')).toBe('G-OK, PLAZA');
  });
});

describe('& read as 8 between house numbers of one series', () => {
  it('splits a run into two consecutive numbers, or a block prefix repeated', () => {
    expect(fix('LOT 211082111 JALAN MAJU')).toBe('LOT 2110&2111 JALAN MAJU');
    expect(fix('NO 19-G&19-1819-2 JALAN TASIK')).toBe('NO 19-G&19-1&19-2 JALAN TASIK');
  });

  it('leaves an 8 that does not split a series, phone numbers and postcodes alone', () => {
    expect(fix('LOT 211082115 JALAN MAJU')).toBe('LOT 211082115 JALAN MAJU');
    expect(fix('NO 19-1820-2 JALAN TASIK')).toBe('NO 19-1820-2 JALAN TASIK');
    expect(fix('TEL 03-78590861 48300 RAWANG')).toBe('TEL 03-78590861 48300 RAWANG');
  });
});

describe('street and town words', () => {
  it('restores JLN after a full stop', () => {
    expect(fix('NO.15 .JIN MAJU 2')).toBe('NO.15 .JLN MAJU 2');
  });

  it('joins a town word OCR split in two around a confusable glyph', () => {
    expect(fix('40000 SHAH AI AM.SEL.')).toBe('40000 SHAH ALAM.SEL.');
    expect(fix('47300 PETAI ING JAYA')).toBe('47300 PETALING JAYA');
  });

  it('does not join two words that are words, or pieces that do not make a known word', () => {
    expect(fix('JALAN AI AMAN')).toBe('JALAN AI AMAN');
    expect(fix('LOT 5 TAMAN JAYA')).toBe('LOT 5 TAMAN JAYA');
  });

  it('puts right a substituted letter in a long town word', () => {
    expect(fix('PUSAT BANDAR, FETALING')).toBe('PUSAT BANDAR, PETALING');
  });

  it('keeps a street name that is itself a place word, and does not lengthen or shorten a word into a town', () => {
    expect(fix('No 21, Jalan Pinang 50450 Kuala Lumpur')).toBe('No 21, Jalan Pinang 50450 Kuala Lumpur');
    expect(fix('JLN BUNGA KANTAN TAMAN')).toBe('JLN BUNGA KANTAN TAMAN');
    expect(fix('TMN SUBANG JASA')).toBe('TMN SUBANG JASA');
  });

  it('never repairs a generic part of a place name spelt another way', () => {
    expect(fix('JALAN BUNGA TANJONG 2/16')).toBe('JALAN BUNGA TANJONG 2/16');
    expect(fix('LORONG SUNGEI 3')).toBe('LORONG SUNGEI 3');
  });

  it('reads the repaired address through the extractor', () => {
    expect(
      extract(['MAJU JAYA TRADING', 'LOT 88, JALAN KENARI 3,', '40000 SHAH AI AM, SELANGOR', 'TOTAL 9.00']).address,
    ).toBe('LOT 88, JALAN KENARI 3, 40000 SHAH ALAM, SELANGOR');
  });
});

describe('issuer address blocks', () => {
  it('reads a word the way the same block prints it more often, or as often and longer', () => {
    expect(
      extract([
        'KEDAI MAJU',
        'L2-07, Cempaka Mall, Jalan Bandar Cempaks,',
        'Pusat Bandar Cempaka, 53100 Kuala Lumpur',
        'TOTAL 9.00',
      ]).address,
    ).toBe('L2-07, Cempaka Mall, Jalan Bandar Cempaka, Pusat Bandar Cempaka, 53100 Kuala Lumpur');
    expect(extract(['KEDAI MAJU', 'No 5 Jalan Kenari 4/3', 'Bandar Baru Kenri Jaya', 'TOTAL 9.00']).address).toBe(
      'No 5 Jalan Kenari 4/3 Bandar Baru Kenari Jaya',
    );
  });

  it('leaves words two edits apart, short words and one-off words as printed', () => {
    expect(
      extract(['KEDAI MAJU', 'NO.17, JALAN PERAK 1/7,', 'BANDAR BARU PERMAS JAYA, 81750 MASAI', 'TOTAL 9.00']).address,
    ).toBe('NO.17, JALAN PERAK 1/7, BANDAR BARU PERMAS JAYA, 81750 MASAI');
    expect(extract(['KEDAI MAJU', 'No 5 Jalan Jaya 2', 'Taman Jaws 47000 Sungai Buloh', 'TOTAL 9.00']).address).toBe(
      'No 5 Jalan Jaya 2 Taman Jaws 47000 Sungai Buloh',
    );
  });

  it('reads a numbered street line printed under the title when none is printed under the name', () => {
    expect(
      extract(['PERNIAGAAN SENTOSA', 'TAX INVOICE', 'NO7, JLN MAJU, SHAH ALAM.', '2 x BASIN 21.32', 'TOTAL 22.60'])
        .address,
    ).toBe('NO7, JLN MAJU, SHAH ALAM.');
  });

  it('does not take an address printed under a customer title or a line without a street number', () => {
    expect(
      extract(['PERNIAGAAN SENTOSA', 'TAX INVOICE', 'Bill To:', '12, JLN PELANGGAN, SHAH ALAM.', 'TOTAL 22.60'])
        .address,
    ).toBeNull();
    expect(extract(['PERNIAGAAN SENTOSA', 'TAX INVOICE', 'TAMAN MAJU', 'TOTAL 22.60']).address).toBeNull();
  });

  it('takes the plain lines stacked between the name and a postcode line as the street of the address', () => {
    expect(
      extract([
        [[220, 'MAISON DU NORD']],
        [[200, 'ROUTE DES PINS KM 12']],
        [[230, '15000 VILLENEUVE']],
        [[230, 'Tel.: 05.22.95.66.66']],
        'TOTAL 56.00',
      ]).address,
    ).toBe('ROUTE DES PINS KM 12 15000 VILLENEUVE');
  });

  it('does not prepend lines set apart from the postcode line or to an address that opens with its street', () => {
    expect(
      extract([[[220, 'MAISON DU NORD']], [[200, 'ROUTE DES PINS']], '', '', [[230, '15000 VILLENEUVE']], 'TOTAL 5.00'])
        .address,
    ).toBe('15000 VILLENEUVE');
    expect(
      extract([[[220, 'MAISON DU NORD']], [[200, 'OPEN DAILY']], [[200, '12 JALAN MAJU']], 'TOTAL 5.00']).address,
    ).toBe('12 JALAN MAJU');
  });

  it('opens an address with a unit code and a square (DATARAN) line', () => {
    expect(
      extract(['URBAN SOUP SDN BHD', 'A-G-O6, DATARAN CEMPAKA,', 'JALAN SS6/5A, 47301 PETALING JAYA', 'TOTAL 9.00'])
        .address,
    ).toBe('A-G-06, DATARAN CEMPAKA, JALAN SS6/5A, 47301 PETALING JAYA');
  });
});

describe('issuer names', () => {
  it('reads SDN BHD glued into one garbled word, and leaves other words ending alike', () => {
    expect(cleanName('RAPID LINES SLIBHD')).toBe('RAPID LINES SDN BHD');
    expect(cleanName('MAJU SDNBHD.')).toBe('MAJU SDN BHD.');
    expect(cleanName('KEDAI SUBHADRA')).toBe('KEDAI SUBHADRA');
  });

  it('prefers a business name with its street address right under it, even printed under the title', () => {
    expect(
      extract(['CITY MART', 'TAX INVOICE', 'URBAN TRANSIT SDN BHD', 'NO.1 JALAN PJU 1A/46', '47301 PETALING JAYA'])
        .company,
    ).toBe('URBAN TRANSIT SDN BHD');
  });

  it('keeps the name over its address when the legal name under the title has none (a customer)', () => {
    expect(
      extract(['CITY MART', 'NO.1 JALAN PJU 1A/46', 'TAX INVOICE', 'URBAN TRANSIT SDN BHD', 'Receipt#: CS001']).company,
    ).toBe('CITY MART');
  });

  it('does not take a line that only names a kind of business for the name above it', () => {
    expect(extract(['THREE LANTERNS', 'BISTRO & CAFE', '109, SS21/1A,', 'TOTAL 9.00']).company).toBe('THREE LANTERNS');
    expect(extract(['GOOD FOOD', 'LANTERN BISTRO & CAFE', '109, SS21/1A,', 'TOTAL 9.00']).company).toBe(
      'LANTERN BISTRO & CAFE',
    );
  });
});

describe('a total whose whole part OCR lost', () => {
  it('reads `.50` after the labelled total as the amount tendered − change proves, within the rounding', () => {
    expect(
      extract([
        'PRINT SHOP SDN BHD',
        'Total Incl GST 6%: 8.48',
        'Rounding Adjustment : (0.02)',
        'Total Payable : .50',
        'Paid Amount : 100.00',
        'Change : 91.50',
      ]).total,
    ).toBe('8.50');
  });

  it('does not when the cents disagree or the paid amount is far from the labelled total', () => {
    const rows = (last: string, change: string): RowSpec[] => [
      'PRINT SHOP SDN BHD',
      'Total Incl GST 6%: 8.48',
      last,
      'Paid Amount : 100.00',
      `Change : ${change}`,
    ];
    expect(extract(rows('Total Payable : .40', '91.50')).total).not.toBe('8.50');
    expect(extract(rows('Total Payable : .50', '81.50')).total).not.toBe('18.50');
  });
});

describe('totals with no readable label, and RM followed by I', () => {
  it('takes the largest amount when it is printed on two rows and no label or payment says otherwise', () => {
    expect(
      extract(['SUPER TEN SDN BHD', 'RICE 10KG 53.50', 'SUGAR 2KG 7.90', '1olal Sales RM61.40', 'Nel leta! RM61.40'])
        .total,
    ).toBe('RM61.40');
  });

  it('does not take a largest amount printed once, or one that is a tender', () => {
    expect(extract(['SUPER TEN SDN BHD', 'RICE 10KG 53.50', 'SUGAR 2KG 7.90', '1olal Sales RM61.40']).total).toBeNull();
    expect(
      extract(['SUPER TEN SDN BHD', 'RICE 10KG 53.50', 'CASH RM100.00', 'CASH RM100.00', 'Change RM46.50']).total,
    ).not.toBe('RM100.00');
  });

  it('reads RMI before digits as RM1, keeping the length', () => {
    expect(repairAmountText('AMT PAID RMI11.90')).toBe('AMT PAID RM111.90');
    expect(repairAmountText('RMIX 5')).toBe('RMIX 5');
  });
});

describe('dates', () => {
  it('reads a year whose 0 OCR read as 8 (2817) as the year it must be', () => {
    expect(extract(['BOOK SHOP', 'Dete: 23/04/2817 Time: 10.00', 'TOTAL 9.00']).date).toBe('23/04/2017');
  });

  it('leaves a date with a possible year, and a longer number, alone', () => {
    expect(extract(['BOOK SHOP', 'Date: 23/04/2018', 'TOTAL 9.00']).date).toBe('23/04/2018');
    expect(extract(['BOOK SHOP', 'Ref 23/04/28171', 'TOTAL 9.00']).date).toBeNull();
  });
});

describe('amount paid including tax, and marks beside a name', () => {
  it('reads an amount paid "including GST" as the total, not a tender', () => {
    expect(
      extract([
        'HOME CARE SDN BHD',
        'CLEANER 2 x 26.70 53.40',
        'AMT PAID IncL GST: RM111.90',
        'Amt Paid excl. GST: RM 105.57',
        'PAID BY: CARD RM111.90',
        'TOTAL 105.57 6.33',
      ]).total,
    ).toBe('RM111.90');
  });

  it('still reads a plain amount paid as a tender', () => {
    expect(extract(['HOME CARE SDN BHD', 'TOTAL 48.00', 'AMOUNT PAID 50.00', 'CHANGE 2.00']).total).toBe('48.00');
  });

  it('drops a single letter set far apart at the end of a name line, and keeps one printed as a word', () => {
    expect(extract(['RESTORAN MAJU JAYA      S', '12, JALAN MAJU 3', 'TOTAL 9.00']).company).toBe('RESTORAN MAJU JAYA');
    expect(extract(['RESTORAN MAJU BLOCK B', '12, JALAN MAJU 3', 'TOTAL 9.00']).company).toBe('RESTORAN MAJU BLOCK B');
  });

  it('drops a short mark set far apart at the start of a name line too, and keeps a short word printed as one', () => {
    expect(extract(['K      RESTORAN MAJU JAYA', '12, JALAN MAJU 3', 'TOTAL 9.00']).company).toBe('RESTORAN MAJU JAYA');
    expect(extract(['RESTORAN MAJU JAYA      2', '12, JALAN MAJU 3', 'TOTAL 9.00']).company).toBe('RESTORAN MAJU JAYA');
    expect(extract(['K2 RESTORAN MAJU JAYA', '12, JALAN MAJU 3', 'TOTAL 9.00']).company).toBe('K2 RESTORAN MAJU JAYA');
  });
});
