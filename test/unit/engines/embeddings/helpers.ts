/** Shared helpers for the embedding engine tests. */
import { AppError } from '../../../../src/domain/errors';

/** Resolves to the AppError a promise (or function) fails with. */
export async function failure(work: Promise<unknown> | (() => unknown)): Promise<AppError> {
  try {
    await (typeof work === 'function' ? work() : work);
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected an AppError');
}

/** L2 norm. */
export function norm(vec: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < vec.length; i += 1) sum += (vec[i] as number) ** 2;
  return Math.sqrt(sum);
}
