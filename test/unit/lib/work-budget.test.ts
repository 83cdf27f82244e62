/**
 * The work budget's accounting (src/lib/work-budget.ts, charged by src/lib/json-schema.ts): what a schema costs
 * grows linearly with what it holds (units at N, 4N and 16N compared exactly, not timed), a cached schema costs a
 * request what a fresh one does, several schemas add up, and a spent budget names the kind that ran out.
 */
import { compileSchema, schemaProblem, schemaShapeProblem } from '../../../src/lib/json-schema';
import {
  DEFAULT_WORK_LIMITS,
  parseWorkLimits,
  runWithWorkBudget,
  WorkBudget,
  WorkBudgetExceeded,
  type WorkKind,
} from '../../../src/lib/work-budget';
import { enumSchema, longDescriptionSchema } from '../../helpers/budget-inputs';

const HUGE = Object.fromEntries(Object.keys(DEFAULT_WORK_LIMITS.keyed).map((k) => [k, 1e12])) as Record<
  WorkKind,
  number
>;

function spentOn(work: () => void): Record<WorkKind, number> {
  const budget = new WorkBudget(HUGE, 'keyed');
  runWithWorkBudget(budget, work);
  return budget.usage();
}

describe('work budget', () => {
  it('charges enum values, characters and refs linearly in the input', () => {
    const enums = [100, 400, 1600].map((n) => spentOn(() => schemaShapeProblem(enumSchema(n))).enum_values);
    expect(enums).toEqual([100, 400, 1600]);
    const chars = [10, 40, 160].map((n) => spentOn(() => schemaShapeProblem(longDescriptionSchema(5000, n))));
    expect(chars.map((c) => c.refs_expanded)).toEqual([10, 40, 160]);
    const ratio = (chars[2]?.string_chars ?? 0) / (chars[1]?.string_chars ?? 1);
    expect(ratio).toBeGreaterThan(3.5);
    expect(ratio).toBeLessThan(4.1);
  });

  it('charges a cached schema like a fresh one, and adds schemas of one request up', () => {
    const schema = longDescriptionSchema(100, 7);
    const fresh = spentOn(() => compileSchema(schema));
    const cached = spentOn(() => compileSchema(schema));
    expect(cached).toEqual(fresh);
    const twice = spentOn(() => {
      compileSchema(schema);
      compileSchema(schema);
    });
    expect(twice.schemas).toBe(2 * fresh.schemas);
    expect(twice.string_chars).toBe(2 * fresh.string_chars);
  });

  it('stops at the limit that ran out, and schemaProblem does not turn it into a schema reason', () => {
    const small = new WorkBudget({ ...HUGE, enum_values: 500 }, 'anonymous');
    let thrown: unknown;
    try {
      runWithWorkBudget(small, () => schemaProblem(enumSchema(501)));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(WorkBudgetExceeded);
    expect(thrown).toMatchObject({ limit: 'enum_values', allowed: 500, caller: 'anonymous' });
    expect((thrown as Error).message).toMatch(/more than 500 enum values .*or use an API key/);
  });

  it('checks long enums for duplicates without comparing every pair', () => {
    const values = Array.from({ length: 5000 }, (_, i) => `v${i}`);
    expect(schemaProblem({ type: 'string', enum: values })).toBeNull();
    expect(schemaProblem({ type: 'string', enum: [...values, 'v17'] })).toMatch(/must NOT have duplicate items/);
    expect(schemaProblem({ type: 'string', enum: ['a', 'a'] })).toMatch(/duplicate/);
  });

  it('reads kind=count settings over the defaults and refuses unknown kinds', () => {
    const limits = parseWorkLimits('enum_values=10, schemas=3', DEFAULT_WORK_LIMITS.anonymous);
    expect(limits).toEqual({ ...DEFAULT_WORK_LIMITS.anonymous, enum_values: 10, schemas: 3 });
    expect(() => parseWorkLimits('cpu=3', DEFAULT_WORK_LIMITS.keyed)).toThrow(/kind=count/);
  });
});
