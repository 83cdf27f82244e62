/**
 * LangChain's run context without a fresh LangSmith run tree for every runnable when nothing traces.
 *
 * @langchain/core runs every runnable of a LangGraph superstep (each node, its writers, the node's sequence) inside
 * `AsyncLocalStorageProviderSingleton.runWithConfig`, which keeps the runnable's config where `getConfig()` and
 * `interrupt()` find it. With no callbacks in the config it stores a `new RunTree({ tracingEnabled: false })` for
 * that: a LangSmith run that is never sent, yet whose constructor reads the environment, formats a timestamp and
 * draws a UUIDv7 from the CSPRNG. Profiling the agent loop (`node --cpu-prof`, bench `agents`, loop overhead) put
 * about a sixth of the runtime's own CPU per step there, several trees per superstep.
 *
 * `installUntracedRunContext` wraps `runWithConfig` once per process: when the config has no callbacks (the only case
 * where core builds that throwaway tree: a tracer is reached through the callbacks' parent run) the store is a copy
 * of one such untraced tree made once, with the same fields, its own `extra` (the config) and its own child list,
 * instead of a new one. Its id and start time are the first tree's: nothing reads them while tracing is off, since
 * an untraced tree never posts and its children are untraced too. Any other call (callbacks present, a caller that
 * asks for no root tree) goes to core's own `runWithConfig` unchanged, so LangSmith tracing, when someone turns it on
 * with callbacks, behaves as before. Prism traces with OpenTelemetry (src/lib/tracing.ts), not LangSmith.
 */
import { AsyncLocalStorageProviderSingleton, _CONTEXT_VARIABLES_KEY } from '@langchain/core/singletons';

const LC_CHILD_KEY = Symbol.for('lc:child_config');
const INSTALLED = Symbol.for('prism:untraced-run-context');

type RunWithConfig = typeof AsyncLocalStorageProviderSingleton.runWithConfig;
type Store = Record<string | symbol, unknown>;

export function installUntracedRunContext(): void {
  const provider = AsyncLocalStorageProviderSingleton as typeof AsyncLocalStorageProviderSingleton & {
    [INSTALLED]?: true;
  };
  if (provider[INSTALLED]) return;
  provider[INSTALLED] = true;
  const original: RunWithConfig = provider.runWithConfig.bind(provider);
  /** The fields of an untraced run tree core made (the first fast-path call) and its prototype, copied for later ones. */
  let template: { fields: Store; proto: object } | null = null;

  provider.runWithConfig = function runWithConfig(config, callback, avoidCreatingRootRunTree) {
    if (avoidCreatingRootRunTree || (config as { callbacks?: unknown } | undefined)?.callbacks !== undefined) {
      return original(config, callback, avoidCreatingRootRunTree);
    }
    const storage = provider.getInstance();
    if (template === null) {
      // Core builds the tree this time; its fields are kept (before the callback can change them) for later ones.
      return original(config, () => {
        const made = storage.getStore() as Store | undefined;
        if (made && typeof made === 'object' && 'tracingEnabled' in made) template = templateOf(made);
        return callback();
      });
    }
    // An object literal given the tree's prototype keeps V8's fast properties (Object.create + assign does not).
    const tree = Object.setPrototypeOf(
      {
        ...template.fields,
        child_runs: [],
        inputs: {},
        extra: { ...(template.fields['extra'] as Store), [LC_CHILD_KEY]: config as unknown },
      },
      template.proto,
    ) as Store;
    const previous = storage.getStore() as Store | undefined;
    if (previous !== undefined && previous[_CONTEXT_VARIABLES_KEY] !== undefined) {
      tree[_CONTEXT_VARIABLES_KEY] = previous[_CONTEXT_VARIABLES_KEY];
    }
    return storage.run(tree, callback);
  } as RunWithConfig;
}

/**
 * The first tree core made, without what that call put in it (its config in `extra`, the context variables it
 * inherited: both under symbol keys, which Object.entries leaves out).
 */
function templateOf(tree: Store): { fields: Store; proto: object } {
  const fields: Store = Object.fromEntries(Object.entries(tree));
  fields['extra'] = Object.fromEntries(Object.entries(tree['extra'] as object));
  return { fields, proto: Object.getPrototypeOf(tree) as object };
}
