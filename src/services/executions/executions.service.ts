/**
 * Agent executions: the execute endpoint's one service. It checks and normalises the request (model, schema,
 * tools, skills, inputs), checks the wallet, stores the record, and runs it now or through the job queue
 * (`batch`). A run goes through program mode (second-generation model, `mode: program`, a verified program for the
 * skill version) or the agent runtime's LangGraph loop; the record ends `completed` or `failed` with usage and cost
 * (debited from the wallet), the callback is signed and sent, and a schema-valid skill run of the
 * second-generation model is compiled into a program. A restart resumes runs from their checkpoints or fails them
 * with a message; none is left `running`.
 *
 * Composed here from its use cases: execute.ts (accept), execution-run.ts (run one), execution-resume.ts (after a
 * restart), execution-lease.ts (runs whose replica died), over the run state they share (execution-runs.ts); the
 * contract is executions.types.ts.
 */
import { NotFoundError } from '../../domain/errors';
import { createExecute } from './execute';
import { createExecutionFollow } from './execution-follow';
import { CANCEL_CHANNEL, createExecutionPauses } from './execution-pauses';
import { createExecutionLease } from './execution-lease';
import { createExecutionResume } from './execution-resume';
import { createExecutionStarter } from './execution-run';
import { createExecutionRuns } from './execution-runs';
import type { ExecutionsService, ExecutionsServiceDeps } from './executions.types';

/** How long a cancel's answer waits for a running run to end (it ends anyway; the answer then says `running`). */
const CANCEL_WAIT_MS = 10_000;

export function createExecutionsService(deps: ExecutionsServiceDeps): ExecutionsService {
  const { store } = deps;
  const runs = createExecutionRuns();
  const start = createExecutionStarter(deps, runs);
  const pauses = createExecutionPauses(deps, runs, start);
  const follow = createExecutionFollow(deps);
  // A cancel sent to another replica reaches the run where it goes on (the bus lives as long as the process).
  deps.signals?.subscribe(CANCEL_CHANNEL, (id) => void pauses.cancelHere(id));
  return {
    execute: createExecute(deps, runs, start),

    async list(principal, page) {
      return store.list(await deps.orgIdFor(principal), page);
    },

    async get(principal, id) {
      const found = await store.get(await deps.orgIdFor(principal), id);
      if (!found) throw new NotFoundError('execution', id);
      return found;
    },

    ...createExecutionResume(deps, runs, start),
    resume: pauses.resume,
    async cancel(principal, id) {
      // A run going on (here or on another replica) is told to stop; the answer waits a little for it to end.
      const asked = await pauses.cancel(principal, id);
      if (asked.status !== 'running') return asked;
      let last = asked;
      for await (const record of await follow(principal, id, AbortSignal.timeout(CANCEL_WAIT_MS))) last = record;
      return last;
    },
    expirePaused: pauses.expirePaused,
    follow,
    ...createExecutionLease(deps, runs),

    cancelAll() {
      runs.shuttingDown = true;
      for (const controller of runs.running.values()) controller.abort();
    },
  };
}
