/** Shared helpers for the embedding engine tests. */

export { failure } from '../../../helpers/app-error';

/** L2 norm. */
export function norm(vec: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < vec.length; i += 1) sum += (vec[i] as number) ** 2;
  return Math.sqrt(sum);
}
