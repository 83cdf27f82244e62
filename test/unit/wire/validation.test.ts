import { z } from 'zod';
import { RequestValidationError } from '../../../src/domain/errors';
import { pagination, queryBool } from '../../../src/wire/common.schemas';
import { parseInput } from '../../../src/wire/validation';

function issues(schema: z.ZodType, value: unknown, location: 'body' | 'query' = 'body') {
  try {
    parseInput(schema, value, location);
  } catch (error) {
    if (error instanceof RequestValidationError) return error.issues;
    throw error;
  }
  throw new Error('expected a validation error');
}

describe('FastAPI-style validation issues', () => {
  it('reports a missing body field with the parent object as input', () => {
    const schema = z.object({ model: z.string(), input: z.string() });
    expect(issues(schema, { model: 'm' })).toEqual([
      { type: 'missing', loc: ['body', 'input'], msg: 'Field required', input: { model: 'm' } },
    ]);
  });

  it('reports nested paths and wrong types', () => {
    const schema = z.object({ config: z.object({ detail: z.enum(['auto', 'hi', 'lo']) }), n: z.number().int() });
    const found = issues(schema, { config: { detail: 'max' }, n: 'x' });
    expect(found).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'enum',
          loc: ['body', 'config', 'detail'],
          msg: "Input should be 'auto', 'hi' or 'lo'",
          input: 'max',
          ctx: { expected: "'auto', 'hi' or 'lo'" },
        }),
        expect.objectContaining({ type: 'int_type', loc: ['body', 'n'] }),
      ]),
    );
  });

  it('parses query integers and booleans like FastAPI', () => {
    const schema = pagination({ max: 25, default: 5 }).extend({ flag: queryBool(true) });
    expect(parseInput(schema, {}, 'query')).toEqual({ skip: 0, limit: 5, flag: true });
    expect(parseInput(schema, { skip: '3', limit: '25', flag: 'off' }, 'query')).toEqual({
      skip: 3,
      limit: 25,
      flag: false,
    });
    const found = issues(schema, { skip: '1.5', limit: '26', flag: 'perhaps' }, 'query');
    expect(found).toEqual([
      expect.objectContaining({ type: 'int_parsing', loc: ['query', 'skip'], input: '1.5' }),
      expect.objectContaining({ type: 'less_than_equal', loc: ['query', 'limit'], input: '26', ctx: { le: 25 } }),
      expect.objectContaining({ type: 'bool_parsing', loc: ['query', 'flag'], input: 'perhaps' }),
    ]);
  });

  it('reports string and list bounds, patterns and extra keys', () => {
    const schema = z
      .object({ name: z.string().min(2), tags: z.array(z.string()).max(1), id: z.string().regex(/^[a-f]+$/) })
      .strict();
    const found = issues(schema, { name: 'a', tags: ['x', 'y'], id: 'zz', extra: 1 });
    expect(found.map((i) => i.type).sort()).toEqual(
      ['extra_forbidden', 'string_pattern_mismatch', 'string_too_short', 'too_long'].sort(),
    );
  });
});
