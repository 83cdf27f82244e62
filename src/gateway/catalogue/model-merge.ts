/**
 * Turns built-in models plus a parsed models file into the final list of models and upstreams.
 *
 * An entry whose id matches an existing model overrides only the fields it gives (capabilities, pricing and
 * throughput field by field); any other entry is a new model and must name its engine. Cross-references (upstream
 * names, alias targets, alias collisions, missing key variables) are checked here, all problems at once.
 */
import type { ModelEntry, ModelsFile } from './models-file';
import type { CatalogueModel, ModelMode, UpstreamServer } from './model.types';

/** Parameters an upstream chat model reads when the file does not list them (the common OpenAI set). */
export const DEFAULT_UPSTREAM_CHAT_PARAMETERS = [
  'max_tokens',
  'max_completion_tokens',
  'stream',
  'stream_options',
  'temperature',
  'top_p',
  'stop',
  'seed',
  'n',
  'presence_penalty',
  'frequency_penalty',
  'logprobs',
  'top_logprobs',
  'response_format',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'user',
];

/** Parameters an upstream embedding model reads when the file does not list them. */
export const DEFAULT_UPSTREAM_EMBEDDING_PARAMETERS = ['encoding_format', 'dimensions', 'user'];

/** Form fields an upstream transcription model reads when the file does not list them (OpenAI's set). */
export const DEFAULT_UPSTREAM_TRANSCRIPTION_PARAMETERS = [
  'language',
  'prompt',
  'response_format',
  'temperature',
  'timestamp_granularities',
];

const DEFAULT_PARAMETERS: Record<ModelMode, string[]> = {
  chat: DEFAULT_UPSTREAM_CHAT_PARAMETERS,
  embedding: DEFAULT_UPSTREAM_EMBEDDING_PARAMETERS,
  transcription: DEFAULT_UPSTREAM_TRANSCRIPTION_PARAMETERS,
};

export interface MergedCatalogue {
  models: CatalogueModel[];
  upstreams: Map<string, UpstreamServer>;
  /** Every id and alias → model id. */
  names: Map<string, string>;
  /** Upstream name → its key (null when the upstream needs none). */
  keys: Map<string, string | null>;
  problems: string[];
}

/** Merge `file` over `builtins`; problems are returned, not thrown, so the caller reports them together. */
export function mergeModels(
  builtins: readonly CatalogueModel[],
  file: ModelsFile,
  env: Readonly<Record<string, string | undefined>>,
  now: number,
): MergedCatalogue {
  const problems: string[] = [];
  const upstreams = new Map<string, UpstreamServer>();
  const keys = new Map<string, string | null>();
  for (const u of file.upstreams) {
    if (upstreams.has(u.name)) problems.push(`upstreams.${u.name}: defined twice`);
    const apiKeyEnv = u.api_key_env ?? null;
    const key = apiKeyEnv === null ? null : (env[apiKeyEnv] ?? '');
    if (apiKeyEnv !== null && key === '') {
      problems.push(`upstreams.${u.name}.api_key_env: environment variable ${apiKeyEnv} is not set`);
    }
    upstreams.set(u.name, {
      name: u.name,
      baseUrl: u.base_url.replace(/\/+$/, ''),
      apiKeyEnv,
      provider: u.provider ?? u.name,
    });
    keys.set(u.name, key);
  }

  const byId = new Map<string, CatalogueModel>(builtins.map((m) => [m.id, structuredClone(m)]));
  const seen = new Set<string>();
  for (const entry of file.models) {
    if (seen.has(entry.id)) problems.push(`models.${entry.id}: defined twice`);
    seen.add(entry.id);
    const base = byId.get(entry.id);
    if (!base && !entry.engine) {
      problems.push(`models.${entry.id}.engine: required for a new model`);
      continue;
    }
    byId.set(entry.id, applyEntry(base, entry, upstreams, now));
  }

  const models = [...byId.values()];
  for (const m of models) problems.push(...checkModel(m, upstreams));
  const names = buildNames(models, file.aliases, problems);
  return { models, upstreams, names, keys, problems };
}

function applyEntry(
  base: CatalogueModel | undefined,
  e: ModelEntry,
  upstreams: Map<string, UpstreamServer>,
  now: number,
): CatalogueModel {
  const engine = e.engine ?? base?.engine ?? { kind: 'local', name: e.id };
  const mode = e.mode ?? base?.mode ?? 'chat';
  const c = e.capabilities ?? {};
  const bc = base?.capabilities;
  const upstreamProvider = engine.kind === 'upstream' ? upstreams.get(engine.upstream)?.provider : undefined;
  return {
    id: e.id,
    aliases: e.aliases ?? base?.aliases ?? [],
    mode,
    engine,
    description: e.description ?? base?.description ?? '',
    ownedBy: e.owned_by ?? (e.engine ? upstreamProvider : undefined) ?? base?.ownedBy ?? upstreamProvider ?? 'prism',
    created: e.created ?? base?.created ?? now,
    capabilities: {
      supportedInputTypes:
        c.supported_input_types ?? bc?.supportedInputTypes ?? (mode === 'transcription' ? ['audio'] : ['text']),
      jsonSchema: c.json_schema ?? bc?.jsonSchema ?? false,
      maxImages: c.max_images !== undefined ? c.max_images : (bc?.maxImages ?? null),
      maxMediaInputs: c.max_media_inputs !== undefined ? c.max_media_inputs : (bc?.maxMediaInputs ?? null),
      methods: c.methods ?? bc?.methods ?? [],
      defaultMethod: c.default_method !== undefined ? c.default_method : (bc?.defaultMethod ?? null),
      dimensions: c.dimensions ?? bc?.dimensions ?? [],
    },
    supportedParameters: e.supported_parameters ?? base?.supportedParameters ?? DEFAULT_PARAMETERS[mode],
    pricing: {
      prompt: e.pricing?.prompt !== undefined ? e.pricing.prompt : (base?.pricing.prompt ?? null),
      completion: e.pricing?.completion !== undefined ? e.pricing.completion : (base?.pricing.completion ?? null),
      ...perMinuteOf(e, base),
    },
    throughput: {
      tokensPerSecond:
        e.throughput?.tokens_per_second !== undefined
          ? e.throughput.tokens_per_second
          : (base?.throughput.tokensPerSecond ?? null),
      pagesPerMinute:
        e.throughput?.pages_per_minute !== undefined
          ? e.throughput.pages_per_minute
          : (base?.throughput.pagesPerMinute ?? null),
    },
    ttftTimeoutS: e.ttft_timeout_s ?? base?.ttftTimeoutS ?? 30,
    totalTimeoutS: e.total_timeout_s ?? base?.totalTimeoutS ?? 600,
    serving: e.serving ?? base?.serving ?? true,
  };
}

/** `perMinute` when the entry or its base gives one (only models priced by audio time have it). */
function perMinuteOf(e: ModelEntry, base: CatalogueModel | undefined): { perMinute?: number | null } {
  if (e.pricing?.per_minute !== undefined) return { perMinute: e.pricing.per_minute };
  return base?.pricing.perMinute !== undefined ? { perMinute: base.pricing.perMinute } : {};
}

function checkModel(m: CatalogueModel, upstreams: Map<string, UpstreamServer>): string[] {
  const problems: string[] = [];
  const at = `models.${m.id}`;
  if (m.mode === 'transcription' && m.engine.kind !== 'upstream') {
    problems.push(`${at}.engine: a transcription model runs on an upstream (kind: upstream)`);
  }
  if (m.pricing.perMinute != null && m.mode !== 'transcription') {
    problems.push(`${at}.pricing.per_minute: only transcription models are priced per audio minute`);
  }
  if (m.engine.kind === 'upstream' && !upstreams.has(m.engine.upstream)) {
    problems.push(`${at}.engine.upstream: no upstream named '${m.engine.upstream}'`);
  }
  const { defaultMethod, methods } = m.capabilities;
  if (defaultMethod !== null && !methods.includes(defaultMethod)) {
    problems.push(`${at}.capabilities.default_method: '${defaultMethod}' is not one of methods`);
  }
  if (m.ttftTimeoutS > m.totalTimeoutS) {
    problems.push(`${at}.ttft_timeout_s: ${m.ttftTimeoutS} is longer than total_timeout_s ${m.totalTimeoutS}`);
  }
  return problems;
}

function buildNames(models: CatalogueModel[], extra: Record<string, string>, problems: string[]): Map<string, string> {
  const names = new Map<string, string>(models.map((m) => [m.id, m.id]));
  const claim = (alias: string, target: string, where: string): void => {
    const owner = names.get(alias);
    if (owner !== undefined && owner !== target) {
      problems.push(`${where}: '${alias}' already names model '${owner}'`);
      return;
    }
    names.set(alias, target);
  };
  for (const m of models) for (const alias of m.aliases) claim(alias, m.id, `models.${m.id}.aliases`);
  for (const [alias, target] of Object.entries(extra)) {
    if (!names.has(target) || names.get(target) !== target) {
      problems.push(`aliases.${alias}: no model with id '${target}'`);
      continue;
    }
    claim(alias, target, `aliases.${alias}`);
    const model = models.find((m) => m.id === target);
    if (model && !model.aliases.includes(alias)) model.aliases.push(alias);
  }
  return names;
}
