/**
 * The business name is the header line with the most layout evidence (issuer-weights.ts), its confidence says how
 * clear the choice was, and the narrower repair rules can be switched off one at a time for the receipts bench.
 * Synthetic layouts only; names and streets are invented.
 */
import { extractFromLayout, RULE_GROUPS, RULE_PARTS, RULES } from '../../../../src/engines/extract';
import { layoutOf, RECEIPT_SCHEMA } from './layout-builder';
import { auc, fitWeights, merchantOf, PRIOR_WEIGHTS } from '../../../../bench/receipts-cv';
import { NAME_WEIGHTS, scoreFeatures, type NameFeatures } from '../../../../src/engines/extract/issuer-weights';

const extract = (rows: Parameters<typeof layoutOf>[0]) =>
  extractFromLayout(layoutOf(rows), RECEIPT_SCHEMA, { confidence: true });

describe('choosing the business name from layout evidence', () => {
  it('counts a registration number printed under a name for it', () => {
    const { data } = extract([
      { text: 'SUNRISE TRADING', confidence: 0.9 },
      'MOONLIGHT TRADING',
      '(654321-K)',
      'Tel: 03-1234 5678',
      'Date: 03/02/2019',
      'TOTAL 12.00',
    ]);
    expect(data['company']).toBe('MOONLIGHT TRADING');
  });

  it('keeps the first name when nothing else tells the two apart', () => {
    const { data } = extract([
      { text: 'SUNRISE TRADING', confidence: 0.9 },
      'MOONLIGHT TRADING',
      'Tel: 03-1234 5678',
      'Date: 03/02/2019',
      'TOTAL 12.00',
    ]);
    expect(data['company']).toBe('SUNRISE TRADING');
  });

  it('is less confident of a name chosen over a close runner-up than of a lone one', () => {
    const tail = ['12, JALAN CONTOH 3,', '50000 KUALA LUMPUR', 'Date: 03/02/2019', 'TOTAL 12.00'];
    const lone = extract(['KEDAI CONTOH SDN BHD', ...tail]);
    const contested = extract(['SYARIKAT LAIN SDN BHD', 'KEDAI CONTOH SDN BHD', ...tail]);
    expect(lone.data['company']).toBe('KEDAI CONTOH SDN BHD');
    expect(contested.data['company']).toBe('KEDAI CONTOH SDN BHD');
    expect(lone.confidence['company']).toBeGreaterThan(contested.confidence['company'] ?? 1);
  });

  it('is less confident of a name with a digit between the letters of a word, and not of a number beside a word', () => {
    const tail = ['12, JALAN CONTOH 3,', '50000 KUALA LUMPUR', 'Date: 03/02/2019', 'TOTAL 12.00'];
    const clean = extract(['KEDAI EKSKLUSIF SDN BHD', ...tail]);
    const misread = extract(['KEDAI EKS9LU5IF SDN BHD', ...tail]);
    const numbered = extract(['KEDAI 99 EKSKLUSIF SDN BHD', ...tail]);
    expect(misread.data['company']).toBe('KEDAI EKS9LU5IF SDN BHD');
    expect(clean.confidence['company']).toBeGreaterThan((misread.confidence['company'] ?? 1) * 1.5);
    expect(numbered.confidence['company']).toBeCloseTo(clean.confidence['company'] ?? 0, 5);
  });

  it('is less confident of an address that stops before its postcode', () => {
    const whole = extract(['KEDAI CONTOH SDN BHD', '12, JALAN CONTOH 3,', '50000 KUALA LUMPUR', 'Tel: 03-1234']);
    const cut = extract(['KEDAI CONTOH SDN BHD', '12, JALAN CONTOH 3,', 'Tel: 03-1234']);
    expect(whole.data['address']).toBe('12, JALAN CONTOH 3, 50000 KUALA LUMPUR');
    expect(cut.data['address']).toBe('12, JALAN CONTOH 3,');
    expect(whole.confidence['address']).toBeGreaterThan(cut.confidence['address'] ?? 1);
  });
});

describe('rule switches', () => {
  it('runs a repair rule unless the bench switches it off for one call', () => {
    const layout = layoutOf(['KEDAI CONTOH SDN BHD', '15, JALAN S512/3A,', '47500 SUBANG JAYA', 'Tel: 03-1234']);
    const on = extractFromLayout(layout, RECEIPT_SCHEMA);
    const off = extractFromLayout(layout, RECEIPT_SCHEMA, { rulesOff: ['section-code'] });
    expect(on.data['address']).toBe('15, JALAN SS12/3A, 47500 SUBANG JAYA');
    expect(off.data['address']).toBe('15, JALAN S512/3A, 47500 SUBANG JAYA');
    // The switch does not outlive the call.
    expect(extractFromLayout(layout, RECEIPT_SCHEMA).data['address']).toBe(on.data['address']);
  });

  it('switches off every part of a mechanism by the mechanism name', () => {
    const layout = layoutOf(['KEDAI CONTOH SDN BHD', '15, JALAN S512/3A,', '47500 SUBANG JAYA', 'Tel: 03-1234']);
    const off = extractFromLayout(layout, RECEIPT_SCHEMA, { rulesOff: ['number-glyphs'] });
    expect(off.data['address']).toBe('15, JALAN S512/3A, 47500 SUBANG JAYA');
    expect(RULE_GROUPS['number-glyphs']).toContain('section-code');
    const named = layoutOf([
      'KEDAI CONTOH SDN BHD (123456-X)',
      '15, JALAN MAJU 3,',
      '47500 SUBANG JAYA',
      'Tel: 03-1234',
    ]);
    expect(extractFromLayout(named, RECEIPT_SCHEMA).data['company']).toBe('KEDAI CONTOH SDN BHD');
    const uncut = extractFromLayout(named, RECEIPT_SCHEMA, { rulesOff: ['name-edges'] });
    expect(uncut.data['company']).toBe('KEDAI CONTOH SDN BHD (123456-X)');
    // Every part belongs to exactly one mechanism, so the bench judges each part once.
    expect(new Set(RULE_PARTS).size).toBe(RULE_PARTS.length);
    expect(RULES.flatMap((g) => RULE_GROUPS[g])).toEqual(RULE_PARTS);
  });
});

describe('the receipts bench', () => {
  it('groups receipts by merchant whatever legal suffix or punctuation the truth prints', () => {
    expect(merchantOf('Kedai Contoh Sdn. Bhd.')).toBe(merchantOf('KEDAI CONTOH SDN BHD'));
    expect(merchantOf('KEDAI CONTOH (M) S/B')).toBe('KEDAICONTOH');
    expect(merchantOf('KEDAI CONTOH TRADING')).not.toBe(merchantOf('KEDAI CONTOH'));
  });

  it('measures how well confidence ranks right answers above wrong ones', () => {
    expect(
      auc([
        { confidence: 0.9, ok: true },
        { confidence: 0.8, ok: true },
        { confidence: 0.3, ok: false },
      ]),
    ).toBe(1);
    expect(
      auc([
        { confidence: 0.5, ok: true },
        { confidence: 0.5, ok: false },
      ]),
    ).toBe(0.5);
    expect(auc([{ confidence: 0.5, ok: true }])).toBeNaN();
  });

  it('moves a weight only when that makes more training answers right', () => {
    const zero = Object.fromEntries(Object.keys(PRIOR_WEIGHTS).map((k) => [k, 0])) as unknown as NameFeatures;
    const first: NameFeatures = { ...zero, ocr: 1, business: 1, upper: 1 };
    const registered: NameFeatures = { ...zero, ocr: 1, rank: 1, business: 1, upper: 1, registration: 1 };
    const receipt = (ok: 'first' | 'second') => ({
      id: ok,
      set: 't',
      merchant: ok,
      truth: {},
      layout: { pages: [] },
      choices: [
        { features: first, companyOk: ok === 'first', addressOk: false },
        { features: registered, companyOk: ok === 'second', addressOk: false },
      ],
    });
    // Merchants whose name is the second, registered line: the weights move until that line wins.
    expect(scoreFeatures(registered, PRIOR_WEIGHTS)).toBeLessThan(scoreFeatures(first, PRIOR_WEIGHTS));
    const fitted = fitWeights([receipt('second'), receipt('second')], PRIOR_WEIGHTS);
    expect(scoreFeatures(registered, fitted)).toBeGreaterThan(scoreFeatures(first, fitted));
    // No evidence either way: the prior stays as it was.
    expect(fitWeights([receipt('first')], PRIOR_WEIGHTS)).toEqual(PRIOR_WEIGHTS);
    expect(NAME_WEIGHTS.registration).toBeGreaterThan(0);
  });
});
