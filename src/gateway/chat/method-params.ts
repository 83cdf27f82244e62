/**
 * `method_params` of a chat request to the embedded methods (`prism-1`): each method reads a known set of
 * parameters, and anything else is refused with 400 `capability_violation` naming it, so a parameter is never
 * silently ignored. Values of the wrong type are 422, like any other badly typed field.
 *
 * | method                   | reads                                                                           |
 * | ------------------------ | ------------------------------------------------------------------------------- |
 * | `ocr`, `markdown`, `text` | `page_indices` (PDF inputs: the 0-based pages to read)                         |
 * | `extract`                | `page_indices`, `confidence` and `grounding` (add `<field>_metadata` siblings) |
 */
import { CapabilityViolationError } from '../gateway-errors';
import { RequestValidationError, type ValidationIssue } from '../../domain/errors';

/** The parameters each local method reads, in the order the docs list them. */
export const METHOD_PARAMETERS: Readonly<Record<string, readonly string[]>> = {
  ocr: ['page_indices'],
  markdown: ['page_indices'],
  text: ['page_indices'],
  extract: ['page_indices', 'confidence', 'grounding'],
};

/** What a method was asked to do differently; the defaults when no `method_params` were sent. */
export interface MethodParams {
  pageIndices: number[] | null;
  confidence: boolean;
  grounding: boolean;
}

const DEFAULTS: MethodParams = { pageIndices: null, confidence: false, grounding: false };

/**
 * Reads `method_params` for `method` over an input of `inputFamily` (null when the request has no input).
 * @throws AppError 400 `capability_violation` for a parameter the method does not read (or that does not apply
 *   to the input); RequestValidationError 422 for a value of the wrong type.
 */
export function readMethodParams(method: string | null, raw: unknown, inputFamily: string | null): MethodParams {
  if (raw === undefined || raw === null) return DEFAULTS;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw invalid([], 'dict_type', 'Input should be a valid dictionary', raw);
  }
  const params = raw as Record<string, unknown>;
  const sent = Object.keys(params).filter((key) => params[key] !== undefined && params[key] !== null);
  if (sent.length === 0) return DEFAULTS;
  const reads = method === null ? [] : (METHOD_PARAMETERS[method] ?? []);
  for (const key of sent) {
    if (!reads.includes(key)) {
      const which = method === null ? 'this request runs no method' : `method '${method}' does not read it`;
      const known = reads.length > 0 ? `; it reads: ${reads.join(', ')}` : '';
      throw new CapabilityViolationError(
        `method_params.${key} is not supported: ${which}${known}`,
        `method_params.${key}`,
      );
    }
  }
  const result: MethodParams = { ...DEFAULTS };
  if (sent.includes('page_indices')) {
    const pages = params.page_indices;
    if (!Array.isArray(pages) || !pages.every((p) => Number.isInteger(p) && (p as number) >= 0)) {
      throw invalid(['page_indices'], 'list_type', 'Input should be a list of non-negative integers', pages);
    }
    if (inputFamily !== 'document') {
      throw new CapabilityViolationError(
        'method_params.page_indices applies to PDF inputs only',
        'method_params.page_indices',
      );
    }
    result.pageIndices = pages as number[];
  }
  for (const flag of ['confidence', 'grounding'] as const) {
    if (!sent.includes(flag)) continue;
    if (typeof params[flag] !== 'boolean') {
      throw invalid([flag], 'bool_type', 'Input should be a valid boolean', params[flag]);
    }
    result[flag] = params[flag];
  }
  return result;
}

function invalid(path: string[], type: string, msg: string, input: unknown): RequestValidationError {
  const issue: ValidationIssue = { type, loc: ['body', 'method_params', ...path], msg, input };
  return new RequestValidationError([issue]);
}
