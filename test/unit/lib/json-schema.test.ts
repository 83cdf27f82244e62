import {
  checkAgainstSchema,
  measureSchema,
  SCHEMA_LIMITS,
  SchemaError,
  schemaProblem,
} from '../../../src/lib/json-schema';
import { compileSchema as compileTree } from '../../../src/engines/extract/schema-model';

/** `properties: {p0: {$ref: '#'}, p1: …}`: the probe's self-referencing schema with `width` references. */
const selfReferencing = (width: number): Record<string, unknown> => ({
  type: 'object',
  properties: Object.fromEntries(Array.from({ length: width }, (_, i) => [`p${i}`, { $ref: '#' }])),
});

/** `$defs` d0..dn where each d(i) refers to d(i-1) twice: acyclic, but 2^n objects once expanded. */
function doubling(levels: number): Record<string, unknown> {
  const defs: Record<string, unknown> = { d0: { type: 'string' } };
  for (let i = 1; i <= levels; i += 1) {
    defs[`d${i}`] = {
      type: 'object',
      properties: { a: { $ref: `#/$defs/d${i - 1}` }, b: { $ref: `#/$defs/d${i - 1}` } },
    };
  }
  return { type: 'object', $defs: defs, properties: { top: { $ref: `#/$defs/d${levels}` } } };
}

describe('the schema budget', () => {
  it('measures a pydantic-style schema with shared definitions', () => {
    const schema = {
      type: 'object',
      $defs: { Line: { type: 'object', properties: { sku: { type: 'string' }, qty: { type: 'integer' } } } },
      properties: { lines: { type: 'array', items: { $ref: '#/$defs/Line' } }, total: { type: 'number' } },
    };
    expect(measureSchema(schema).nodes).toBeGreaterThan(3);
    expect(schemaProblem(schema)).toBeNull();
    expect(checkAgainstSchema(schema, { lines: [{ sku: 'a', qty: 1 }], total: 1 }).valid).toBe(true);
  });

  it.each([1, 2, 3, 4, 12])('refuses a schema with %i self-references as recursive', (width) => {
    expect(schemaProblem(selfReferencing(width))).toMatch(/^it is recursive: "\$ref": "#" \(at #\/properties\/p0\)/);
  });

  it('refuses indirect and ancestor recursion, whatever the pointer spelling', () => {
    const mutual = {
      $defs: { a: { properties: { b: { $ref: '#/$defs/b' } } }, b: { items: { $ref: '#/%24defs/a' } } },
    };
    expect(schemaProblem({ type: 'object', properties: { x: { $ref: '#/$defs/a' } }, ...mutual })).toMatch(/recursive/);
    const ancestor = { properties: { x: { properties: { y: { $ref: '#/properties/x' } } } } };
    expect(schemaProblem(ancestor)).toMatch(/recursive/);
  });

  it('refuses an acyclic schema whose expansion doubles per level', () => {
    expect(schemaProblem(doubling(6))).toBeNull();
    expect(schemaProblem(doubling(15))).toMatch(/expand to more than 4000 schema objects/);
  });

  it('refuses non-local references, dynamic references, too many objects and too deep nesting', () => {
    expect(schemaProblem({ $ref: 'https://example.com/s.json' })).toMatch(/not a local reference/);
    expect(schemaProblem({ $dynamicRef: '#meta' })).toMatch(/not supported/);
    expect(schemaProblem({ properties: { a: { $ref: '#/$defs/missing' } } })).toMatch(/points at nothing/);
    const wide = Object.fromEntries(Array.from({ length: SCHEMA_LIMITS.maxNodes + 1 }, (_, i) => [`p${i}`, {}]));
    expect(schemaProblem({ type: 'object', properties: wide })).toMatch(/more than 2000 schema objects/);
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 100; i += 1) deep = { type: 'object', properties: { a: deep } };
    expect(schemaProblem(deep)).toMatch(/nested more than 64 levels/);
  });

  it('never lets an engine message through', () => {
    expect(schemaProblem({ type: 12 })).toMatch(/type/);
    expect(schemaProblem({ type: 12 })).not.toMatch(/Maximum call stack|at .*\.js/);
    expect(() => measureSchema([])).toThrow(SchemaError);
  });
});

describe("the extractor's schema tree", () => {
  it('stays bounded for a recursive schema that reaches it without the route check', () => {
    const tree = compileTree(selfReferencing(4));
    expect(tree.kind).toBe('object');
    let nodes = 0;
    const stack = [tree];
    while (stack.length > 0) {
      const node = stack.pop();
      nodes += 1;
      if (node?.kind === 'object') stack.push(...node.properties.map((p) => p.node));
      if (node?.kind === 'array') stack.push(node.items);
    }
    expect(nodes).toBeLessThanOrEqual(4000);
  });
});

describe('dialects', () => {
  it('reads a 2020-12 schema (as LangChain and zod send it) instead of refusing its $schema', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    };
    expect(schemaProblem(schema)).toBeNull();
    expect(checkAgainstSchema(schema, { city: 'Lyon' }).valid).toBe(true);
    expect(checkAgainstSchema(schema, { town: 'Lyon' }).valid).toBe(false);
    expect(schemaProblem({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' })).toBeNull();
  });
});
