/**
 * Hub field lists become JSON schemas: nested objects, arrays of objects, enums, nullable fields, maps and unions;
 * every bundled domain compiles with ajv.
 */
import { compileSchema } from '../../../src/lib/json-schema';
import { objectSchema } from '../../../src/services/hub/field-schema';
import { createHubService } from '../../../src/services/hub/hub.service';

describe('hub field schema', () => {
  it('maps every field type', () => {
    const schema = objectSchema(
      [
        { name: 'total', type: 'number', required: true },
        { name: 'note', type: 'string', nullable: true, description: 'free text' },
        { name: 'kind', type: 'enum', enum: ['a', 'b'] },
        { name: 'tags', type: 'array<string>' },
        { name: 'items', type: 'array<object>', item_fields: [{ name: 'qty', type: 'integer', required: true }] },
        { name: 'extra', type: 'map<string,object>' },
        { name: 'code', type: 'number | string' },
        { name: 'when', type: 'string|null', format: 'date' },
      ],
      'Thing',
    );
    expect(schema).toEqual({
      type: 'object',
      title: 'Thing',
      required: ['total'],
      properties: {
        total: { type: 'number' },
        note: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null, description: 'free text' },
        kind: { type: 'string', enum: ['a', 'b'] },
        tags: { type: 'array', items: { type: 'string' } },
        items: {
          type: 'array',
          items: { type: 'object', properties: { qty: { type: 'integer' } }, required: ['qty'] },
        },
        extra: { type: 'object', additionalProperties: { type: 'object' } },
        code: { anyOf: [{ type: 'number' }, { type: 'string' }] },
        when: { anyOf: [{ type: 'string', format: 'date' }, { type: 'null' }], default: null },
      },
    });
  });

  it('gives every bundled domain a schema ajv compiles and a stable 8-hex hash', () => {
    const hub = createHubService();
    expect(hub.list().length).toBeGreaterThanOrEqual(31);
    for (const domain of hub.list()) {
      expect(() => compileSchema(domain.jsonSchema)).not.toThrow();
      expect(domain.schemaHash).toMatch(/^[0-9a-f]{8}$/);
    }
    expect(hub.get('document.receipt').jsonSchema).toMatchObject({
      type: 'object',
      properties: { total: { type: 'number' }, merchant_name: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
    });
  });
});
