/**
 * The LangGraph Platform API at `/v1/langgraph` (docs/langgraph.md), so `new Client({ apiUrl: '<base>/langgraph' })`
 * from `@langchain/langgraph-sdk` drives Prism's agents: assistants, threads, runs (wait, background + join, stream,
 * join stream, cancel), crons, the long-term store. Parse, one service call, render; the LangGraph service decides.
 * Each route is declared in langgraph.declarations.ts (its schemas, answers and errors), so /openapi.json lists it.
 */
import { Router, type Request, type Response } from 'express';
import type { z } from 'zod';
import type { Principal } from '../../domain/account';
import type { Execution } from '../../domain/execution';
import type { LangGraphService } from '../../services/langgraph/langgraph.service';
import type { LgState } from '../../services/langgraph/langgraph-state';
import type { RunRequest, RunWire } from '../../services/langgraph/runs';
import { route } from '../api/route-declaration';
import { userOf } from '../request-context';
import {
  LANGGRAPH_ASSISTANT_ROUTES as A,
  LANGGRAPH_CRON_ROUTES as C,
  LANGGRAPH_RUN_ROUTES as R,
  LANGGRAPH_STORE_ROUTES as S,
  LANGGRAPH_THREAD_ROUTES as T,
  type historyBodySchema,
  type runBodySchema,
} from './langgraph.declarations';

const HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};

const frame = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

function toRunRequest(body: z.output<typeof runBodySchema>): RunRequest {
  return {
    assistant_id: body.assistant_id,
    input: body.input ?? null,
    command: body.command ?? null,
    metadata: body.metadata ?? null,
    config: body.config ?? null,
    checkpoint_id: body.checkpoint_id ?? body.checkpoint?.checkpoint_id ?? null,
    interrupt_before: body.interrupt_before ?? null,
    interrupt_after: body.interrupt_after ?? null,
    webhook: body.webhook ?? null,
    multitask_strategy: body.multitask_strategy ?? null,
    if_not_exists: body.if_not_exists ?? null,
  };
}

const modesOf = (body: z.output<typeof runBodySchema>): Set<string> => {
  const m = body.stream_mode ?? ['values'];
  return new Set(Array.isArray(m) ? m : [m]);
};

export function langgraphRoutes(lg: LangGraphService): Router {
  const router = Router();
  assistantRoutes(router, lg);
  threadRoutes(router, lg);
  runRoutes(router, lg);
  runStreamRoutes(router, lg);
  cronRoutes(router, lg);
  storeRoutes(router, lg);
  return router;
}

const orgOf = (lg: LangGraphService, req: Request): Promise<string> => lg.orgIdFor(userOf(req));
const id = (req: Request, name: string): string => String(req.params[name] ?? '');
/** The SDK sends some calls with no body at all: they read as an empty object. */
const bodyOf = (req: Request): unknown => req.body ?? {};
const location = (res: Response, run: RunWire): void => {
  res.setHeader('Content-Location', `/threads/${run.thread_id}/runs/${run.run_id}`);
};

/** The graph every assistant has: the agent loop (the model, then tools, until it answers). */
const AGENT_GRAPH = {
  nodes: [
    { id: '__start__', type: 'schema', data: '__start__' },
    { id: 'agent', type: 'runnable', data: 'agent' },
    { id: 'tools', type: 'runnable', data: 'tools' },
    { id: '__end__', type: 'schema', data: '__end__' },
  ],
  edges: [
    { source: '__start__', target: 'agent' },
    { source: 'agent', target: 'tools', conditional: true },
    { source: 'tools', target: 'agent' },
    { source: 'agent', target: '__end__', conditional: true },
  ],
};

function assistantRoutes(router: Router, lg: LangGraphService): void {
  route(router, A.create, async (req, res, input) => {
    res.json(await lg.assistants.save(userOf(req), input.body(bodyOf(req)), null));
  });
  route(router, A.search, async (req, res, input) => {
    const q = input.body(bodyOf(req));
    res.json(await lg.assistants.search(userOf(req), q, q));
  });
  route(router, A.count, async (req, res, input) => {
    const q = input.body(bodyOf(req));
    res.json((await lg.assistants.search(userOf(req), q, { limit: 100_000, offset: 0 })).length);
  });
  route(router, A.get, async (req, res) => {
    res.json(await lg.assistants.get(userOf(req), id(req, 'id')));
  });
  route(router, A.update, async (req, res, input) => {
    const body = input.body(bodyOf(req));
    const base = await lg.assistants.resolve(userOf(req), id(req, 'id'));
    res.json(await lg.assistants.save(userOf(req), body, base));
  });
  route(router, A.schemas, async (req, res) => {
    const a = await lg.assistants.get(userOf(req), id(req, 'id'));
    res.json(lg.assistants.schemas(a.assistant_id));
  });
  route(router, A.graph, async (req, res) => {
    await lg.assistants.get(userOf(req), id(req, 'id'));
    res.json(AGENT_GRAPH);
  });
  route(router, A.versions, async (req, res) => {
    res.json(await lg.assistants.versions(userOf(req), id(req, 'id')));
  });
}

function threadRoutes(router: Router, lg: LangGraphService): void {
  route(router, T.create, async (req, res, input) => {
    const body = input.body(bodyOf(req));
    res.json(await lg.threads.create(await orgOf(lg, req), body));
  });
  route(router, T.search, async (req, res, input) => {
    const q = input.body(bodyOf(req));
    res.json(await lg.threads.search(await orgOf(lg, req), q, q));
  });
  route(router, T.count, async (req, res, input) => {
    const q = input.body(bodyOf(req));
    res.json((await lg.threads.search(await orgOf(lg, req), q, { limit: 1_000_000, offset: 0 })).length);
  });
  route(router, T.get, async (req, res) => {
    res.json(await lg.threads.get(await orgOf(lg, req), id(req, 'id')));
  });
  route(router, T.patch, async (req, res, input) => {
    const body = input.body(bodyOf(req));
    res.json(await lg.threads.patch(await orgOf(lg, req), id(req, 'id'), body.metadata));
  });
  route(router, T.remove, async (req, res) => {
    await lg.threads.remove(await orgOf(lg, req), id(req, 'id'));
    res.status(204).end();
  });
  route(router, T.copy, async (req, res) => {
    res.json(await lg.threads.copy(await orgOf(lg, req), id(req, 'id')));
  });
  route(router, T.state, async (req, res) => {
    res.json(await lg.threads.state(await orgOf(lg, req), id(req, 'id')));
  });
  route(router, T.stateAt, async (req, res) => {
    res.json(await lg.threads.state(await orgOf(lg, req), id(req, 'id'), id(req, 'checkpoint')));
  });
  route(router, T.stateAtBody, async (req, res, input) => {
    const body = input.body(bodyOf(req));
    res.json(await lg.threads.state(await orgOf(lg, req), id(req, 'id'), body.checkpoint.checkpoint_id ?? undefined));
  });
  route(router, T.update, async (req, res, input) => {
    const body = input.body(bodyOf(req));
    res.json(
      await lg.threads.update(await orgOf(lg, req), id(req, 'id'), {
        values: body.values,
        checkpoint_id: body.checkpoint_id ?? body.checkpoint?.checkpoint_id ?? null,
        as_node: body.as_node ?? null,
      }),
    );
  });
  const history = async (req: Request, res: Response, q: z.output<typeof historyBodySchema>): Promise<void> => {
    const before = typeof q.before === 'string' ? q.before : (q.before?.checkpoint_id ?? null);
    res.json(await lg.threads.history(await orgOf(lg, req), id(req, 'id'), { ...q, before }));
  };
  route(router, T.history, (req, res, input) => history(req, res, input.body(bodyOf(req))));
  route(router, T.historyByQuery, (req, res, input) => history(req, res, input.query()));
}

/** A finished run's answer to `wait` and `join`: the thread's values, with `__interrupt__` or as `__error__`. */
async function outcomeOf(lg: LangGraphService, principal: Principal, run: RunWire): Promise<unknown> {
  const state = await lg.threads.state(await lg.orgIdFor(principal), run.thread_id);
  if (run.status === 'error') {
    return {
      __error__: {
        error: 'RunError',
        message: typeof run.kwargs.error === 'string' ? run.kwargs.error : 'The run failed.',
      },
    };
  }
  if (run.status === 'interrupted' && state.tasks.length > 0) {
    return { ...state.values, __interrupt__: state.tasks.flatMap((t) => (t.interrupts as unknown[]) ?? []) };
  }
  return state.values;
}

function runRoutes(router: Router, lg: LangGraphService): void {
  const waitRun = async (req: Request, res: Response, threadId: string | null, body: RunBody): Promise<void> => {
    const principal = userOf(req);
    const started = await lg.runs.start(principal, threadId, toRunRequest(body));
    location(res, started.run);
    const run = await started.done;
    res.json(await outcomeOf(lg, principal, run));
  };
  route(router, R.waitOnThread, (req, res, input) => waitRun(req, res, id(req, 'id'), input.body(bodyOf(req))));
  route(router, R.wait, (req, res, input) => waitRun(req, res, null, input.body(bodyOf(req))));

  const createRun = async (req: Request, res: Response, threadId: string | null, body: RunBody): Promise<void> => {
    const { run } = await lg.runs.start(userOf(req), threadId, toRunRequest(body));
    location(res, run);
    res.json(run);
  };
  route(router, R.createOnThread, (req, res, input) => createRun(req, res, id(req, 'id'), input.body(bodyOf(req))));
  route(router, R.create, (req, res, input) => createRun(req, res, null, input.body(bodyOf(req))));

  route(router, R.list, async (req, res, input) => {
    res.json(await lg.runs.list(userOf(req), id(req, 'id'), input.query()));
  });
  route(router, R.get, async (req, res) => {
    res.json(await lg.runs.get(userOf(req), id(req, 'id'), id(req, 'run')));
  });
  route(router, R.remove, async (req, res) => {
    await lg.runs.remove(userOf(req), id(req, 'id'), id(req, 'run'));
    res.status(204).end();
  });
  route(router, R.join, async (req, res) => {
    const principal = userOf(req);
    res.json(await outcomeOf(lg, principal, await lg.runs.join(principal, id(req, 'id'), id(req, 'run'))));
  });
  route(router, R.cancel, async (req, res) => {
    // Read as sent: an unknown action is an interrupt, as the platform does.
    const action = req.query.action === 'rollback' ? 'rollback' : 'interrupt';
    await lg.runs.cancel(userOf(req), id(req, 'id'), id(req, 'run'), action);
    if (req.query.wait === '1' || req.query.wait === 'true') {
      await lg.runs.join(userOf(req), id(req, 'id'), id(req, 'run')).catch(() => undefined);
    }
    res.status(202).json({});
  });
}

type RunBody = z.output<typeof runBodySchema>;

/** Runs streamed as they go (`stream_mode`: values, messages, updates, events, custom), and a run joined as a stream. */
function runStreamRoutes(router: Router, lg: LangGraphService): void {
  const streamRun = async (req: Request, res: Response, threadId: string | null, body: RunBody): Promise<void> => {
    const modes = modesOf(body);
    const out = new SseOut(res);
    let seen = 0;
    const replyId = { value: '' };
    const started = await lg.runs.start(userOf(req), threadId, toRunRequest(body), {
      onValues: (values) => modes.has('values') && out.send('values', values),
      onText: (delta) => {
        if (modes.has('messages-tuple') || modes.has('messages')) {
          out.send('messages', [
            { type: 'AIMessageChunk', content: delta, id: replyId.value },
            { langgraph_node: 'agent', run_id: replyId.value.slice(4) },
          ]);
        }
        if (modes.has('custom')) out.send('custom', { delta });
      },
      onStep: (execution: Execution) => {
        for (const step of execution.steps.slice(seen)) {
          const node = step.kind === 'tool' ? 'tools' : 'agent';
          if (modes.has('updates')) out.send('updates', { [node]: { step: stepWire(step) } });
          if (modes.has('events')) {
            out.send('events', { event: `on_${step.kind}_end`, name: step.name, data: stepWire(step) });
          }
        }
        seen = execution.steps.length;
      },
    });
    replyId.value = `run-${started.run.run_id}`;
    location(res, started.run);
    out.open({ run_id: started.run.run_id, thread_id: started.run.thread_id, attempt: 1 });
    const run = await started.done;
    await sendRunEnd(lg, req, out, modes, run);
    out.end();
  };
  route(router, R.streamOnThread, (req, res, input) => streamRun(req, res, id(req, 'id'), input.body(bodyOf(req))));
  route(router, R.stream, (req, res, input) => streamRun(req, res, null, input.body(bodyOf(req))));

  /** joinStream: the run's values now and when it ends (it may have ended already: then at once). */
  route(router, R.joinStream, async (req, res) => {
    const principal = userOf(req);
    const run = await lg.runs.get(principal, id(req, 'id'), id(req, 'run'));
    const out = new SseOut(res);
    out.open({ run_id: run.run_id, thread_id: run.thread_id, attempt: 1 });
    const ended = await lg.runs.join(principal, run.thread_id, run.run_id);
    const outcome = await outcomeOf(lg, principal, ended);
    if (ended.status === 'error') out.send('error', (outcome as { __error__: unknown }).__error__);
    else out.send('values', outcome);
    out.end();
  });
}

/** A streamed run's last events: the final message (`updates`), the error, or the interrupt. */
async function sendRunEnd(lg: LangGraphService, req: Request, out: SseOut, modes: Set<string>, run: RunWire) {
  if (modes.has('updates') && run.status === 'success') {
    const state = await lg.threads.state(await orgOf(lg, req), run.thread_id);
    out.send('updates', { agent: { messages: state.values.messages.slice(-1) } });
  }
  if (run.status === 'error') {
    out.send('error', {
      error: 'RunError',
      message: typeof run.kwargs.error === 'string' ? run.kwargs.error : 'The run failed.',
    });
  }
  if (run.status === 'interrupted') {
    const state = await lg.threads.state(await orgOf(lg, req), run.thread_id);
    out.send('updates', { __interrupt__: state.tasks.flatMap((t) => (t.interrupts as unknown[]) ?? []) });
  }
}

function cronRoutes(router: Router, lg: LangGraphService): void {
  route(router, C.create, async (req, res, input) => {
    res.json(await lg.crons.create(userOf(req), null, input.body(bodyOf(req))));
  });
  route(router, C.createOnThread, async (req, res, input) => {
    res.json(await lg.crons.create(userOf(req), id(req, 'id'), input.body(bodyOf(req))));
  });
  route(router, C.search, async (req, res, input) => {
    const q = input.body(bodyOf(req));
    res.json(await lg.crons.search(userOf(req), q, q));
  });
  route(router, C.count, async (req, res, input) => {
    const q = input.body(bodyOf(req));
    res.json((await lg.crons.search(userOf(req), q, { limit: 1_000_000, offset: 0 })).length);
  });
  route(router, C.update, async (req, res, input) => {
    res.json(await lg.crons.update(userOf(req), id(req, 'cron'), input.body(bodyOf(req))));
  });
  route(router, C.remove, async (req, res) => {
    await lg.crons.remove(userOf(req), id(req, 'cron'));
    res.status(204).end();
  });
}

function storeRoutes(router: Router, lg: LangGraphService): void {
  // The store checks an item's fields itself (namespace, key, value, index, ttl) with the platform's messages.
  route(router, S.put, async (req, res) => {
    await lg.items.put(await orgOf(lg, req), (req.body ?? {}) as Record<string, unknown>);
    res.status(204).end();
  });
  route(router, S.get, async (req, res, input) => {
    const q = input.query();
    res.json(await lg.items.get(await orgOf(lg, req), q.namespace === '' ? [] : q.namespace.split('.'), q.key));
  });
  route(router, S.remove, async (req, res) => {
    const body = (req.body ?? {}) as { namespace?: unknown; key?: unknown };
    await lg.items.delete(await orgOf(lg, req), body.namespace, body.key);
    res.status(204).end();
  });
  route(router, S.search, async (req, res, input) => {
    const q = input.body(bodyOf(req));
    res.json({ items: await lg.items.search(await orgOf(lg, req), q, q) });
  });
  route(router, S.namespaces, async (req, res, input) => {
    const q = input.body(bodyOf(req));
    res.json({ namespaces: await lg.items.namespaces(await orgOf(lg, req), q, q) });
  });
}

function stepWire(step: Execution['steps'][number]): Record<string, unknown> {
  return {
    kind: step.kind,
    name: step.name,
    tool_call_id: step.toolCallId,
    arguments: step.arguments,
    error: step.error,
  };
}

/** One SSE response: events before the headers are out are held, then written in order. */
class SseOut {
  private held: string[] = [];
  private opened = false;
  constructor(private readonly res: Response) {}
  open(metadata: Record<string, unknown>): void {
    this.res.writeHead(200, HEADERS);
    this.res.flushHeaders();
    this.opened = true;
    this.write(frame('metadata', metadata));
    for (const text of this.held.splice(0)) this.write(text);
  }
  send(event: string, data: unknown): void {
    const text = frame(event, data);
    if (this.opened) this.write(text);
    else this.held.push(text);
  }
  end(): void {
    if (!this.res.writableEnded && !this.res.destroyed) this.res.end();
  }
  private write(text: string): void {
    if (this.res.writableEnded || this.res.destroyed) return;
    this.res.write(text);
    const socket = this.res.socket;
    while (socket && socket.writableCorked > 0) socket.uncork();
  }
}

export type { LgState };
