/**
 * From zip bytes to the {@link ParsedSkill} the runtime reads: check and parse once, derive the version string, and
 * read single files back out of the stored zip on demand (the view keeps only the small parsed parts in memory).
 */
import { BadRequestError, NotFoundError } from '../../domain/errors';
import type { ParsedSkill, SkillRecord } from '../../domain/skill';
import { sha256Hex } from '../../lib/hash';
import { prepareSchemaShapes } from '../../lib/json-schema';
import { readSkillBundle, type BundleEntry, type BundleLimits } from './skill-bundle';
import { parseSkillContent, rootOf, SKILL_NAME_MAX, SKILL_NAME_PATTERN, type SkillContent } from './skill-parser';

/** A bundle that passed every check, with the sha256 of its bytes. */
export interface CheckedSkill {
  sha256: string;
  content: SkillContent;
}

/** Files the parsed view needs in memory; every other file is checked, then dropped until it is read. */
const PARSED_FILE = /(^|\/)(SKILL\.md|[^/]+\.json|[^/]+\.ya?ml)$/;

/**
 * Checks every entry of `zip` and parses the skill.
 * @throws InvalidSkillBundleError naming the entry and the rule broken.
 */
export async function parseSkillZip(zip: Buffer, limits: BundleLimits): Promise<CheckedSkill> {
  const entries = await readSkillBundle(zip, limits, (p) => PARSED_FILE.test(p));
  // Large schemas of the bundle are measured and meta-checked on a structure worker first (lib/json-schema.ts),
  // so the parser's own check finds the answers instead of walking them on the event loop.
  await prepareSchemaShapes(bundleSchemas(entries));
  return { sha256: sha256Hex(zip), content: parseSkillContent(entries) };
}

/** The bundle's `schema.json` and `schemas/*.json` that parse as JSON (the parser reports the others). */
function bundleSchemas(entries: BundleEntry[]): unknown[] {
  const root = rootOf(entries);
  const schemas: unknown[] = [];
  for (const entry of entries) {
    const inside = entry.path.slice(root.length);
    if (!entry.path.startsWith(root) || !(inside === 'schema.json' || /^schemas\/[\w.-]+\.json$/.test(inside))) {
      continue;
    }
    try {
      schemas.push(JSON.parse(entry.data.toString('utf8')));
    } catch {
      // not JSON: the parser names the file
    }
  }
  return schemas;
}

/** `YYYYMMDD-<first 8 hex of the zip's sha256>`, the date in UTC. */
export function skillVersionOf(at: Date, sha256: string): string {
  return `${at.toISOString().slice(0, 10).replace(/-/g, '')}-${sha256.slice(0, 8)}`;
}

/** @throws BadRequestError for a name that is not lower-case letters, digits and hyphens. */
export function checkSkillName(name: string): string {
  if (!SKILL_NAME_PATTERN.test(name) || name.length > SKILL_NAME_MAX) {
    throw new BadRequestError(
      `Skill name '${name.slice(0, 80)}' is invalid: use lower-case letters, digits and hyphens (at most 64).`,
      'invalid_skill_bundle',
      'name',
    );
  }
  return name;
}

/** Builds the view of a stored (or inline) version; `checked` skips re-parsing bytes just parsed. */
export async function loadSkillView(
  record: SkillRecord,
  readZip: () => Promise<Buffer>,
  limits: BundleLimits,
  checked?: CheckedSkill,
): Promise<ParsedSkill> {
  const { content } = checked ?? (await parseSkillZip(await readZip(), limits));
  const known = new Set(content.files.map((f) => f.path));
  return {
    record,
    frontMatter: content.frontMatter,
    instructions: content.instructions,
    schema: content.schema,
    schemas: content.schemas,
    config: content.config,
    files: content.files,
    async readFile(path) {
      if (!known.has(path)) throw new NotFoundError('file', path);
      const zip = await readZip();
      const entries = await readSkillBundle(zip, limits, (p) => p.endsWith(path));
      const root = rootOf(entries);
      const entry = entries.find((e) => e.path === root + path);
      if (!entry) throw new NotFoundError('file', path);
      return entry.data;
    },
  };
}
