/**
 * The model catalogue: built-in models plus the operator's models file, looked up by id or alias.
 *
 * Built once at start-up (invalid files fail fast, every problem named), then read-only. It answers the questions
 * every gateway route asks first: which model is this, is it serving, where does it run, what does the listing
 * say about it.
 */
import { BUILTIN_MODELS } from './builtin-models';
import { ModelNotFoundError, ModelNotServingError } from '../gateway-errors';
import { mergeModels } from './model-merge';
import { EMPTY_MODELS_FILE, ModelCatalogueError, readModelsFile, type ModelsFile } from './models-file';
import type { CatalogueModel, ModelListingRecord, ModelMode, UpstreamServer, UpstreamTarget } from './model.types';

export interface ModelCatalogue {
  /** Every model, built-ins first, in a stable order. */
  list(mode?: ModelMode): readonly CatalogueModel[];
  /** The model an id or alias names. @throws AppError 404 `model_not_found`. */
  resolve(idOrAlias: string): CatalogueModel;
  /** Like {@link resolve}, and the model must be serving. @throws 404 `model_not_found`, 503 `model_not_serving`. */
  resolveServing(idOrAlias: string): CatalogueModel;
  /** The model an id or alias names, or undefined. */
  find(idOrAlias: string): CatalogueModel | undefined;
  upstream(name: string): UpstreamServer | undefined;
  /** How to call an upstream model (key looked up, deadlines in ms); null for a local engine. */
  upstreamTarget(model: CatalogueModel): UpstreamTarget | null;
  /** The provider label for messages: the upstream's label, or `prism` for local engines. */
  provider(model: CatalogueModel): string;
}

export interface ModelCatalogueOptions {
  /** The parsed models file; omit for built-ins only. */
  file?: ModelsFile;
  /** Where upstream keys are looked up by variable name (the config's snapshot, never `process.env` directly). */
  env: Readonly<Record<string, string | undefined>>;
  /** Unix seconds used as `created` for file models that give none. */
  now?: number;
  /** Overrides the built-in set (tests). */
  builtins?: readonly CatalogueModel[];
  /** Names the source in error messages. */
  source?: string;
}

/**
 * Build the catalogue.
 * @throws ModelCatalogueError naming every problem (unknown upstream, alias collision, unset key variable, …).
 */
export function createModelCatalogue(options: ModelCatalogueOptions): ModelCatalogue {
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const merged = mergeModels(options.builtins ?? BUILTIN_MODELS, options.file ?? EMPTY_MODELS_FILE, options.env, now);
  if (merged.problems.length > 0) throw new ModelCatalogueError(merged.problems, options.source ?? 'models file');
  const byId = new Map(merged.models.map((m) => [m.id, m]));

  const find = (name: string): CatalogueModel | undefined => {
    const id = merged.names.get(name);
    return id === undefined ? undefined : byId.get(id);
  };
  const resolve = (name: string): CatalogueModel => {
    const model = find(name);
    if (!model) throw new ModelNotFoundError(name);
    return model;
  };
  const provider = (model: CatalogueModel): string =>
    model.engine.kind === 'upstream' ? (merged.upstreams.get(model.engine.upstream)?.provider ?? 'upstream') : 'prism';

  return {
    list: (mode) => (mode ? merged.models.filter((m) => m.mode === mode) : merged.models),
    resolve,
    resolveServing(name) {
      const model = resolve(name);
      if (!model.serving) throw new ModelNotServingError(model.id);
      return model;
    },
    find,
    upstream: (name) => merged.upstreams.get(name),
    upstreamTarget(model) {
      if (model.engine.kind !== 'upstream') return null;
      const server = merged.upstreams.get(model.engine.upstream);
      if (!server) return null;
      return {
        provider: server.provider,
        baseUrl: server.baseUrl,
        apiKey: merged.keys.get(server.name) ?? null,
        model: model.engine.model,
        ttftTimeoutMs: model.ttftTimeoutS * 1000,
        totalTimeoutMs: model.totalTimeoutS * 1000,
      };
    },
    provider,
  };
}

/**
 * Build the catalogue from a models file path (or built-ins only when `path` is undefined).
 * @throws ModelCatalogueError when the file cannot be read or is invalid.
 */
export function loadModelCatalogue(
  path: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): ModelCatalogue {
  if (path === undefined) return createModelCatalogue({ env });
  return createModelCatalogue({ file: readModelsFile(path), env, source: path });
}

/**
 * The first serving chat model of the models file that runs on an upstream, in the file's order: the model that
 * serves every part of Prism (agents, agent chat, evaluations, skill drafting) when none is named for it. With
 * `tools`, only a model that takes `tools` (its `supported_parameters`): an agent's planner calls tools, and a model
 * that cannot would answer every task without reading anything.
 */
export function firstServingUpstreamChatModel(
  catalogue: ModelCatalogue,
  need: { tools?: boolean } = {},
): CatalogueModel | undefined {
  return catalogue
    .list('chat')
    .find((m) => m.engine.kind === 'upstream' && m.serving && (!need.tools || m.supportedParameters.includes('tools')));
}

/** The OpenAI-style listing record (GET /v1/compat/models and /models/{model}). */
export function toListingRecord(model: CatalogueModel): ModelListingRecord {
  const c = model.capabilities;
  return {
    id: model.id,
    object: 'model',
    created: model.created,
    owned_by: model.ownedBy,
    capabilities: {
      supported_input_types: [...c.supportedInputTypes],
      json_schema: c.jsonSchema,
      max_images: c.maxImages,
      max_media_inputs: c.maxMediaInputs,
      dimensions: [...c.dimensions],
    },
    supported_parameters: [...model.supportedParameters],
    methods: [...c.methods],
    default_method: c.defaultMethod,
    throughput: {
      tokens_per_second: model.throughput.tokensPerSecond,
      pages_per_minute: model.throughput.pagesPerMinute,
    },
    pricing: {
      prompt: model.pricing.prompt,
      completion: model.pricing.completion,
      ...(model.mode === 'transcription' ? { per_minute: model.pricing.perMinute ?? null } : {}),
    },
    mode: model.mode,
  };
}
