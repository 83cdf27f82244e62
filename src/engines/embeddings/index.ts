/**
 * The local embedding engines: what the composition root and the gateway import (one entry point, so the files
 * behind it can move).
 */
export {
  TOKEN_WINDOW,
  type EmbeddingBatch,
  type EmbeddingInput,
  type EmbeddingPart,
  type EmbedOptions,
  type PageSelector,
} from './embedding-input';
export { DEFAULT_DOCUMENT_MAX_PAGES, type PdfTextReader } from './document-pages';
export {
  createMultimodalEmbeddingEngine,
  MULTIMODAL_EMBEDDING_DIMENSIONS,
  type FrameSampler,
  type ImageTextReader,
  type MultimodalEmbeddingEngine,
  type MultimodalEmbeddingEngineOptions,
} from './multimodal-embedding.engine';
export { DEFAULT_PROMPT_NAME, PROMPT_NAMES, resolvePromptName, type PromptName } from './prompt-names';
export {
  createTextEmbeddingEngine,
  TEXT_EMBEDDING_DIMENSIONS,
  type TextEmbeddingEngine,
  type TextEmbeddingEngineOptions,
} from './text-embedding.engine';
export { countTokens } from './text-tokenizer';
export { cosine, fromBase64Float32, toBase64Float32 } from './vector-math';
export { loadWordVectors, sharedWordVectors, type WordVectors } from './word-vectors';
