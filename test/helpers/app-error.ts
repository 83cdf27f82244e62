/** The AppError a piece of work fails with, for tests that assert on status, code and message. */
import { AppError } from '../../src/domain/errors';

/**
 * Resolves to the AppError `work` (a promise, or a function returning one or throwing) fails with.
 * @throws when the work succeeds or fails with anything else, so the calling test fails.
 */
export async function failure(work: Promise<unknown> | (() => unknown)): Promise<AppError> {
  try {
    await (typeof work === 'function' ? work() : work);
  } catch (error) {
    if (error instanceof AppError) return error;
    throw new Error(`expected an AppError, got ${String(error)}`, { cause: error });
  }
  throw new Error('expected an AppError, but the work succeeded');
}
