/**
 * The pure parts of evaluations: flattening to dotted leaf paths, the evaluators' comparisons, note inference by
 * rules, and the deterministic optimiser's schema changes.
 */
import { inferByRules } from '../../../../src/services/evaluations/corrections';
import { flattenLeaves } from '../../../../src/services/evaluations/flatten';
import { optimiseSkill } from '../../../../src/services/evaluations/correction-rewrite';
import { scoreItem, summarise } from '../../../../src/services/evaluations/scoring';
import { fuzzySimilarity } from '../../../../src/services/evaluations/similarity';

describe('flattenLeaves', () => {
  it('uses dotted paths, keeps lists whole, skips _metadata keys', () => {
    const leaves = flattenLeaves({
      a: { b: { c: 1 }, d: [1, { e: 2 }] },
      total_metadata: { confidence: 1 },
      _metadata: {},
      empty: {},
      n: null,
    });
    expect([...leaves]).toEqual([
      ['a.b.c', 1],
      ['a.d', [1, { e: 2 }]],
      ['empty', {}],
      ['n', null],
    ]);
    expect([...flattenLeaves('text')]).toEqual([['$', 'text']]);
  });
});

describe('scoring', () => {
  const options = {
    evaluators: ['field_accuracy', 'fuzzy_field_match', 'equals_expected'] as const,
    skipNullExpected: true,
    fuzzyThreshold: 0.85,
    judge: null,
  };

  it('scores exact, fuzzy and whole-item matches, skipping null expected values', async () => {
    const score = await scoreItem(
      { name: 'Acme Corp.', total: 120, note: null, tags: ['a', 'b'] },
      { name: 'ACME corp', total: '120.00', tags: ['a', 'b'] },
      { ...options, evaluators: [...options.evaluators] },
    );
    expect(score.fields.map((f) => f.path)).toEqual(['name', 'total', 'tags']);
    expect(score.scores).toEqual({ field_accuracy: 0.3333, fuzzy_field_match: 1, equals_expected: 0 });
    const keepNull = await scoreItem(
      { note: null },
      { note: 'x' },
      {
        ...options,
        evaluators: ['field_accuracy'],
        skipNullExpected: false,
      },
    );
    expect(keepNull.scores.field_accuracy).toBe(0);
  });

  it('summarises per evaluator and per field', async () => {
    const items = [
      await scoreItem({ a: 1, b: 'x' }, { a: 1, b: 'y' }, { ...options, evaluators: ['field_accuracy'] }),
      await scoreItem({ a: 1 }, { a: 2 }, { ...options, evaluators: ['field_accuracy'] }),
    ];
    expect(summarise(items, ['field_accuracy'], 0.85)).toEqual({
      field_accuracy: {
        accuracy: 0.25,
        items_scored: 2,
        fields: { a: { compared: 2, matched: 1, accuracy: 0.5 }, b: { compared: 1, matched: 0, accuracy: 0 } },
      },
    });
  });

  it('measures normalised similarity', () => {
    expect(fuzzySimilarity('PAID', 'PAID by')).toBeCloseTo(1 - 3 / 7, 5);
    expect(fuzzySimilarity('Kuala  Lumpur!', 'kuala lumpur')).toBe(1);
    expect(fuzzySimilarity(null, null)).toBe(1);
    expect(fuzzySimilarity('x', null)).toBe(0);
  });
});

describe('inferByRules', () => {
  const predicted = { payment_status: 'PAID by', totals: { amount: 12 }, currency: 'USD' };

  it('reads explicit statements about fields the response has', () => {
    const inferred = inferByRules(
      predicted,
      'Payment status should be "PAID". amount was 12, should be 120; currency: EUR',
    );
    expect(inferred).toEqual({
      expected: { payment_status: 'PAID', totals: { amount: 120 }, currency: 'EUR' },
      source: 'inferred_rules',
      note: null,
    });
  });

  it('infers nothing from vague notes or unknown fields', () => {
    const inferred = inferByRules(predicted, 'The total is wrong. vendor should be ACME');
    expect(inferred.expected).toBeNull();
    expect(inferred.note).toContain('without a model');
  });
});

describe('optimiseSkill', () => {
  const schema = {
    type: 'object',
    properties: {
      status: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      id: { type: 'string' },
      amount: { type: 'number' },
    },
  };

  it('turns repeated short corrections into an enum and describes the rest', () => {
    const result = optimiseSkill(schema, [
      { entityId: 'p1', expected: { status: 'PAID', id: 'A-1' }, predicted: { status: 'PAID by', id: 'A 1' } },
      { entityId: 'p2', expected: { status: 'UNPAID', amount: 5 }, predicted: { status: 'UNPAID', amount: '5' } },
      { entityId: 'p3', expected: { status: 'PAID', extra: 'x' }, predicted: { status: 'paid' } },
    ]);
    const props = result.schema.properties as Record<string, Record<string, unknown>>;
    expect(props.status).toEqual({
      anyOf: [
        { type: 'string', enum: ['PAID', 'UNPAID'], description: 'Answer with exactly one of the listed choices.' },
        { type: 'null' },
      ],
    });
    expect(props.id?.description).toBe('Reviewers corrected this field; follow the cases in SKILL.md.');
    expect(props.amount?.description).toBe('Plain numeric form, without symbols or thousands separators.');
    expect(props.extra).toEqual({ type: ['string', 'null'], description: expect.any(String) as string });
    expect(result.correctedItems).toBe(3);
    expect(result.casesSection).toContain('`status` (item p1): the response said "PAID by"; reviewed value "PAID".');
    // The base schema is not modified.
    expect(schema.properties.status).toEqual({ anyOf: [{ type: 'string' }, { type: 'null' }] });
  });

  it('leaves one-off identifiers free text', () => {
    const result = optimiseSkill({ type: 'object', properties: { code: { type: 'string' } } }, [
      { entityId: 'p1', expected: { code: 'X-1' }, predicted: { code: 'Y-2' } },
    ]);
    expect((result.schema.properties as Record<string, Record<string, unknown>>).code?.enum).toBeUndefined();
  });
});
