/**
 * The LangGraph Platform API at `/v1/langgraph` (docs/langgraph.md), so `new Client({ apiUrl: '<base>/langgraph' })`
 * from `@langchain/langgraph-sdk` drives Prism's agents: assistants, threads, runs (wait, background + join, stream,
 * join stream, cancel), crons, the long-term store. Parse, one service call, render; the LangGraph service decides.
 */
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import type { Principal } from '../../domain/account';
import type { Execution } from '../../domain/execution';
import type { LangGraphService } from '../../services/langgraph/langgraph.service';
import type { LgState } from '../../services/langgraph/langgraph-state';
import type { RunRequest, RunWire } from '../../services/langgraph/runs';
import { parseInput } from '../../wire/validation';
import { userOf } from '../request-context';

const record = z.record(z.string(), z.unknown());
const page = {
  limit: z.coerce.number().int().min(1).max(1000).default(10),
  offset: z.coerce.number().int().min(0).default(0),
};

const searchSchema = z.object({
  graph_id: z.string().max(200).nullish(),
  name: z.string().max(200).nullish(),
  metadata: record.nullish(),
  status: z.string().max(40).nullish(),
  ids: z.array(z.string().max(200)).max(1000).nullish(),
  ...page,
});

const assistantSchema = z.object({
  assistant_id: z.string().max(200).nullish(),
  graph_id: z.string().max(200).nullish(),
  name: z.string().max(200).nullish(),
  description: z.string().max(2000).nullish(),
  config: z.object({ configurable: record.optional() }).passthrough().nullish(),
  context: record.nullish(),
  metadata: record.nullish(),
  if_exists: z.string().max(40).nullish(),
});

const nodes = z.union([z.literal('*'), z.array(z.string().max(200)).max(100)]).nullish();
const runSchema = z
  .object({
    assistant_id: z.string().min(1).max(200),
    input: record.nullish(),
    command: z.object({ resume: z.unknown().optional() }).passthrough().nullish(),
    metadata: record.nullish(),
    config: z.object({ configurable: record.optional() }).passthrough().nullish(),
    checkpoint_id: z.string().max(200).nullish(),
    checkpoint: z
      .object({ checkpoint_id: z.string().max(200).nullish() })
      .passthrough()
      .nullish(),
    interrupt_before: nodes,
    interrupt_after: nodes,
    webhook: z.string().max(2000).nullish(),
    multitask_strategy: z.enum(['reject', 'interrupt', 'rollback', 'enqueue']).nullish(),
    if_not_exists: z.enum(['create', 'reject']).nullish(),
    stream_mode: z.union([z.string(), z.array(z.string())]).nullish(),
  })
  .passthrough();

const cronSchema = z.object({
  assistant_id: z.string().min(1).max(200).optional(),
  schedule: z.string().max(200).optional(),
  timezone: z.string().max(100).nullish(),
  end_time: z.string().max(64).nullish(),
  enabled: z.boolean().nullish(),
  on_run_completed: z.enum(['delete', 'keep']).nullish(),
  input: record.nullish(),
  metadata: record.nullish(),
  config: z.object({ configurable: record.optional() }).passthrough().nullish(),
  interrupt_before: nodes,
  interrupt_after: nodes,
  webhook: z.string().max(2000).nullish(),
  multitask_strategy: z.enum(['reject', 'interrupt', 'rollback', 'enqueue']).nullish(),
});
const cronCreateSchema = cronSchema.extend({
  assistant_id: z.string().min(1).max(200),
  schedule: z.string().min(1).max(200),
});
const cronSearchSchema = z.object({
  assistant_id: z.string().max(200).nullish(),
  thread_id: z.string().max(200).nullish(),
  enabled: z.boolean().nullish(),
  metadata: record.nullish(),
  sort_by: z.enum(['cron_id', 'assistant_id', 'thread_id', 'created_at', 'updated_at', 'next_run_date']).nullish(),
  sort_order: z.enum(['asc', 'desc']).nullish(),
  ...page,
});

const threadSchema = z.object({
  thread_id: z.string().max(200).nullish(),
  metadata: record.nullish(),
  if_exists: z.string().max(40).nullish(),
});

const HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};

const frame = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

function toRunRequest(body: z.output<typeof runSchema>): RunRequest {
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

const modesOf = (body: z.output<typeof runSchema>): Set<string> => {
  const m = body.stream_mode ?? ['values'];
  return new Set(Array.isArray(m) ? m : [m]);
};

export function langgraphRoutes(lg: LangGraphService): Router {
  const router = Router();
  const org = (req: Request): Promise<string> => lg.orgIdFor(userOf(req));
  const id = (req: Request, name: string): string => String(req.params[name] ?? '');
  const location = (res: Response, run: RunWire): void => {
    res.setHeader('Content-Location', `/threads/${run.thread_id}/runs/${run.run_id}`);
  };

  // Assistants
  router.post('/assistants', async (req, res) => {
    const body = parseInput(assistantSchema, req.body ?? {}, 'body');
    res.json(await lg.assistants.save(userOf(req), body, null));
  });
  router.post('/assistants/search', async (req, res) => {
    const q = parseInput(searchSchema, req.body ?? {}, 'body');
    res.json(await lg.assistants.search(userOf(req), q, q));
  });
  router.post('/assistants/count', async (req, res) => {
    const q = parseInput(searchSchema, req.body ?? {}, 'body');
    res.json((await lg.assistants.search(userOf(req), q, { limit: 100_000, offset: 0 })).length);
  });
  router.get('/assistants/:id', async (req, res) => {
    res.json(await lg.assistants.get(userOf(req), id(req, 'id')));
  });
  router.patch('/assistants/:id', async (req, res) => {
    const body = parseInput(assistantSchema, req.body ?? {}, 'body');
    const base = await lg.assistants.resolve(userOf(req), id(req, 'id'));
    res.json(await lg.assistants.save(userOf(req), body, base));
  });
  router.get('/assistants/:id/schemas', async (req, res) => {
    const a = await lg.assistants.get(userOf(req), id(req, 'id'));
    res.json(lg.assistants.schemas(a.assistant_id));
  });
  router.get('/assistants/:id/graph', async (req, res) => {
    await lg.assistants.get(userOf(req), id(req, 'id'));
    res.json({
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
    });
  });
  router.post('/assistants/:id/versions', async (req, res) => {
    res.json(await lg.assistants.versions(userOf(req), id(req, 'id')));
  });

  // Threads
  router.post('/threads', async (req, res) => {
    const body = parseInput(threadSchema, req.body ?? {}, 'body');
    res.json(await lg.threads.create(await org(req), body));
  });
  router.post('/threads/search', async (req, res) => {
    const q = parseInput(searchSchema, req.body ?? {}, 'body');
    res.json(await lg.threads.search(await org(req), q, q));
  });
  router.post('/threads/count', async (req, res) => {
    const q = parseInput(searchSchema, req.body ?? {}, 'body');
    res.json((await lg.threads.search(await org(req), q, { limit: 1_000_000, offset: 0 })).length);
  });
  router.get('/threads/:id', async (req, res) => {
    res.json(await lg.threads.get(await org(req), id(req, 'id')));
  });
  router.patch('/threads/:id', async (req, res) => {
    const body = parseInput(z.object({ metadata: record.default({}) }), req.body ?? {}, 'body');
    res.json(await lg.threads.patch(await org(req), id(req, 'id'), body.metadata));
  });
  router.delete('/threads/:id', async (req, res) => {
    await lg.threads.remove(await org(req), id(req, 'id'));
    res.status(204).end();
  });
  router.post('/threads/:id/copy', async (req, res) => {
    res.json(await lg.threads.copy(await org(req), id(req, 'id')));
  });
  router.get('/threads/:id/state', async (req, res) => {
    res.json(await lg.threads.state(await org(req), id(req, 'id')));
  });
  router.get('/threads/:id/state/:checkpoint', async (req, res) => {
    res.json(await lg.threads.state(await org(req), id(req, 'id'), id(req, 'checkpoint')));
  });
  router.post('/threads/:id/state/checkpoint', async (req, res) => {
    const body = parseInput(
      z.object({ checkpoint: z.object({ checkpoint_id: z.string().max(200).nullish() }).passthrough() }),
      req.body ?? {},
      'body',
    );
    res.json(await lg.threads.state(await org(req), id(req, 'id'), body.checkpoint.checkpoint_id ?? undefined));
  });
  router.post('/threads/:id/state', async (req, res) => {
    const body = parseInput(
      z.object({
        values: z.unknown().optional(),
        checkpoint_id: z.string().max(200).nullish(),
        checkpoint: z
          .object({ checkpoint_id: z.string().max(200).nullish() })
          .passthrough()
          .nullish(),
        as_node: z.string().max(200).nullish(),
      }),
      req.body ?? {},
      'body',
    );
    res.json(
      await lg.threads.update(await org(req), id(req, 'id'), {
        values: body.values,
        checkpoint_id: body.checkpoint_id ?? body.checkpoint?.checkpoint_id ?? null,
        as_node: body.as_node ?? null,
      }),
    );
  });
  const history = async (req: Request, res: Response, source: unknown): Promise<void> => {
    const q = parseInput(
      z.object({
        limit: z.coerce.number().int().min(1).max(1000).default(10),
        before: z
          .union([z.string().max(200), z.object({ checkpoint_id: z.string().max(200) }).passthrough()])
          .nullish(),
        metadata: record.nullish(),
      }),
      source ?? {},
      'body',
    );
    const before = typeof q.before === 'string' ? q.before : (q.before?.checkpoint_id ?? null);
    res.json(await lg.threads.history(await org(req), id(req, 'id'), { ...q, before }));
  };
  router.post('/threads/:id/history', (req, res) => history(req, res, req.body));
  router.get('/threads/:id/history', (req, res) => history(req, res, req.query));

  // Runs
  const waitRun = async (req: Request, res: Response, threadId: string | null): Promise<void> => {
    const body = parseInput(runSchema, req.body ?? {}, 'body');
    const principal = userOf(req);
    const started = await lg.runs.start(principal, threadId, toRunRequest(body));
    location(res, started.run);
    const run = await started.done;
    res.json(await outcomeOf(principal, run));
  };
  const outcomeOf = async (principal: Principal, run: RunWire): Promise<unknown> => {
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
  };
  router.post('/threads/:id/runs/wait', (req, res) => waitRun(req, res, id(req, 'id')));
  router.post('/runs/wait', (req, res) => waitRun(req, res, null));

  const createRun = async (req: Request, res: Response, threadId: string | null): Promise<void> => {
    const body = parseInput(runSchema, req.body ?? {}, 'body');
    const { run } = await lg.runs.start(userOf(req), threadId, toRunRequest(body));
    location(res, run);
    res.json(run);
  };
  router.post('/threads/:id/runs', (req, res) => createRun(req, res, id(req, 'id')));
  router.post('/runs', (req, res) => createRun(req, res, null));

  const streamRun = async (req: Request, res: Response, threadId: string | null): Promise<void> => {
    const body = parseInput(runSchema, req.body ?? {}, 'body');
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
    if (modes.has('updates') && run.status === 'success') {
      const state = await lg.threads.state(await org(req), run.thread_id);
      out.send('updates', { agent: { messages: state.values.messages.slice(-1) } });
    }
    if (run.status === 'error') {
      out.send('error', {
        error: 'RunError',
        message: typeof run.kwargs.error === 'string' ? run.kwargs.error : 'The run failed.',
      });
    }
    if (run.status === 'interrupted') {
      const state = await lg.threads.state(await org(req), run.thread_id);
      out.send('updates', { __interrupt__: state.tasks.flatMap((t) => (t.interrupts as unknown[]) ?? []) });
    }
    out.end();
  };
  router.post('/threads/:id/runs/stream', (req, res) => streamRun(req, res, id(req, 'id')));
  router.post('/runs/stream', (req, res) => streamRun(req, res, null));

  router.get('/threads/:id/runs', async (req, res) => {
    const q = parseInput(z.object({ ...page, status: z.string().max(40).nullish() }), req.query, 'query');
    res.json(await lg.runs.list(userOf(req), id(req, 'id'), q));
  });
  router.get('/threads/:id/runs/:run', async (req, res) => {
    res.json(await lg.runs.get(userOf(req), id(req, 'id'), id(req, 'run')));
  });
  router.delete('/threads/:id/runs/:run', async (req, res) => {
    await lg.runs.remove(userOf(req), id(req, 'id'), id(req, 'run'));
    res.status(204).end();
  });
  router.get('/threads/:id/runs/:run/join', async (req, res) => {
    const principal = userOf(req);
    res.json(await outcomeOf(principal, await lg.runs.join(principal, id(req, 'id'), id(req, 'run'))));
  });
  /** joinStream: the run's values now and when it ends (it may have ended already: then at once). */
  router.get('/threads/:id/runs/:run/stream', async (req, res) => {
    const principal = userOf(req);
    const run = await lg.runs.get(principal, id(req, 'id'), id(req, 'run'));
    const out = new SseOut(res);
    out.open({ run_id: run.run_id, thread_id: run.thread_id, attempt: 1 });
    const ended = await lg.runs.join(principal, run.thread_id, run.run_id);
    const outcome = await outcomeOf(principal, ended);
    if (ended.status === 'error') out.send('error', (outcome as { __error__: unknown }).__error__);
    else out.send('values', outcome);
    out.end();
  });
  router.post('/threads/:id/runs/:run/cancel', async (req, res) => {
    const action = req.query.action === 'rollback' ? 'rollback' : 'interrupt';
    await lg.runs.cancel(userOf(req), id(req, 'id'), id(req, 'run'), action);
    if (req.query.wait === '1' || req.query.wait === 'true') {
      await lg.runs.join(userOf(req), id(req, 'id'), id(req, 'run')).catch(() => undefined);
    }
    res.status(202).json({});
  });

  // Crons
  router.post('/runs/crons', async (req, res) => {
    const body = parseInput(cronCreateSchema, req.body ?? {}, 'body');
    res.json(await lg.crons.create(userOf(req), null, body));
  });
  router.post('/threads/:id/runs/crons', async (req, res) => {
    const body = parseInput(cronCreateSchema, req.body ?? {}, 'body');
    res.json(await lg.crons.create(userOf(req), id(req, 'id'), body));
  });
  router.post('/runs/crons/search', async (req, res) => {
    const q = parseInput(cronSearchSchema, req.body ?? {}, 'body');
    res.json(await lg.crons.search(userOf(req), q, q));
  });
  router.post('/runs/crons/count', async (req, res) => {
    const q = parseInput(cronSearchSchema, req.body ?? {}, 'body');
    res.json((await lg.crons.search(userOf(req), q, { limit: 1_000_000, offset: 0 })).length);
  });
  router.patch('/runs/crons/:cron', async (req, res) => {
    const body = parseInput(cronSchema, req.body ?? {}, 'body');
    res.json(await lg.crons.update(userOf(req), id(req, 'cron'), body));
  });
  router.delete('/runs/crons/:cron', async (req, res) => {
    await lg.crons.remove(userOf(req), id(req, 'cron'));
    res.status(204).end();
  });

  // Store
  router.put('/store/items', async (req, res) => {
    await lg.items.put(await org(req), (req.body ?? {}) as Record<string, unknown>);
    res.status(204).end();
  });
  router.get('/store/items', async (req, res) => {
    const q = parseInput(
      z.object({ namespace: z.string().max(4000).default(''), key: z.string().min(1).max(512) }),
      req.query,
      'query',
    );
    res.json(await lg.items.get(await org(req), q.namespace === '' ? [] : q.namespace.split('.'), q.key));
  });
  router.delete('/store/items', async (req, res) => {
    const body = (req.body ?? {}) as { namespace?: unknown; key?: unknown };
    await lg.items.delete(await org(req), body.namespace, body.key);
    res.status(204).end();
  });
  router.post('/store/items/search', async (req, res) => {
    const q = parseInput(
      z.object({
        namespace_prefix: z.array(z.string()).max(16).default([]),
        filter: record.nullish(),
        query: z.string().max(4000).nullish(),
        ...page,
      }),
      req.body ?? {},
      'body',
    );
    res.json({ items: await lg.items.search(await org(req), q, q) });
  });
  router.post('/store/namespaces', async (req, res) => {
    const q = parseInput(
      z.object({
        prefix: z.array(z.string()).max(16).nullish(),
        suffix: z.array(z.string()).max(16).nullish(),
        max_depth: z.number().int().min(1).max(16).nullish(),
        limit: z.coerce.number().int().min(1).max(1000).default(100),
        offset: z.coerce.number().int().min(0).default(0),
      }),
      req.body ?? {},
      'body',
    );
    res.json({ namespaces: await lg.items.namespaces(await org(req), q, q) });
  });

  return router;
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
