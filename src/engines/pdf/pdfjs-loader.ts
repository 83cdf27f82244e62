/**
 * Loading pdfjs-dist and opening documents with it.
 *
 * pdfjs-dist 5 is ESM-only, so it is loaded once with a real dynamic `import()` (kept as-is by TypeScript's node16
 * CommonJS output). The legacy build is the one that runs on Node 20. The document options are the ones Node needs
 * to read every PDF offline: standard font data (else text renders in a wrong fallback font), packed CMaps (CJK
 * fonts), the wasm decoders (JBIG2 and JPEG 2000 scans), and no `eval`.
 *
 * The legacy build carries core-js polyfills that replace built-ins Node already has natively — `JSON.stringify`,
 * `JSON.parse`, `Array.prototype.push` — with slower script versions, for the whole process (every JSON response
 * got about 3x slower after the first PDF). The natives are captured when this module loads, before pdfjs can run,
 * and put back as soon as the import finishes; polyfills of methods Node lacks (`Promise.withResolvers`, …) stay.
 */
import path from 'node:path';
import type * as PdfjsModule from 'pdfjs-dist';
import type { PDFDocumentProxy } from 'pdfjs-dist';
import { BadRequestError } from '../../domain/errors';

type Pdfjs = typeof PdfjsModule;

let loading: Promise<Pdfjs> | null = null;

/** The native built-ins pdfjs's polyfills would replace. */
const NATIVES = {
  stringify: JSON.stringify,
  parse: JSON.parse,
  push: Array.prototype.push,
} as const;

/** Puts the native built-ins back where a polyfill replaced them. */
export function restoreNativeBuiltins(): void {
  if (JSON.stringify !== NATIVES.stringify) JSON.stringify = NATIVES.stringify;
  if (JSON.parse !== NATIVES.parse) JSON.parse = NATIVES.parse;
  if (Array.prototype.push !== NATIVES.push) {
    Object.defineProperty(Array.prototype, 'push', {
      value: NATIVES.push,
      writable: true,
      configurable: true,
      enumerable: false,
    });
  }
}

/** The pdfjs module, imported on first use and shared afterwards. */
export function loadPdfjs(): Promise<Pdfjs> {
  loading ??= (import('pdfjs-dist/legacy/build/pdf.mjs') as Promise<Pdfjs>).then(
    (pdfjs) => {
      restoreNativeBuiltins();
      return pdfjs;
    },
    (error: unknown) => {
      restoreNativeBuiltins();
      throw error;
    },
  );
  return loading;
}

/** Folder URLs of pdfjs's data files, resolved from the installed package (trailing slash required by pdfjs). */
export function pdfjsDataUrls(): { standardFontDataUrl: string; cMapUrl: string; wasmUrl: string } {
  const root = path.dirname(require.resolve('pdfjs-dist/package.json'));
  const dir = (name: string): string => `${path.join(root, name)}${path.sep}`;
  return { standardFontDataUrl: dir('standard_fonts'), cMapUrl: dir('cmaps'), wasmUrl: dir('wasm') };
}

/** The 400 every unreadable document becomes. */
export function invalidDocument(reason: string): BadRequestError {
  return new BadRequestError(`Invalid document: ${reason}`, 'invalid_document');
}

/** Opens a PDF from bytes (copied: pdfjs detaches the buffer it is given); throws `invalid_document`. */
export async function openPdf(bytes: Buffer): Promise<PDFDocumentProxy> {
  if (bytes.length === 0) throw invalidDocument('the file is empty');
  const pdfjs = await loadPdfjs();
  const task = pdfjs.getDocument({
    data: new Uint8Array(bytes),
    ...pdfjsDataUrls(),
    cMapPacked: true,
    isEvalSupported: false,
    verbosity: pdfjs.VerbosityLevel.ERRORS,
  });
  try {
    // The first document loads pdfjs's worker module (in-process on Node), which brings its own polyfills.
    const doc = await task.promise.finally(restoreNativeBuiltins);
    if (doc.numPages < 1) {
      await doc.destroy();
      throw invalidDocument('the PDF has no pages');
    }
    return doc;
  } catch (error) {
    await task.destroy().catch(() => undefined);
    if (error instanceof BadRequestError) throw error;
    const name = error instanceof Error ? error.name : '';
    if (name === 'PasswordException') throw invalidDocument('the PDF is protected by a password');
    throw invalidDocument('the file is not a readable PDF');
  }
}
