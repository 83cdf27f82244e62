/**
 * The untraced run context stores what core's own `runWithConfig` stores: an untraced run tree (same prototype and
 * fields) carrying the runnable's config where LangGraph's `getConfig()` finds it, context variables passed down,
 * and a tree of its own per call; calls with callbacks still go to core unchanged.
 */
import { AsyncLocalStorageProviderSingleton as provider } from '@langchain/core/singletons';
import { Annotation, getConfig, StateGraph, START, END } from '@langchain/langgraph';
import { installUntracedRunContext } from '../../../src/agents/untraced-run-context';

type Store = Record<string | symbol, unknown>;
const LC_CHILD_KEY = Symbol.for('lc:child_config');

describe('untraced run context', () => {
  const original = provider.runWithConfig.bind(provider);
  // A graph first, so LangGraph has set up the async local storage the provider runs in.
  const State = Annotation.Root({ seen: Annotation<string>() });
  const graph = new StateGraph(State)
    .addNode('read', () => ({ seen: String(getConfig()?.configurable?.['marker']) }))
    .addEdge(START, 'read')
    .addEdge('read', END)
    .compile();

  it('stores an untraced tree like core’s, with the config getConfig() reads', async () => {
    const storage = provider.getInstance();
    const core = original({ tags: ['a'] }, () => storage.getStore() as Store);
    installUntracedRunContext();
    installUntracedRunContext();
    provider.runWithConfig({ tags: ['warm'] }, () => undefined);
    const config = { tags: ['b'] };
    const first = provider.runWithConfig(config, () => storage.getStore() as Store);
    const second = provider.runWithConfig(config, () => storage.getStore() as Store);
    expect(Object.getPrototypeOf(first)).toBe(Object.getPrototypeOf(core));
    expect(Object.keys(first).sort()).toEqual(Object.keys(core).sort());
    expect(first['tracingEnabled']).toBe(false);
    expect(first['name']).toBe(core['name']);
    expect((first['extra'] as Store)[LC_CHILD_KEY]).toBe(config);
    expect(first['child_runs']).not.toBe(second['child_runs']);
    expect(first['extra']).not.toBe(second['extra']);
    expect(provider.runWithConfig(config, () => provider.getRunnableConfig() as unknown)).toBe(config);
    expect(await graph.invoke({ seen: '' }, { configurable: { marker: 'here' } })).toEqual({ seen: 'here' });
  });

  it('passes context variables down and leaves calls with callbacks to core', () => {
    installUntracedRunContext();
    const storage = provider.getInstance();
    const vars = Symbol.for('lc:context_variables');
    const inner = storage.run({ [vars]: { x: 1 } }, () =>
      provider.runWithConfig({}, () => storage.getStore() as Store),
    );
    expect(inner[vars]).toEqual({ x: 1 });
    const withCallbacks = provider.runWithConfig({ callbacks: [] }, () => storage.getStore() as Store);
    expect(withCallbacks['tracingEnabled']).toBe(false);
    expect(provider.runWithConfig({}, () => 1, true)).toBe(1);
  });
});
