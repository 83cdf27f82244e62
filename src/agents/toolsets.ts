/**
 * Toolsets: named groups of tools, as real clients send them (`toolsets` on execute:
 * "core", "image", "document", "video", "web", …) and as a skill's `prism.yaml` declares them.
 *
 * A run's tools are the union of its toolsets' tools and the exact names in `config.tools`; `core` (filling a
 * schema, hub domains, skill files, artifacts) is always on, since no answer or skill works without it. With
 * neither toolsets nor tools, every tool is available. A toolset name that is not known — or one the hosted
 * platform has but Prism does not implement (image or world generation, visualisation) — is a 400 naming it,
 * never silently dropped. Every registered tool must belong to exactly one toolset (a unit test checks).
 */
import { BadRequestError } from '../domain/errors';
import type { AnyToolDefinition } from './sdk';
import type { ToolRegistry } from './tool-registry';

export const TOOLSETS: Readonly<Record<string, readonly string[]>> = {
  core: ['fill_json_schema', 'lookup_hub_domain', 'read_skill_file', 'read_artifact', 'write_artifact'],
  image: ['ocr_image'],
  document: ['read_document', 'render_page'],
  video: ['sample_video_frames'],
  audio: ['probe_audio', 'transcribe_audio'],
  web: ['fetch_url'],
  memory: ['remember', 'recall'],
};

/** Toolsets of the hosted platform that Prism has no tools for, with what they would do. */
const NOT_PROVIDED: Readonly<Record<string, string>> = {
  'image-gen': 'image generation',
  'world-gen': 'world generation',
  viz: 'visualisation',
};

/** The toolset a tool belongs to, or null. */
export function toolsetOf(tool: string): string | null {
  return Object.entries(TOOLSETS).find(([, tools]) => tools.includes(tool))?.[0] ?? null;
}

/** @throws BadRequestError `unknown_toolset` naming the first name that is not a toolset Prism provides. */
export function checkToolsets(names: readonly string[] | null | undefined, param = 'toolsets'): void {
  for (const name of names ?? []) {
    if (name in TOOLSETS) continue;
    const missing = NOT_PROVIDED[name];
    const known = Object.keys(TOOLSETS).join(', ');
    throw new BadRequestError(
      missing
        ? `Toolset '${name}' (${missing}) is not provided by this server. Available toolsets: ${known}.`
        : `Unknown toolset '${name}'. Available toolsets: ${known}.`,
      'unknown_toolset',
      param,
    );
  }
}

/**
 * The tools of a run: `tools` by exact name plus every tool of `toolsets` (and of `core`); both null → every tool.
 * @throws BadRequestError `unknown_tool` / `unknown_toolset` naming what does not exist.
 */
export function selectRunTools(
  registry: ToolRegistry,
  tools: readonly string[] | null | undefined,
  toolsets: readonly string[] | null | undefined,
  params: { tools?: string; toolsets?: string } = {},
): AnyToolDefinition[] {
  const named = tools === null || tools === undefined ? null : registry.select(tools, params.tools);
  if (toolsets === null || toolsets === undefined || toolsets.length === 0) return named ?? registry.list();
  checkToolsets(toolsets, params.toolsets);
  const wanted = new Set(['core', ...toolsets].flatMap((set) => TOOLSETS[set] ?? []));
  const fromSets = registry.list().filter((tool) => wanted.has(tool.name));
  const chosen = new Map<string, AnyToolDefinition>();
  for (const tool of [...fromSets, ...(named ?? [])]) chosen.set(tool.name, tool);
  return [...chosen.values()];
}
