/**
 * One full garbage collection between start-up and the first request, for long-running server processes.
 *
 * Why: start-up (config, migrations, model catalogue, word vectors, schemas) leaves tens of MB of garbage in V8's old
 * generation, and near its end V8 begins an incremental marking cycle to reclaim it. Measured on the gateway under
 * load (bench/gateway.bench.ts, `--trace-incremental-marking`), a cycle begun that way often never finishes once
 * requests arrive: it makes no more steps, stays "in progress" until the old generation reaches its hard limit
 * seconds or minutes later, and all that time each young collection keeps ~20× more of the in-flight calls alive
 * (~1 MB instead of ~50 KB), promotes them (~1.6 KB per call instead of ~30–60 B), and pauses 6–7 ms instead of
 * ~1.6 ms. About half of gateway processes started that way; one full collection after the burst of the first
 * calls always ended it. Collecting once here, while nothing waits, finishes that cycle before it can stall and
 * leaves the heap compact, so the next cycle starts under load, where it completes normally.
 *
 * `gc` is V8's own function; setting `--expose-gc` at run time exposes it in contexts created afterwards, so one
 * throwaway context provides it without a command-line flag.
 */
import v8 from 'node:v8';
import vm from 'node:vm';

/** Runs a full, compacting collection now (some tens of milliseconds); returns how long it took in ms. */
export function settleHeap(): number {
  v8.setFlagsFromString('--expose-gc');
  const collect = vm.runInNewContext('gc') as () => void;
  const started = performance.now();
  collect();
  return performance.now() - started;
}
