/**
 * One synthetic layout per generic selection rule added for receipts nobody tuned for: OCR digit slips inside words,
 * marks read after a legal-entity suffix, scanner noise above the header, `Amt Due` as a total label, and the
 * ensemble's line merge.
 */
import { extractFromLayout } from '../../../../src/engines/extract';
import { fixDigitsInWords } from '../../../../src/engines/extract/ocr-fixes';
import { mergeReadings } from '../../../../src/engines/ocr/ocr-ensemble';
import type { LayoutLine } from '../../../../src/engines/types';
import { layoutOf, RECEIPT_SCHEMA } from './layout-builder';

describe('generic selection rules', () => {
  it('reads a lone 0 or 1 inside a word as the letter OCR mistook, and leaves codes alone', () => {
    const fixed = new Set<string>();
    expect(fixDigitsInWords('No.2, Ja1an Pahlawanan 19/9', fixed)).toBe('No.2, Jalan Pahlawanan 19/9');
    expect(fixDigitsInWords('EMAS C0. (M) BHD', fixed)).toBe('EMAS CO. (M) BHD');
    expect(fixDigitsInWords('JALAN U1/48 PJU 1A/3 SS21 B10', fixed)).toBe('JALAN U1/48 PJU 1A/3 SS21 B10');
    expect([...fixed]).toEqual(['Ja1an', 'C0.']);
  });

  it('repairs the issuer and its address with those fixes', () => {
    const { data } = extractFromLayout(
      layoutOf([
        'EMAS C0. (M) BHD',
        'No.2, Ja1an Pahlawanan 19/9,',
        '43200 Cheras, Selangor',
        'Date: 01/02/2018',
        'TOTAL 12.00',
      ]),
      RECEIPT_SCHEMA,
      {},
    );
    expect(data).toMatchObject({
      company: 'EMAS CO. (M) BHD',
      address: 'No.2, Jalan Pahlawanan 19/9, 43200 Cheras, Selangor',
    });
  });

  it('ends the company name at its legal-entity suffix, dropping a fragment read after it', () => {
    const { data } = extractFromLayout(
      layoutOf([
        'PRINT MASTER SDN BHD bes',
        '(989625-A)',
        'NO 18, JALAN BUNGA TANJONG 2/16,',
        '40000 SHAH ALAM, SELANGOR',
        'TOTAL 100.00',
      ]),
      RECEIPT_SCHEMA,
      {},
    );
    expect(data.company).toBe('PRINT MASTER SDN BHD');
  });

  it('does not let a barely legible number above the header (a logo, scanner noise) end the header', () => {
    const { data } = extractFromLayout(
      layoutOf([
        { text: 'E Sra a eae 3 CTT', confidence: 0.14 },
        { text: '3 1902.06 +', confidence: 0.28 },
        'YONDER BROTHERS HARDWARE',
        '(872981-V)',
        'LOT 1-0-2, JLN 1/50,',
        '53000 KUALA LUMPUR.',
        'TOTAL 63.60',
      ]),
      RECEIPT_SCHEMA,
      {},
    );
    expect(data).toMatchObject({ company: 'YONDER BROTHERS HARDWARE', total: '63.60' });
  });

  it('reads "Amt Due" as the total and not the subtotal or tax beside it', () => {
    const { data } = extractFromLayout(
      layoutOf([
        'RANDI FOODS SDN BHD',
        [
          [20, 'Sub Total'],
          [500, '121.99'],
        ],
        [
          [20, 'Amt Due'],
          [500, '129.30'],
        ],
        [
          [20, 'GST @6%'],
          [500, '7.30'],
        ],
      ]),
      RECEIPT_SCHEMA,
      {},
    );
    expect(data.total).toBe('129.30');
  });
});

describe('ensemble line merge', () => {
  const line = (text: string, y: number, confidence: number, x0 = 20): LayoutLine => ({
    text,
    confidence,
    box: { x0, y0: y, x1: x0 + 10 * text.length, y1: y + 20 },
    words: [{ text, confidence, box: { x0, y0: y, x1: x0 + 10 * text.length, y1: y + 20 } }],
  });

  it('keeps confident primary lines, swaps a weak one for a more confident reading of the same place', () => {
    const primary = [line('GRAND T0TAL 9.80', 100, 0.6), line('THANK YOU', 200, 0.95)];
    const secondary = [line('GRAND TOTAL 9.80', 102, 0.9), line('THANK Y0U', 200, 0.97)];
    expect(mergeReadings(primary, secondary).map((l) => l.text)).toEqual(['GRAND TOTAL 9.80', 'THANK YOU']);
  });

  it('adds a confident secondary line where the primary found nothing, and no weak one', () => {
    const primary = [line('SHOP', 10, 0.95)];
    const secondary = [line('CASH 20.00', 300, 0.9), line('~~ ,', 400, 0.3)];
    expect(mergeReadings(primary, secondary).map((l) => l.text)).toEqual(['SHOP', 'CASH 20.00']);
  });
});

describe('more generic selection rules', () => {
  it('repairs runs of 0/1 inside words and a single one opening a word, not numbers opening one', () => {
    const fixed = new Set<string>();
    expect(fixDigitsInWords('QLT M00DICI0US URBAN 1DEA 0ld 10GRAM SEKSYEN10 PJU1', fixed)).toBe(
      'QLT MOODICIOUS URBAN IDEA old 10GRAM SEKSYEN10 PJU1',
    );
  });

  it('reads misread SDN BHD forms, drops a label before the name and a registration number after it', () => {
    const name = (first: string): unknown =>
      extractFromLayout(layoutOf([first, '12 JALAN MAJU, 50000 KUALA LUMPUR', 'TOTAL 5.00']), RECEIPT_SCHEMA, {}).data
        .company;
    expect(name('SUPER EIGHT CASH & CARRY SDN 3HD')).toBe('SUPER EIGHT CASH & CARRY SDN BHD');
    expect(name('HARUN HARDWARE SIN BHD')).toBe('HARUN HARDWARE SDN BHD');
    expect(name('Dimiliki: bola mi cafe son bhd 1110644-W')).toBe('bola mi cafe SDN BHD');
    expect(name("KING'S CONFECTIONERY S/B 273500-U (GKJ)")).toBe("KING'S CONFECTIONERY S/B");
  });

  it('takes the total after a rounding adjustment over the "inclusive of tax" total above it', () => {
    const { data } = extractFromLayout(
      layoutOf([
        'QLT MOODICIOUS SDN BHD',
        'Total (Excluding GST): 26.60',
        'GST Payable: 1.76',
        'Total (Inclusive of GST): 31.02',
        'Rounding Adj : -0.02',
        'TOTAL : 31.00',
        'Closed: 09-04-2018 20:01:23',
      ]),
      RECEIPT_SCHEMA,
      {},
    );
    expect(data.total).toBe('31.00');
  });
});

describe('address, header and payment rules', () => {
  it('ends the address at a labelled field line and repairs 5-for-S and O-for-0 slips', () => {
    const { data } = extractFromLayout(
      layoutOf([
        'BOOK TA.K (TAMAN DAYA) SDN BHD',
        'NO.53 JALAN 5ULTAN 18',
        '8110O JOHOR BAHRU,',
        'JOHOR.',
        'Document No : TD01167104',
        'TOTAL 9.00',
      ]),
      RECEIPT_SCHEMA,
      {},
    );
    expect(data.address).toBe('NO.53 JALAN SULTAN 18 81100 JOHOR BAHRU, JOHOR.');
  });

  it('does not take an all-lower-case note above the header for the company', () => {
    const { data } = extractFromLayout(
      layoutOf(['tan woon yann', 'INDAH GIFT & HOME DECO', '27, JALAN KEKWA 13, 81100 JOHOR BAHRU', 'TOTAL 9.00']),
      RECEIPT_SCHEMA,
      {},
    );
    expect(data.company).toBe('INDAH GIFT & HOME DECO');
  });

  it('reads "Serv. Charge" as a charge, not as the change that starts the payment lines', () => {
    const { data } = extractFromLayout(
      layoutOf([
        'BOLA MI CAFE SDN BHD',
        'Total (Excluding GST): 21.30',
        'Serv. Charge (3%): 0.65',
        'GST payable (6%): 1.31',
        'Total (Inclusive of GST): 23.26',
        'Rounding Adj : -0.01',
        'TOTAL : 23.25',
      ]),
      RECEIPT_SCHEMA,
      {},
    );
    expect(data.total).toBe('23.25');
  });
});
