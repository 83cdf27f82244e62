/**
 * The operator's models file (`PRISM_MODELS_FILE`, YAML): upstream servers, extra models, overrides of built-in
 * models and extra aliases.
 *
 * Parsing is strict (an unknown key is a typo, not something to ignore) and reports every problem at once with its
 * place in the file, so an operator fixes the file in one pass. Keys are never in the file: an upstream names the
 * environment variable that holds its key.
 */
import fs from 'node:fs';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { INPUT_TYPES, MODEL_MODES } from './model.types';

/** Raised when the models file (or the catalogue built from it) is invalid; `problems` names each one. */
export class ModelCatalogueError extends Error {
  constructor(
    readonly problems: string[],
    readonly source: string,
  ) {
    super(`Invalid models file ${source}:\n  ${problems.join('\n  ')}`);
    this.name = 'ModelCatalogueError';
  }
}

const name = z.string().regex(/^[A-Za-z0-9][\w.:/@-]*$/, 'letters, digits and . _ - : / @ only');
const seconds = z.number().positive().max(86_400);
const price = z.number().min(0).nullable();

const upstreamSchema = z.strictObject({
  name,
  base_url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
  api_key_env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name, not a key')
    .optional(),
  provider: z.string().min(1).optional(),
});

const engineSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('local'), name: z.string().min(1) }),
  z.strictObject({ kind: z.literal('upstream'), upstream: name, model: z.string().min(1) }),
]);

const capabilitiesSchema = z.strictObject({
  supported_input_types: z.array(z.enum(INPUT_TYPES)).min(1).optional(),
  json_schema: z.boolean().optional(),
  max_images: z.int().min(0).nullable().optional(),
  max_media_inputs: z.int().min(0).nullable().optional(),
  methods: z.array(z.string().min(1)).optional(),
  default_method: z.string().min(1).nullable().optional(),
  dimensions: z.array(z.int().positive()).optional(),
});

const modelSchema = z.strictObject({
  id: name,
  aliases: z.array(name).optional(),
  mode: z.enum(MODEL_MODES).optional(),
  engine: engineSchema.optional(),
  description: z.string().optional(),
  owned_by: z.string().min(1).optional(),
  created: z.int().min(0).optional(),
  capabilities: capabilitiesSchema.optional(),
  supported_parameters: z.array(z.string().min(1)).optional(),
  pricing: z
    .strictObject({ prompt: price.optional(), completion: price.optional(), per_minute: price.optional() })
    .optional(),
  throughput: z
    .strictObject({
      tokens_per_second: z.number().positive().nullable().optional(),
      pages_per_minute: z.number().positive().nullable().optional(),
    })
    .optional(),
  ttft_timeout_s: seconds.optional(),
  total_timeout_s: seconds.optional(),
  serving: z.boolean().optional(),
});

const fileSchema = z.strictObject({
  upstreams: z.array(upstreamSchema).default([]),
  models: z.array(modelSchema).default([]),
  /** Extra aliases: alias → model id. */
  aliases: z.record(name, name).default({}),
});

/** The parsed file, still in its snake_case wire form. */
export type ModelsFile = z.infer<typeof fileSchema>;
export type ModelEntry = z.infer<typeof modelSchema>;
export type UpstreamEntry = z.infer<typeof upstreamSchema>;

/** An empty file: no upstreams, no changes to the built-in models. */
export const EMPTY_MODELS_FILE: ModelsFile = { upstreams: [], models: [], aliases: {} };

/**
 * Parse and validate models-file text.
 * @throws ModelCatalogueError naming every YAML and schema problem, each with its place in the file.
 */
export function parseModelsFile(text: string, source = 'models file'): ModelsFile {
  const doc = parseDocument(text, { prettyErrors: false });
  if (doc.errors.length > 0) {
    throw new ModelCatalogueError(
      doc.errors.map((e) => `YAML: ${e.message.split('\n')[0] ?? e.message}`),
      source,
    );
  }
  const raw: unknown = doc.toJS() ?? {};
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ModelCatalogueError(
      parsed.error.issues.map((issue) => `${formatPath(issue.path, raw)}: ${issue.message}`),
      source,
    );
  }
  return parsed.data;
}

/** Read and parse the file at `path`. @throws ModelCatalogueError when it cannot be read or is invalid. */
export function readModelsFile(path: string): ModelsFile {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (error) {
    throw new ModelCatalogueError([`cannot read the file: ${(error as Error).message}`], path);
  }
  return parseModelsFile(text, path);
}

/** `models[2] (my-model).engine.kind` — names the model by id when the entry has one, so it is easy to find. */
function formatPath(path: readonly PropertyKey[], raw: unknown): string {
  if (path.length === 0) return '(top level)';
  let out = '';
  path.forEach((part, i) => {
    out += typeof part === 'number' ? `[${part}]` : `${i === 0 ? '' : '.'}${String(part)}`;
    if (i === 1 && path[0] === 'models' && typeof part === 'number') {
      const id = (raw as { models?: { id?: unknown }[] }).models?.[part]?.id;
      if (typeof id === 'string') out += ` (${id})`;
    }
  });
  return out;
}
