/**
 * What the embedding engines take and return, and the request rules both share: the token window, token-id checks,
 * `dimensions` checks and `document_pages` selection.
 *
 * The gateway fetches URLs and decodes data URLs; engines receive bytes. One {@link EmbeddingInput} becomes one
 * vector: a string, a list of token ids, or a list of parts (all parts of one input share one token window).
 */
import { BadRequestError } from '../../domain/errors';
import type { PromptName } from './prompt-names';

/** One content part of an input, with its media already fetched. */
export type EmbeddingPart =
  | { type: 'text'; text: string }
  | { type: 'image'; data: Buffer }
  | { type: 'video'; data: Buffer }
  | { type: 'document'; data: Buffer }
  | { type: 'audio'; data: Buffer };

/** One input: text, token ids, or parts pooled into one vector. */
export type EmbeddingInput = string | readonly number[] | readonly EmbeddingPart[];

/** A 0-based page index, or a `[start, stop)` range (stop exclusive, as in Python's `range`). */
export type PageSelector = number | readonly [number, number];

/** Request options the embedding engines read (snake_case request fields in camelCase). */
export interface EmbedOptions {
  /** Output length (must be one the engine lists); default: the engine's first. */
  dimensions?: number;
  /** `prompt_name`; default `Classification`. */
  promptName?: string | null;
  /** Keep only the first N tokens of an input instead of failing when it is over the window; -1 = the window. */
  truncatePromptTokens?: number | null;
  /** `document_pages`: which pages of each document part to embed (default all). */
  documentPages?: readonly PageSelector[] | null;
  /** `document_max_pages`: at most this many pages per document (default: the engine's cap). */
  documentMaxPages?: number | null;
}

/** The engine's answer for a batch: one unit vector per input, in input order. */
export interface EmbeddingBatch {
  vectors: Float32Array[];
  /** Tokens embedded (after truncation) over all inputs: `usage.prompt_tokens`. */
  promptTokens: number;
  dimensions: number;
  promptName: PromptName;
}

/** The token window of the local embedders (spec: all parts of one input share one 8,192-token window). */
export const TOKEN_WINDOW = 8192;

/** Resolves `truncate_prompt_tokens` to a token budget, or null when the input must fit the window as is. */
export function truncationBudget(value: number | null | undefined, window: number): number | null {
  if (value === undefined || value === null) return null;
  if (value === -1) return window;
  if (!Number.isInteger(value) || value < 1) {
    throw new BadRequestError(
      'truncate_prompt_tokens must be a positive integer (or -1 for the model window)',
      null,
      'truncate_prompt_tokens',
    );
  }
  return Math.min(value, window);
}

/** The 400 for an input over the window when no truncation was asked for. */
export function overWindow(index: number, tokens: number, window: number): BadRequestError {
  return new BadRequestError(
    `Input ${index} has ${tokens} tokens, over the model's window of ${window}; ` +
      'shorten it or set truncate_prompt_tokens',
    null,
    'input',
  );
}

/** Checks `dimensions` against the lengths an engine supports; absent → the first (default) one. */
export function resolveDimensions(value: number | undefined, supported: readonly number[]): number {
  if (value === undefined) return supported[0] as number;
  if (supported.includes(value)) return value;
  throw new BadRequestError(`dimensions must be one of ${supported.join(', ')}`, null, 'dimensions');
}

/** Checks a token-id input: non-negative safe integers. */
export function checkTokenIds(ids: readonly number[], index: number): void {
  for (const id of ids) {
    if (!Number.isSafeInteger(id) || id < 0) {
      throw new BadRequestError(`Input ${index}: token ids must be non-negative integers`, null, 'input');
    }
  }
}

/** Applies `document_pages` then `document_max_pages` to a document's pages. */
export function selectPages<T>(
  pages: readonly T[],
  selectors: readonly PageSelector[] | null | undefined,
  maxPages: number,
): T[] {
  let chosen: T[];
  if (!selectors || selectors.length === 0) {
    chosen = [...pages];
  } else {
    const indices: number[] = [];
    for (const selector of selectors) {
      const [start, stop] = typeof selector === 'number' ? [selector, selector + 1] : selector;
      if (!Number.isInteger(start) || !Number.isInteger(stop) || start < 0 || stop <= start) {
        throw new BadRequestError(
          'document_pages takes 0-based page indices or [start, stop] ranges with stop > start',
          null,
          'document_pages',
        );
      }
      if (start >= pages.length) {
        throw new BadRequestError(
          `document_pages asks for page ${start} but the document has ${pages.length} pages`,
          null,
          'document_pages',
        );
      }
      for (let i = start; i < Math.min(stop, pages.length); i += 1) if (!indices.includes(i)) indices.push(i);
    }
    chosen = indices.sort((a, b) => a - b).map((i) => pages[i] as T);
  }
  return chosen.slice(0, maxPages);
}

/** The 400 for a part type an engine cannot embed. */
export function unsupportedPart(engine: string, type: EmbeddingPart['type'], index: number): BadRequestError {
  const reason =
    type === 'audio'
      ? 'there is no offline speech-to-text, so audio cannot be embedded locally; use an upstream model'
      : `the ${engine} model does not accept ${type} parts`;
  return new BadRequestError(`Input ${index}: ${reason}`, 'capability_violation', 'input');
}
