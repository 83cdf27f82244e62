/**
 * An in-process mutex per key: work for one key runs one at a time, other keys run freely.
 * Used to order blob commits and deletes of the same content hash.
 */
export interface KeyedMutex {
  run<T>(key: string, work: () => Promise<T>): Promise<T>;
}

export function createKeyedMutex(): KeyedMutex {
  const tails = new Map<string, Promise<unknown>>();
  return {
    async run<T>(key: string, work: () => Promise<T>): Promise<T> {
      const previous = tails.get(key) ?? Promise.resolve();
      const current = previous.then(work, work);
      const tail = current.catch(() => undefined);
      tails.set(key, tail);
      try {
        return await current;
      } finally {
        if (tails.get(key) === tail) tails.delete(key);
      }
    },
  };
}
