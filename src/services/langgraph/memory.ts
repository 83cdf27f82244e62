/**
 * Agents' long-term memory on the LangGraph store (docs/langgraph.md): the `remember` and `recall` tools write and
 * search items of the caller's organisation under one namespace, ranked by Prism's own embedding engine, so what an
 * agent kept is what a LangGraph client sees at `['prism', 'memories']` (and may edit), and the other way round.
 */
import type { Principal } from '../../domain/account';
import type { MemoryPort } from '../../agents/sdk';
import type { StoreItems } from './store-items';

/** Where agents' memories live in each organisation's store. */
export const MEMORY_NAMESPACE = ['prism', 'memories'];

export function createMemoryPorts(items: StoreItems, orgIdFor: (principal: Principal) => Promise<string>) {
  return (principal: Principal): MemoryPort => ({
    namespace: MEMORY_NAMESPACE,
    async remember(key, value) {
      await items.put(await orgIdFor(principal), { namespace: MEMORY_NAMESPACE, key, value });
    },
    async recall(query, limit) {
      const found = await items.search(
        await orgIdFor(principal),
        { namespace_prefix: MEMORY_NAMESPACE, query },
        { limit, offset: 0 },
      );
      return found.map((item) => ({
        key: item.key,
        value: item.value,
        score: item.score ?? 0,
        updatedAt: item.updated_at,
      }));
    },
  });
}
