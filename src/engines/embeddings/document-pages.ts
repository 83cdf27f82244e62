/**
 * Page texts of a document part for embedding: reads them with the injected PDF reader and applies
 * `document_pages` and `document_max_pages`. Shared by the text and multimodal engines.
 */
import { BadRequestError } from '../../domain/errors';
import { selectPages, type EmbedOptions } from './embedding-input';

/** Reads the text of each page of a PDF (e.g. the PDF engine's text layer, with OCR for scanned pages). */
export type PdfTextReader = (pdf: Buffer) => Promise<string[]>;

/** Default cap on pages one document may add to an input (`document_max_pages` may lower it). */
export const DEFAULT_DOCUMENT_MAX_PAGES = 100;

/** The selected pages' texts. @throws BadRequestError for a bad `document_max_pages` or `document_pages`. */
export async function documentPageTexts(
  reader: PdfTextReader,
  pdf: Buffer,
  options: EmbedOptions,
  maxPages: number,
): Promise<string[]> {
  const cap = options.documentMaxPages ?? maxPages;
  if (!Number.isInteger(cap) || cap < 1 || cap > maxPages) {
    throw new BadRequestError(
      `document_max_pages must be an integer from 1 to ${maxPages}`,
      null,
      'document_max_pages',
    );
  }
  return selectPages(await reader(pdf), options.documentPages, cap);
}
