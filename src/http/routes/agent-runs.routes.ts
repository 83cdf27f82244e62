/**
 * Agent runs people can watch and steer (docs/agent-runs.md): the run-events stream of an execution
 * (`GET /v1/agent/executions/{id}/events`, also what `stream: true` on execute answers with), resuming a paused run
 * with a person's decision, and cancelling a run. Events are made from the stored record (src/wire/run-events.ts),
 * so `Last-Event-ID` works across reconnects, restarts and replicas. Org-scoped in the service.
 */
import { Router, type Response } from 'express';
import type { Principal } from '../../domain/account';
import type { Execution } from '../../domain/execution';
import type { ExecutionsService } from '../../services/executions/executions.types';
import {
  executionIdParamsSchema,
  resumeBodySchema,
  toExecutionWire,
  toResumeDecision,
} from '../../wire/agents.schemas';
import { deltaFrame, parseCursor, runEvents, sseFrame, type RunCursor } from '../../wire/run-events';
import { z } from 'zod';
import { declare, route } from '../api/route-declaration';
import { executionSchema } from '../api/response-schemas';
import { userOf } from '../request-context';

/** Where a reconnecting client resumes (the `Last-Event-ID` header says the same, and wins). */
const runEventsQuerySchema = z.object({ last_event_id: z.string().optional() });

const HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};

/**
 * The answer's text as the planner writes it, for the client that started the run with `stream: true`: held until
 * the stream's headers are out, then written as it comes (`execution.answer.delta`, no id: it is not stored).
 */
export interface LiveAnswer {
  onText(delta: string): void;
  /** The stream is open: what was held goes out, and the rest as it comes. */
  start(res: Response, executionId: string): void;
}

export function createLiveAnswer(): LiveAnswer {
  const held: string[] = [];
  let out: { res: Response; id: string } | null = null;
  const write = (delta: string): void => {
    if (!out || out.res.writableEnded || out.res.destroyed) return;
    out.res.write(deltaFrame(out.id, delta));
    sendNow(out.res);
  };
  return {
    onText(delta) {
      if (out) write(delta);
      else held.push(delta);
    },
    start(res, executionId) {
      out = { res, id: executionId };
      for (const delta of held.splice(0)) write(delta);
    },
  };
}

/**
 * Streams the events of execution `id` after `cursor` until the run ends or the client goes away. The first record
 * is read before the headers are sent, so an unknown id is an ordinary 404.
 */
export async function streamRunEvents(
  executions: ExecutionsService,
  principal: Principal,
  id: string,
  res: Response,
  cursor: RunCursor,
  live?: LiveAnswer,
): Promise<void> {
  const controller = new AbortController();
  const records = await executions.follow(principal, id, controller.signal);
  res.once('close', () => controller.abort());
  res.writeHead(200, HEADERS);
  res.flushHeaders();
  live?.start(res, id);
  let at = cursor;
  try {
    for await (const record of records) {
      const { events, cursor: next } = runEvents(record, at);
      at = next;
      // Nothing new (a poll): a comment keeps proxies from closing an idle stream.
      const text = events.length > 0 ? events.map(sseFrame).join('') : ': waiting\n\n';
      if (!res.writableEnded && !res.destroyed) {
        res.write(text);
        sendNow(res);
      }
      if (controller.signal.aborted) break;
    }
  } catch {
    // The store failed mid-stream: the client reconnects with its Last-Event-ID and misses nothing.
  } finally {
    controller.abort();
    if (!res.writableEnded && !res.destroyed) res.end();
  }
}

/**
 * Sends what was written now. Node's HTTP response corks its socket for a chunked write and uncorks it on the next
 * tick, which waits for the promise chain running: a run's own steps (LangGraph nodes and checkpoints settle as
 * promises) would hold an event back until the run next waits for the network, 15 ms and more on the bench.
 */
function sendNow(res: Response): void {
  const socket = res.socket;
  while (socket && socket.writableCorked > 0) socket.uncork();
}

const tag = 'Agents';

export const AGENT_RUN_ROUTES = {
  events: declare({
    method: 'get',
    path: '/agent/executions/:id/events',
    tag,
    summary: "An execution's run events (server-sent events; Last-Event-ID or `last_event_id` resumes)",
    auth: 'key',
    params: executionIdParamsSchema,
    query: runEventsQuerySchema,
    responses: {
      200: { description: 'The events, as they happen (docs/agent-runs.md)', contentType: 'text/event-stream' },
    },
    errors: [404],
  }),
  resume: declare({
    method: 'post',
    path: '/agent/executions/:id/resume',
    tag,
    summary: 'Resume a paused execution (approve, reject, edit, answer)',
    auth: 'key',
    params: executionIdParamsSchema,
    body: resumeBodySchema,
    responses: {
      200: {
        description: 'The execution',
        schema: executionSchema,
        alsoStreams: "With `stream: true`: the run's events from the pause on",
      },
    },
    errors: [404, 409],
  }),
  cancel: declare({
    method: 'post',
    path: '/agent/executions/:id/cancel',
    tag,
    summary: 'Cancel a paused or running execution',
    auth: 'key',
    params: executionIdParamsSchema,
    responses: { 200: { description: 'The execution', schema: executionSchema } },
    errors: [404, 409],
  }),
};

export function agentRunsRoutes(executions: ExecutionsService): Router {
  const router = Router();

  route(router, AGENT_RUN_ROUTES.events, async (req, res, input) => {
    const { id } = input.params();
    const lastEventId = req.get('last-event-id') ?? input.query().last_event_id;
    await streamRunEvents(executions, userOf(req), id, res, parseCursor(lastEventId));
  });

  route(router, AGENT_RUN_ROUTES.resume, async (req, res, input) => {
    const { id } = input.params();
    const body = input.body();
    const principal = userOf(req);
    const decision = toResumeDecision(body);
    if (body.stream) {
      const live = createLiveAnswer();
      const resumed: Execution = await executions.resume(principal, id, decision, {
        detach: true,
        onText: (delta) => live.onText(delta),
      });
      // The stream starts at the pause the client answered: what follows is the run going on again.
      const { cursor } = runEvents(resumed, parseCursor(undefined));
      await streamRunEvents(executions, principal, id, res, cursor, live);
      return;
    }
    res.json(toExecutionWire(await executions.resume(principal, id, decision)));
  });

  route(router, AGENT_RUN_ROUTES.cancel, async (req, res, input) => {
    const { id } = input.params();
    res.json(toExecutionWire(await executions.cancel(userOf(req), id)));
  });

  return router;
}
