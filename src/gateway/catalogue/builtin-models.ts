/**
 * The models Prism serves with no configuration: the embedded, offline engines.
 *
 * Their prices are 0 USD per 1M tokens on purpose: they run on the operator's own hardware, so there is no
 * per-token cost to pass on (0 here means free, not unknown). Chat completions still bill the spec's minimum of
 * $0.001 per call. A models file can override any field of these, or mark one as not serving.
 */
import type { CatalogueModel } from './model.types';

/** 2026-05-19, the interface version date, so the listing's `created` is stable across restarts. */
const RELEASED = 1_779_148_800;

const FREE = { prompt: 0, completion: 0 };

/** Parameters every built-in chat model reads. */
const CHAT_PARAMETERS = ['max_tokens', 'max_completion_tokens', 'stream', 'stream_options', 'temperature', 'user'];

/** Parameters both built-in embedding models read. */
const EMBEDDING_PARAMETERS = [
  'encoding_format',
  'dimensions',
  'prompt_name',
  'document_pages',
  'document_max_pages',
  'truncate_prompt_tokens',
  'user',
];

export const BUILTIN_MODELS: readonly CatalogueModel[] = [
  {
    id: 'prism-1',
    aliases: [],
    mode: 'chat',
    engine: { kind: 'local', name: 'structured-extraction' },
    description: 'Structured extraction from one image, video or PDF: OCR, markdown, text or schema-guided fields.',
    ownedBy: 'prism',
    created: RELEASED,
    capabilities: {
      supportedInputTypes: ['text', 'image', 'document', 'video'],
      jsonSchema: true,
      maxImages: 1,
      maxMediaInputs: 1,
      methods: ['ocr', 'markdown', 'text', 'extract'],
      defaultMethod: 'extract',
      dimensions: [],
    },
    supportedParameters: [
      ...CHAT_PARAMETERS,
      'response_format',
      'reasoning_effort',
      'method',
      'method_params',
      'document_dpi',
      'video_fps',
      'video_max_frames',
    ],
    pricing: FREE,
    throughput: { tokensPerSecond: null, pagesPerMinute: null },
    ttftTimeoutS: 30,
    totalTimeoutS: 600,
    serving: true,
  },
  ...(['prism-orion-1', 'prism-orion-2'] as const).map((id): CatalogueModel => ({
    id,
    aliases: [],
    mode: 'chat',
    engine: { kind: 'local', name: 'deterministic-planner' },
    description:
      id === 'prism-orion-2'
        ? 'Agent model with program mode: replays a compiled skill program when one exists.'
        : 'Agent model: plans tool calls over the inputs with a deterministic local planner.',
    ownedBy: 'prism',
    created: RELEASED,
    capabilities: {
      supportedInputTypes: ['text', 'image', 'document'],
      jsonSchema: true,
      maxImages: null,
      maxMediaInputs: null,
      methods: [],
      defaultMethod: null,
      dimensions: [],
    },
    supportedParameters: [...CHAT_PARAMETERS, 'response_format', 'reasoning_effort', 'tools', 'tool_choice'],
    pricing: FREE,
    throughput: { tokensPerSecond: null, pagesPerMinute: null },
    // The spec gives two large models a 60 s first-token deadline; the agent models are ours.
    ttftTimeoutS: 60,
    totalTimeoutS: 600,
    serving: true,
  })),
  {
    id: 'prism-embed-text-1',
    aliases: [],
    mode: 'embedding',
    engine: { kind: 'local', name: 'word-vector-embeddings' },
    description: 'Text embeddings from bundled word vectors; Matryoshka truncation to 512, 256 or 128 values.',
    ownedBy: 'prism',
    created: RELEASED,
    capabilities: {
      supportedInputTypes: ['text', 'document'],
      jsonSchema: false,
      maxImages: 0,
      maxMediaInputs: null,
      methods: [],
      defaultMethod: null,
      dimensions: [768, 512, 256, 128],
    },
    supportedParameters: EMBEDDING_PARAMETERS,
    pricing: FREE,
    throughput: { tokensPerSecond: null, pagesPerMinute: null },
    ttftTimeoutS: 30,
    totalTimeoutS: 270,
    serving: true,
  },
  {
    id: 'prism-embed-mm-1',
    aliases: [],
    mode: 'embedding',
    engine: { kind: 'local', name: 'multimodal-embeddings' },
    description: 'Text, image and document embeddings in one 2048-value space.',
    ownedBy: 'prism',
    created: RELEASED,
    capabilities: {
      supportedInputTypes: ['text', 'image', 'document'],
      jsonSchema: false,
      maxImages: null,
      maxMediaInputs: null,
      methods: [],
      defaultMethod: null,
      dimensions: [2048, 1024],
    },
    supportedParameters: EMBEDDING_PARAMETERS,
    pricing: FREE,
    throughput: { tokensPerSecond: null, pagesPerMinute: null },
    ttftTimeoutS: 30,
    totalTimeoutS: 270,
    serving: true,
  },
];
