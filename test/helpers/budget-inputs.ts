/**
 * Generated inputs for the per-request work budget (issue 39): shapes whose cost grows with values, characters
 * and schemas per request rather than with objects per schema, which the per-schema bounds of round two let
 * through. Used by test/integration/request-budget.test.ts and scripts/cost-curves.ts.
 */
import { craftZip, skillMd } from './crafted-zip';

/** One string property whose `enum` has `values` values (each matched against the document's rows). */
export function enumSchema(values: number): Record<string, unknown> {
  return {
    type: 'object',
    properties: {
      kind: { type: 'string', enum: Array.from({ length: values }, (_, i) => `choice number ${i}`) },
    },
  };
}

/** One `$defs` string with a `descriptionBytes`-long description, referenced by `refs` properties. */
export function longDescriptionSchema(descriptionBytes: number, refs: number): Record<string, unknown> {
  return {
    type: 'object',
    $defs: { text: { type: 'string', description: 'word '.repeat(Math.ceil(descriptionBytes / 5)) } },
    properties: Object.fromEntries(Array.from({ length: refs }, (_, i) => [`p${i}`, { $ref: '#/$defs/text' }])),
  };
}

/** A skill zip with `schemas` files `schemas/t<i>.json`, each an object of `properties` string properties. */
export function manySchemasZip(schemas: number, properties: number): Buffer {
  const schema = JSON.stringify({
    type: 'object',
    properties: Object.fromEntries(Array.from({ length: properties }, (_, i) => [`f${i}`, { type: 'string' }])),
  });
  return craftZip([
    { name: 'SKILL.md', data: skillMd('many-schemas') },
    ...Array.from({ length: schemas }, (_, i) => ({ name: `schemas/t${i}.json`, data: schema })),
  ]);
}

/**
 * An object schema of `count` string properties with several keywords each (ajv generates code for every one):
 * within the per-schema limits and (up to ~1,900) the anonymous budget, the most ajv compile time an anonymous
 * request can ask for. The structure-pool suite and scripts/cost-curves.ts send it.
 */
export function heavySchema(count: number, tag: string): Record<string, unknown> {
  const property = (i: number) => ({
    type: 'string',
    description: `${tag} field ${i}`,
    format: 'date',
    minLength: 1,
    maxLength: 40,
    pattern: '^[0-9-]+$',
  });
  return {
    type: 'object',
    properties: Object.fromEntries(Array.from({ length: count }, (_, i) => [`f${i}`, property(i)])),
  };
}
