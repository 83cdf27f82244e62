/**
 * Generated hostile inputs of a given size, one generator per parser of untrusted structure: the fuzz
 * and cost suite sends them at growing sizes, and scripts/cost-curves.ts measures their cost curves against a
 * running server. Each is small on the wire and, without a budget, costs far more than its size.
 */
import { craftZip, skillMd } from './crafted-zip';

/** SKILL.md whose front matter has `keys` keys (yaml's duplicate-key check made this N²). */
export function frontMatterZip(keys: number): Buffer {
  const extra = Array.from({ length: keys }, (_, i) => `k${i}: v`).join('\n');
  return craftZip([
    { name: 'SKILL.md', data: `---\nname: wide\ndescription: Wide front matter.\n${extra}\n---\n\nRead it.\n` },
  ]);
}

/** A skill whose prism.yaml graph is a chain of `states` states (the walk was a scan per state). */
export function stateGraphZip(states: number): Buffer {
  const lines = ['stateDiagram-v2', '[*] --> S0'];
  for (let i = 1; i < states; i += 1) lines.push(`S${i - 1} --> S${i}`);
  lines.push(`S${states - 1} --> [*]`);
  const yaml = `apiVersion: prism/v1alpha\ngraph: |\n${lines.map((l) => `  ${l}`).join('\n')}\n`;
  return craftZip([
    { name: 'SKILL.md', data: skillMd('graph-skill') },
    { name: 'prism.yaml', data: yaml },
  ]);
}

/** The probe's schema: `width` properties that each refer to the whole schema. */
export function selfReferencingSchema(width: number): Record<string, unknown> {
  return {
    type: 'object',
    properties: Object.fromEntries(Array.from({ length: width }, (_, i) => [`p${i}`, { $ref: '#' }])),
  };
}

/** Acyclic, but each of `levels` definitions refers to the one below twice: 2^levels objects once expanded. */
export function doublingSchema(levels: number): Record<string, unknown> {
  const defs: Record<string, unknown> = { d0: { type: 'string' } };
  for (let i = 1; i <= levels; i += 1) {
    defs[`d${i}`] = {
      type: 'object',
      properties: { a: { $ref: `#/$defs/d${i - 1}` }, b: { $ref: `#/$defs/d${i - 1}` } },
    };
  }
  return { type: 'object', $defs: defs, properties: { top: { $ref: `#/$defs/d${levels}` } } };
}

/** An object schema with `width` plain properties (ajv's compile time grows faster than linearly with it). */
export function wideSchema(width: number): Record<string, unknown> {
  return {
    type: 'object',
    properties: Object.fromEntries(Array.from({ length: width }, (_, i) => [`f${i}`, { type: ['string', 'null'] }])),
  };
}
