/**
 * An address's postcode names its town and state (postcode-places.ts): a town, state or postcode the OCR garbled is
 * read back only with evidence on both sides (a real postcode, and words already close to its own town), and a town
 * printed under another name, a short abbreviation or an unknown postcode is left as printed. Streets are invented;
 * the postcodes and towns are the public gazetteer's.
 */
import fs from 'node:fs';
import path from 'node:path';
import { extractFromLayout } from '../../../../src/engines/extract';
import { withRulesOff } from '../../../../src/engines/extract/rule-switches';
import { repairAddress } from '../../../../src/engines/extract/ocr-fixes';
import { placeOfPostcode, repairByPostcode } from '../../../../src/engines/extract/postcode-places';
import { buildPostcodePlaces } from '../../../../scripts/build-postcode-places';
import { layoutOf, RECEIPT_SCHEMA } from './layout-builder';

const fix = (text: string): string => repairAddress(text).text;

describe('towns and states read back from the postcode', () => {
  it('knows which town and state a postcode belongs to', () => {
    expect(placeOfPostcode('40150')).toEqual({ town: 'SHAH ALAM', state: 'SELANGOR' });
    expect(placeOfPostcode('80300')).toEqual({ town: 'JOHOR BAHRU', state: 'JOHOR' });
    expect(placeOfPostcode('99999')).toBeUndefined();
  });

  it('reads a garbled town and state beside a real postcode as that postcode’s own', () => {
    expect(fix('12 JALAN MERAH 3 40150 SHAH ALAN SELANGOR')).toBe('12 JALAN MERAH 3 40150 SHAH ALAM SELANGOR');
    expect(fix('NO 8 Jalan Mawar 80300 Johor Bahro')).toBe('NO 8 Jalan Mawar 80300 Johor Bahru');
    expect(fix('LOT 5, TAMAN CERIA, 47400 PETALINCi JAYA')).toBe('LOT 5, TAMAN CERIA, 47400 PETALING JAYA');
  });

  it('joins a postcode split in two and reads a letter in it as its digit, when its town follows', () => {
    const fixed = new Set<string>();
    expect(repairByPostcode('PARK 40 150 S WH ALAM SE ANGOR', fixed)).toBe('PARK 40150 SHAH ALAM SELANGOR');
    expect([...fixed]).toEqual(expect.arrayContaining(['40', '150', 'WH', 'ANGOR']));
    expect(fix('JALAN 1, S6100 KUALA LUMPUR')).toBe('JALAN 1, 56100 KUALA LUMPUR');
    // No town of that postcode after it: the numbers stay as printed.
    expect(fix('TEL 03 555 1234')).toBe('TEL 03 555 1234');
    expect(fix('ROOM S6100 TAMAN CERIA')).toBe('ROOM S6100 TAMAN CERIA');
  });

  it('leaves a town printed under another name, an abbreviation, a right town and an unknown postcode alone', () => {
    for (const text of [
      'TAMAN SEJATI, 45600 BESTARI JAYA, SELANGOR',
      '23, JLN BURUNG, 52100 KL',
      '40150 SHAH ALAM, SELANGOR.',
      '99999 SHAH ALAN',
      '81750 MASAI JOHOR',
    ]) {
      expect(fix(text)).toBe(text);
    }
  });

  it('is a mechanism of its own, which the receipts bench can switch off', () => {
    const layout = layoutOf([
      'KEDAI MAJU ENTERPRISE',
      'NO 12 JALAN MERAH 3',
      '40150 SHAH ALAN SELANGOR',
      'TOTAL 10.00',
    ]);
    const address = (): unknown => extractFromLayout(layout, RECEIPT_SCHEMA, {}).data['address'];
    expect(address()).toBe('NO 12 JALAN MERAH 3 40150 SHAH ALAM SELANGOR');
    expect(withRulesOff(['postcode-places'], address)).toBe('NO 12 JALAN MERAH 3 40150 SHAH ALAN SELANGOR');
  });

  it('is generated from the public gazetteer as committed', () => {
    const committed = fs.readFileSync(
      path.resolve(__dirname, '../../../../src/engines/extract/postcode-places.generated.ts'),
      'utf8',
    );
    expect(buildPostcodePlaces()).toBe(committed);
  });
});
