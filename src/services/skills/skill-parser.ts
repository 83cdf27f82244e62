/**
 * Turns the checked files of a skill bundle into what the runtime reads: SKILL.md front matter and instructions,
 * `schema.json` / `schemas/<type>.json`, and `prism.yaml` (or the hosted platform's `vlmrun.yaml`).
 *
 * Every format rule of the Skills issue is enforced here and reported as an {@link InvalidSkillBundleError} naming
 * the file: a bundle that parses here is one the agent runtime, extraction and MCP can use without further checks.
 */
import { InvalidSkillBundleError } from '../../domain/errors';
import type { ParsedSkill, SkillConfig, SkillFileEntry } from '../../domain/skill';
import { parseBoundedYaml, type YamlLimits } from '../../lib/bounded-yaml';
import { schemaShapeProblem } from '../../lib/json-schema';
import { WorkBudgetExceeded } from '../../lib/work-budget';
import type { BundleEntry } from './skill-bundle';
import { parseStateDiagram } from './state-diagram';

/** Skill names: lower-case letters, digits and single hyphens, at most 64 characters. */
export const SKILL_NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const SKILL_NAME_MAX = 64;
export const SKILL_DESCRIPTION_MAX = 1024;

/** Config file names, ours first, then the hosted platform's. */
export const CONFIG_FILE_NAMES = ['prism.yaml', 'prism.yml', 'vlmrun.yaml', 'vlmrun.yml'] as const;
/** `apiVersion` values accepted in the config file: ours and the hosted platform's. */
export const CONFIG_API_VERSION = /^(prism|vlm\.run)\/v1(alpha\d*|beta\d*)?$/;

const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;
const SCHEMAS_DIR = /^schemas\/([\w.-]+)\.json$/;

/**
 * YAML budgets: front matter holds a name, a description of at most 1024 characters and a little
 * metadata; prism.yaml a few settings and a Mermaid graph. Both limits are far above real files and keep a parse
 * in the low milliseconds.
 */
export const FRONT_MATTER_LIMITS: YamlLimits = { maxBytes: 32 * 1024, maxNodes: 2000, maxDepth: 32 };
export const CONFIG_LIMITS: YamlLimits = { maxBytes: 128 * 1024, maxNodes: 5000, maxDepth: 32 };

/** The bundle's content as parsed, before it is tied to a stored record. */
export type SkillContent = Omit<ParsedSkill, 'record' | 'readFile'> & { name: string; description: string };

/** Bundles whose files all sit in one top folder (a zipped folder) are read as if that folder were the root. */
export function rootOf(entries: BundleEntry[]): string {
  if (entries.some((e) => e.path === 'SKILL.md')) return '';
  const tops = new Set(entries.map((e) => e.path.split('/')[0]));
  const [top] = tops;
  if (tops.size === 1 && top !== undefined && entries.some((e) => e.path === `${top}/SKILL.md`)) return `${top}/`;
  return '';
}

/**
 * Parses a checked bundle.
 * @throws InvalidSkillBundleError for a missing or unparsable SKILL.md, front matter without a valid `name` or
 * `description`, or an invalid schema or config file.
 */
export function parseSkillContent(entries: BundleEntry[]): SkillContent {
  const root = rootOf(entries);
  const files = new Map(
    entries.filter((e) => e.path.startsWith(root)).map((e) => [e.path.slice(root.length), e] as const),
  );
  const skillMd = files.get('SKILL.md');
  if (!skillMd) throw new InvalidSkillBundleError('missing_skill_md', 'SKILL.md', 'the bundle root has no SKILL.md');
  const { frontMatter, instructions } = parseSkillMd(skillMd.data);
  const name = frontMatter.name;
  if (typeof name !== 'string' || !SKILL_NAME_PATTERN.test(name) || name.length > SKILL_NAME_MAX) {
    throw new InvalidSkillBundleError(
      'invalid_front_matter',
      'SKILL.md',
      "front matter 'name' is required: lower-case letters, digits and hyphens, at most 64 characters",
    );
  }
  const description = frontMatter.description;
  if (typeof description !== 'string' || description.trim() === '' || description.length > SKILL_DESCRIPTION_MAX) {
    throw new InvalidSkillBundleError(
      'invalid_front_matter',
      'SKILL.md',
      "front matter 'description' is required: a non-empty string of at most 1024 characters",
    );
  }
  const schemaFile = files.get('schema.json');
  const schemas: Record<string, Record<string, unknown>> = {};
  for (const [filePath, entry] of files) {
    const type = SCHEMAS_DIR.exec(filePath)?.[1];
    if (type !== undefined) schemas[type] = parseSchema(root + filePath, entry.data);
  }
  const configName = CONFIG_FILE_NAMES.find((n) => files.has(n));
  const configFile = configName ? files.get(configName) : undefined;
  const fileList: SkillFileEntry[] = [...files.values()].map((e) => ({
    path: e.path.slice(root.length),
    sizeBytes: e.sizeBytes,
  }));
  return {
    name,
    description: description.trim(),
    frontMatter,
    instructions,
    schema: schemaFile ? parseSchema(root + 'schema.json', schemaFile.data) : null,
    schemas,
    config: configFile && configName ? parseConfig(root + configName, configFile.data) : null,
    files: fileList,
  };
}

/** Splits SKILL.md into its YAML front matter and Markdown body. */
export function parseSkillMd(data: Buffer): { frontMatter: Record<string, unknown>; instructions: string } {
  const text = data.toString('utf8');
  if (text.includes('\uFFFD')) throw new InvalidSkillBundleError('invalid_skill_md', 'SKILL.md', 'not UTF-8 text');
  const match = FRONT_MATTER.exec(text);
  if (!match) {
    throw new InvalidSkillBundleError(
      'invalid_skill_md',
      'SKILL.md',
      "SKILL.md must start with YAML front matter between '---' lines",
    );
  }
  let frontMatter: unknown;
  try {
    frontMatter = parseBoundedYaml(match[1] ?? '', FRONT_MATTER_LIMITS);
  } catch (error) {
    if (error instanceof WorkBudgetExceeded) throw error;
    throw new InvalidSkillBundleError(
      'invalid_skill_md',
      'SKILL.md',
      `front matter is not usable YAML (${firstLine(error)})`,
    );
  }
  if (!isObject(frontMatter)) {
    throw new InvalidSkillBundleError('invalid_front_matter', 'SKILL.md', 'front matter must be a YAML mapping');
  }
  return { frontMatter, instructions: text.slice(match[0].length).trim() };
}

function parseSchema(entry: string, data: Buffer): Record<string, unknown> {
  let schema: unknown;
  try {
    schema = JSON.parse(data.toString('utf8'));
  } catch (error) {
    throw new InvalidSkillBundleError('invalid_schema', entry, `not JSON (${firstLine(error)})`);
  }
  if (!isObject(schema)) throw new InvalidSkillBundleError('invalid_schema', entry, 'a JSON Schema must be an object');
  // Measured and checked now, compiled when first used (a bundle may hold many schemas; each compiles once, cached).
  const problem = schemaShapeProblem(schema);
  if (problem) throw new InvalidSkillBundleError('invalid_schema', entry, `not a usable JSON Schema: ${problem}`);
  return schema;
}

function parseConfig(entry: string, data: Buffer): SkillConfig {
  let doc: unknown;
  try {
    doc = parseBoundedYaml(data.toString('utf8'), CONFIG_LIMITS);
  } catch (error) {
    if (error instanceof WorkBudgetExceeded) throw error;
    throw new InvalidSkillBundleError('invalid_prism_yaml', entry, `not usable YAML (${firstLine(error)})`);
  }
  const fail = (why: string): never => {
    throw new InvalidSkillBundleError('invalid_prism_yaml', entry, why);
  };
  if (!isObject(doc)) return fail('must be a YAML mapping');
  const { apiVersion, metadata, model, toolsets, graph, plan, pauses } = doc;
  if (typeof apiVersion !== 'string' || !CONFIG_API_VERSION.test(apiVersion)) {
    fail("'apiVersion' must be 'prism/v1alpha' (or the hosted platform's 'vlm.run/v1alpha')");
  }
  if (metadata !== undefined && metadata !== null && !isObject(metadata)) fail("'metadata' must be a mapping");
  if (model !== undefined && model !== null && typeof model !== 'string') fail("'model' must be a string");
  if (toolsets !== undefined && toolsets !== null) {
    if (!Array.isArray(toolsets) || !toolsets.every((t) => typeof t === 'string')) {
      fail("'toolsets' must be a list of names");
    }
  }
  if (graph !== undefined && graph !== null && typeof graph !== 'string') fail("'graph' must be Mermaid text");
  let graphStates: string[] = [];
  if (typeof graph === 'string') {
    try {
      graphStates = parseStateDiagram(graph).states;
    } catch (error) {
      fail(`'graph' is not a Mermaid stateDiagram-v2: ${firstLine(error)}`);
    }
  }
  if (pauses !== undefined && pauses !== null) {
    if (!isObject(pauses) || !Object.values(pauses).every((q) => typeof q === 'string' && q.trim() !== '')) {
      fail("'pauses' must map graph states to questions");
    }
    const unknown = Object.keys(pauses).filter((state) => !graphStates.includes(state));
    if (unknown.length > 0) fail(`'pauses' names states the graph does not have: ${unknown.join(', ')}`);
  }
  return {
    apiVersion: apiVersion as string,
    metadata: isObject(metadata) ? metadata : {},
    ...(isObject(pauses) ? { pauses: pauses as Record<string, string> } : {}),
    model: typeof model === 'string' ? model : null,
    toolsets: Array.isArray(toolsets) ? (toolsets as string[]) : [],
    graph: typeof graph === 'string' ? graph : null,
    graphStates,
    plan: plan ?? null,
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]?.slice(0, 200) ?? '';
}
