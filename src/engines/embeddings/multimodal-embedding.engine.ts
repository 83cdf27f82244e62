/**
 * The built-in multimodal embedding model: text, images, video and PDFs in one 2048-value space, offline.
 *
 * Honest summary: this is NOT a semantic image model like CLIP — there is no such network on npm. Images are
 * embedded by what can be read in them plus what they look like:
 *   dims    0–767   text region: the 768-value vector of the local text embedder (text-embedding.engine.ts), filled from text
 *                   parts, the OCR text of images and video frames, and the pages of PDFs
 *   dims  768–2047  pixel region: colour histogram, edge density, gradient orientations and a grey thumbnail
 *                   (pixel-features.ts); images and frames only
 * The text region is the same space as the text model's vectors, so a screenshot, a photographed sign or a slide is
 * close to the typed words it shows. A photo without readable text has an empty text region and is only close to
 * images that look alike (colour, layout, edges), never to a text describing it.
 *
 * How parts pool within one input: text segments (text parts, OCR text, PDF pages) go through the text embedder
 * (mean of segment vectors, one shared token window); pixel features are averaged over images, video frames
 * pooled first. The two regions are then weighted: `textShare` (default 0.6) of the squared norm goes to text when
 * the input has typed text or document text; for OCR-only text it scales with the amount read (a single stray word
 * counts little), and the result is L2-normalised. Video = frames from the injected sampler, pixels averaged, a few
 * frames OCR'd. `usage` counts text tokens only (typed, OCR'd and document text).
 */
import { BadRequestError } from '../../domain/errors';
import type { LayoutPage } from '../types';
import { DEFAULT_DOCUMENT_MAX_PAGES, documentPageTexts, type PdfTextReader } from './document-pages';
import {
  resolveDimensions,
  TOKEN_WINDOW,
  truncationBudget,
  unsupportedPart,
  type EmbeddingBatch,
  type EmbeddingInput,
  type EmbeddingPart,
  type EmbedOptions,
} from './embedding-input';
import { pixelFeatures, PIXEL_FEATURE_LENGTH } from './pixel-features';
import { promptProfile, resolvePromptName } from './prompt-names';
import { createTextEmbeddingEngine, emptyInput, type TextEmbeddingEngine } from './text-embedding.engine';
import { TEXT_VECTOR_LENGTH } from './text-vectorizer';
import { meanPool, normalizeInPlace, truncateAndNormalize } from './vector-math';

/** Output lengths; the first is the default. 1024 keeps the text region plus the compact pixel blocks. */
export const MULTIMODAL_EMBEDDING_DIMENSIONS = [2048, 1024] as const;
const LENGTH = TEXT_VECTOR_LENGTH + PIXEL_FEATURE_LENGTH;

/** Reads the text in an image (e.g. the OCR engine). Receives the caller's image bytes (any format sharp reads). */
export interface ImageTextReader {
  recognize(image: Buffer): Promise<LayoutPage>;
}

/** Samples frames of a video as encoded images (e.g. PNGs from the video engine). */
export type FrameSampler = (video: Buffer) => Promise<Buffer[]>;

export interface MultimodalEmbeddingEngineOptions {
  /** Text embedder for the text region (default: a new one on the shared word vectors). */
  text?: TextEmbeddingEngine;
  /** OCR for images and frames. Without it images embed pixels only (and are never close to text). */
  ocr?: ImageTextReader;
  /** Enables `video` parts. */
  sampleFrames?: FrameSampler;
  /** Enables `document` parts. */
  pdfText?: PdfTextReader;
  /** Part of the squared norm given to the text region when an input has both text and pixels (default 0.6). */
  textShare?: number;
  /** Frames of one video used for pixels (default 16, evenly spread over what the sampler returns). */
  maxFrames?: number;
  /** Frames of one video that are OCR'd (default 4, evenly spread). */
  ocrFrames?: number;
  /** OCR words below this confidence are ignored (default 0.5). */
  minWordConfidence?: number;
  /** Token window per input (default 8,192). */
  window?: number;
  /** Largest `document_max_pages` accepted and the default (default 100). */
  maxDocumentPages?: number;
}

/** The local multimodal embedder. */
export interface MultimodalEmbeddingEngine {
  readonly name: 'multimodal-embeddings';
  readonly dimensions: readonly number[];
  readonly window: number;
  /**
   * One unit vector per input.
   * @throws BadRequestError as the text engine does, `invalid_media` for undecodable images or videos without
   *   frames, and `capability_violation` for audio (or video/documents when no sampler/reader was injected).
   */
  embed(inputs: readonly EmbeddingInput[], options?: EmbedOptions): Promise<EmbeddingBatch>;
}

/** OCR words read from an input, kept apart from typed text (their weight depends on how much was read). */
interface Gathered {
  typed: string[];
  ocr: string[];
  ocrWords: number;
  pixels: Float32Array[];
}

/** OCR words that count as "a full text" for the text/pixel weighting (fewer scale the text share down). */
const OCR_FULL_WORDS = 3;

/** `count` indices spread evenly over `0..length-1`. */
function spread(length: number, count: number): number[] {
  if (length <= count) return Array.from({ length }, (_, i) => i);
  return Array.from({ length: count }, (_, i) => Math.floor(((i + 0.5) * length) / count));
}

/** Builds the multimodal embedder around a text embedder and the injected readers. */
export function createMultimodalEmbeddingEngine(
  options: MultimodalEmbeddingEngineOptions = {},
): MultimodalEmbeddingEngine {
  const window = options.window ?? TOKEN_WINDOW;
  const text = options.text ?? createTextEmbeddingEngine({ window });
  const textShare = options.textShare ?? 0.6;
  const maxFrames = options.maxFrames ?? 16;
  const ocrFrames = options.ocrFrames ?? 4;
  const minConfidence = options.minWordConfidence ?? 0.5;
  const maxPages = options.maxDocumentPages ?? DEFAULT_DOCUMENT_MAX_PAGES;
  if (!(textShare > 0 && textShare < 1)) throw new Error('textShare must be between 0 and 1');

  const readText = async (image: Buffer): Promise<{ text: string; words: number }> => {
    if (!options.ocr) return { text: '', words: 0 };
    const page = await options.ocr.recognize(image);
    if (page.status !== 'ok') return { text: '', words: 0 };
    const lines = page.lines
      .map((line) => line.words.filter((w) => w.confidence >= minConfidence).map((w) => w.text))
      .filter((words) => words.length > 0);
    return { text: lines.map((words) => words.join(' ')).join('\n'), words: lines.flat().length };
  };

  const addImage = async (image: Buffer, into: Gathered): Promise<void> => {
    const [pixels, read] = await Promise.all([pixelFeatures(image), readText(image)]);
    into.pixels.push(pixels);
    if (read.words > 0) {
      into.ocr.push(read.text);
      into.ocrWords += read.words;
    }
  };

  const addVideo = async (video: Buffer, index: number, into: Gathered): Promise<void> => {
    if (!options.sampleFrames) throw unsupportedPart('multimodal embedding', 'video', index);
    const frames = await options.sampleFrames(video);
    if (frames.length === 0) throw new BadRequestError(`Input ${index}: the video has no frames`, 'invalid_media');
    const used = spread(frames.length, maxFrames).map((i) => frames[i] as Buffer);
    const pixels = await Promise.all(used.map(pixelFeatures));
    into.pixels.push(meanPool(pixels, PIXEL_FEATURE_LENGTH));
    const texts = await Promise.all(spread(used.length, ocrFrames).map((i) => readText(used[i] as Buffer)));
    const seen = new Set<string>();
    for (const read of texts) {
      if (read.words === 0 || seen.has(read.text)) continue;
      seen.add(read.text);
      into.ocr.push(read.text);
      into.ocrWords += read.words;
    }
  };

  const gather = async (input: EmbeddingInput, index: number, opts: EmbedOptions): Promise<Gathered> => {
    const into: Gathered = { typed: [], ocr: [], ocrWords: 0, pixels: [] };
    if (typeof input === 'string') {
      into.typed.push(input);
      return into;
    }
    if (input.length === 0 || typeof input[0] === 'number') {
      throw new BadRequestError(
        `Input ${index}: token ids are only accepted by the text embedding model`,
        'capability_violation',
        'input',
      );
    }
    for (const part of input as readonly EmbeddingPart[]) {
      switch (part.type) {
        case 'text':
          into.typed.push(part.text);
          break;
        case 'image':
          await addImage(part.data, into);
          break;
        case 'video':
          await addVideo(part.data, index, into);
          break;
        case 'document':
          if (!options.pdfText) throw unsupportedPart('multimodal embedding', 'document', index);
          into.typed.push(...(await documentPageTexts(options.pdfText, part.data, opts, maxPages)));
          break;
        case 'audio':
          throw unsupportedPart('multimodal embedding', 'audio', index);
      }
    }
    return into;
  };

  return {
    name: 'multimodal-embeddings',
    dimensions: MULTIMODAL_EMBEDDING_DIMENSIONS,
    window,
    async embed(inputs, opts = {}) {
      const promptName = resolvePromptName(opts.promptName);
      const profile = promptProfile(promptName);
      const dimensions = resolveDimensions(opts.dimensions, MULTIMODAL_EMBEDDING_DIMENSIONS);
      const budget = truncationBudget(opts.truncatePromptTokens, window);
      let promptTokens = 0;
      const vectors: Float32Array[] = [];
      for (const [index, input] of inputs.entries()) {
        const got = await gather(input, index, opts);
        const textPart = text.embedSegments([...got.typed, ...got.ocr], profile, { index, window, budget });
        promptTokens += textPart.tokens;
        const pixels = got.pixels.length > 0 ? meanPool(got.pixels, PIXEL_FEATURE_LENGTH) : null;
        if (!textPart.vector && !pixels) throw emptyInput(index);
        const hasTyped = got.typed.some((t) => t.trim().length > 0);
        const share = hasTyped ? textShare : textShare * Math.min(1, got.ocrWords / OCR_FULL_WORDS);
        const out = new Float32Array(LENGTH);
        if (textPart.vector) {
          const w = pixels ? Math.sqrt(share) : 1;
          for (let i = 0; i < TEXT_VECTOR_LENGTH; i += 1) out[i] = (textPart.vector[i] as number) * w;
        }
        if (pixels) {
          const w = textPart.vector ? Math.sqrt(1 - share) : 1;
          for (let i = 0; i < PIXEL_FEATURE_LENGTH; i += 1) out[TEXT_VECTOR_LENGTH + i] = (pixels[i] as number) * w;
        }
        normalizeInPlace(out);
        vectors.push(dimensions === LENGTH ? out : truncateAndNormalize(out, dimensions));
      }
      return { vectors, promptTokens, dimensions, promptName };
    },
  };
}
