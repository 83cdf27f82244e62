/**
 * What the gateway knows about a model, as one record.
 *
 * The same record drives the model listing, the capability checks, the deadlines, routing to an engine or an
 * upstream server, and billing, so none of those can disagree about a model. Domain fields are camelCase; the YAML
 * file and the listing record are snake_case and are mapped at the edges.
 */
import type { ModelPricing } from '../../metering/billing';

/** Media a model can read, as published in `capabilities.supported_input_types`. */
export const INPUT_TYPES = ['text', 'image', 'video', 'audio', 'document'] as const;
export type InputType = (typeof INPUT_TYPES)[number];

/**
 * Which route family a model serves: chat completions (including structured and agent models), embeddings, or
 * audio transcriptions (speech to text, billed per audio minute).
 */
export const MODEL_MODES = ['chat', 'embedding', 'transcription'] as const;
export type ModelMode = (typeof MODEL_MODES)[number];

/** Where a model runs: an embedded engine by name, or a model on a named OpenAI-compatible upstream server. */
export type EngineRef = { kind: 'local'; name: string } | { kind: 'upstream'; upstream: string; model: string };

/** An OpenAI-compatible server (vLLM, llama.cpp, Ollama, OpenAI, another gateway). */
export interface UpstreamServer {
  name: string;
  /** Base URL including the version prefix, e.g. `http://127.0.0.1:8000/v1`; never ends in `/`. */
  baseUrl: string;
  /** Name of the environment variable holding the key (never the key itself); null for keyless servers. */
  apiKeyEnv: string | null;
  /** Label used in messages (`[vLLM] …`) and as `owned_by` of its models. */
  provider: string;
}

export interface ModelCapabilities {
  supportedInputTypes: InputType[];
  /** True when the engine can enforce `response_format: {type: 'json_schema'}` during generation. */
  jsonSchema: boolean;
  /** Most image parts per request; null = no limit. */
  maxImages: number | null;
  /** Most media parts (image, video, audio, document) per request; null = no limit. Structured models take 1. */
  maxMediaInputs: number | null;
  /** Structured-output methods (`ocr`, `markdown`, `text`, `extract`); empty for plain chat models. */
  methods: string[];
  defaultMethod: string | null;
  /** Embedding vector lengths the model can return (first = default); empty for chat models. */
  dimensions: number[];
}

/** Typical speed, for the listing; null = not measured. */
export interface ModelThroughput {
  tokensPerSecond: number | null;
  pagesPerMinute: number | null;
}

export interface CatalogueModel {
  id: string;
  aliases: string[];
  mode: ModelMode;
  engine: EngineRef;
  description: string;
  ownedBy: string;
  /** Unix seconds, for the listing's `created`. */
  created: number;
  capabilities: ModelCapabilities;
  /** Request parameters (beyond `model` and the messages/input) the model reads. */
  supportedParameters: string[];
  pricing: ModelPricing;
  throughput: ModelThroughput;
  /** Seconds to wait for the first streamed chunk. */
  ttftTimeoutS: number;
  /** Seconds the whole call may take. */
  totalTimeoutS: number;
  /** False: the deployment is down or cold; calls get 503 with `Retry-After`. */
  serving: boolean;
}

/** Everything the upstream client needs to call one model, with the key already looked up. */
export interface UpstreamTarget {
  provider: string;
  baseUrl: string;
  apiKey: string | null;
  /** The model name the upstream server knows (not our id). */
  model: string;
  ttftTimeoutMs: number;
  totalTimeoutMs: number;
}

/** The OpenAI-style record of GET /v1/compat/models (snake_case wire shape). */
export interface ModelListingRecord {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  capabilities: {
    supported_input_types: InputType[];
    json_schema: boolean;
    max_images: number | null;
    max_media_inputs: number | null;
    dimensions: number[];
  };
  supported_parameters: string[];
  methods: string[];
  default_method: string | null;
  throughput: { tokens_per_second: number | null; pages_per_minute: number | null };
  /** `per_minute` (USD per minute of audio) appears for models priced by audio time (transcription). */
  pricing: { prompt: number | null; completion: number | null; per_minute?: number | null };
  /** `chat`, `embedding` or `transcription`: which route the model serves. */
  mode: ModelMode;
}
