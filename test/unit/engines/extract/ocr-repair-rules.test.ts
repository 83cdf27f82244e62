/**
 * Synthetic layouts for the second round of issue-15 field rules: character-class OCR repairs in addresses (round
 * glyphs in numbers, a street word split in two, `U` for `O`, a slipped letter in a town name), and their
 * counter-cases, where a word as printed must be left alone. Names and places are invented or generic.
 */
import { extractFromLayout } from '../../../../src/engines/extract';
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

  it('reads U for O in a three-letter street word before a number', () => {
    expect(fix('LUT 1504, BATU 8')).toBe('LOT 1504, BATU 8');
    expect(fix('Lut 7, Jalan Maju')).toBe('Lot 7, Jalan Maju');
  });

  it('leaves such a word alone when no number follows or it is not a street word once read', () => {
    expect(fix('JALAN LUT BESAR')).toBe('JALAN LUT BESAR');
    expect(fix('BUT 12 JALAN')).toBe('BUT 12 JALAN');
  });

  it('puts right a substituted letter in a long town word', () => {
    expect(fix('PUSAT BANDAR, FETALING')).toBe('PUSAT BANDAR, PETALING');
  });

  it('keeps a street name that is itself a place word, and does not lengthen or shorten a word into a town', () => {
    expect(fix('No 21, Jalan Pinang 50450 Kuala Lumpur')).toBe('No 21, Jalan Pinang 50450 Kuala Lumpur');
    expect(fix('JLN BUNGA KANTAN TAMAN')).toBe('JLN BUNGA KANTAN TAMAN');
    expect(fix('TMN SUBANG JASA')).toBe('TMN SUBANG JASA');
  });

  it('reads the repaired address through the extractor', () => {
    expect(
      extract(['MAJU JAYA TRADING', 'LUT 88, JALAN KENARI 3,', '40000 SHAH AI AM, SELANGOR', 'TOTAL 9.00']).address,
    ).toBe('LOT 88, JALAN KENARI 3, 40000 SHAH ALAM, SELANGOR');
  });
});
