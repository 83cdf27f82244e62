/**
 * Agent routes: named agents (list, lookup, create) and executions (execute, list, get; `stream: true` answers with
 * the run's events, agent-runs.routes.ts). Org-scoped in the
 * services; each handler parses, calls one service, sends.
 */
import { Router } from 'express';
import type { AgentsService } from '../../services/agents.service';
import type { ExecutionsService } from '../../services/executions/executions.types';
import { userOf } from '../request-context';
import {
  agentSettingsOf,
  createAgentBodySchema,
  executeBodySchema,
  executionIdParamsSchema,
  listExecutionsQuerySchema,
  lookupAgentBodySchema,
  modelOf,
  modeOf,
  toAgentWire,
  toExecuteCommand,
  toExecutionWire,
} from '../../wire/agents.schemas';
import { START_CURSOR } from '../../wire/run-events';
import { fieldError } from '../../wire/validation';
import { EXECUTION_EXAMPLE } from '../api/examples';
import { declare, route } from '../api/route-declaration';
import { agentListSchema, agentSchema, executionListSchema, executionSchema } from '../api/response-schemas';
import { createLiveAnswer, streamRunEvents } from './agent-runs.routes';

const tag = 'Agents';

export const AGENT_ROUTES = {
  list: declare({
    method: 'get',
    path: '/agent',
    tag,
    summary: 'List agents',
    auth: 'key',
    responses: { 200: { description: 'Agents', schema: agentListSchema } },
  }),
  lookup: declare({
    method: 'post',
    path: '/agent/lookup',
    tag,
    summary: 'Find an agent by exactly one of id, name or prompt',
    auth: 'key',
    body: lookupAgentBodySchema,
    responses: { 200: { description: 'The agent', schema: agentSchema } },
    errors: [404],
  }),
  get: declare({
    method: 'get',
    path: '/agents/:id',
    tag,
    summary: 'One agent',
    auth: 'key',
    params: executionIdParamsSchema,
    responses: { 200: { description: 'The agent', schema: agentSchema } },
    errors: [404],
  }),
  create: declare({
    method: 'post',
    path: '/agent/create',
    tag,
    summary: 'Create an agent (a name given twice is a 409; without a name each create makes a new agent)',
    auth: 'key',
    body: createAgentBodySchema,
    responses: { 200: { description: 'The agent', schema: agentSchema } },
    errors: [400, 409],
  }),
  execute: declare({
    method: 'post',
    path: '/agent/execute',
    tag,
    summary: 'Run an agent (an execution)',
    auth: 'key',
    body: executeBodySchema,
    responses: {
      200: {
        description: 'The execution (poll GET /v1/agent/executions/{id} while it runs)',
        schema: executionSchema,
        example: EXECUTION_EXAMPLE,
        alsoStreams: "With `stream: true`: the run's events (docs/agent-runs.md)",
      },
    },
    errors: [400, 402, 403, 404, 502, 504],
  }),
  executions: declare({
    method: 'get',
    path: '/agent/executions',
    tag,
    summary: 'List executions',
    auth: 'key',
    query: listExecutionsQuerySchema,
    responses: { 200: { description: 'Executions, newest first', schema: executionListSchema } },
  }),
  execution: declare({
    method: 'get',
    path: '/agent/executions/:id',
    tag,
    summary: 'One execution',
    auth: 'key',
    params: executionIdParamsSchema,
    responses: { 200: { description: 'The execution', schema: executionSchema } },
    errors: [404],
  }),
};

export function agentsRoutes(agents: AgentsService, executions: ExecutionsService): Router {
  const router = Router();

  route(router, AGENT_ROUTES.list, async (req, res) => {
    res.json((await agents.list(userOf(req))).map(toAgentWire));
  });

  route(router, AGENT_ROUTES.lookup, async (req, res, input) => {
    const body = input.body();
    const given = (['id', 'name', 'prompt'] as const).filter((k) => body[k]);
    if (given.length !== 1) {
      throw fieldError('body', 'id', 'value_error', 'Send exactly one of id, name or prompt', req.body);
    }
    const key = given[0] as 'id' | 'name' | 'prompt';
    const value = body[key] as string;
    const by = key === 'id' ? { id: value } : key === 'name' ? { name: value } : { prompt: value };
    res.json(toAgentWire(await agents.lookup(userOf(req), by)));
  });

  route(router, AGENT_ROUTES.get, async (req, res, input) => {
    const { id } = input.params();
    res.json(toAgentWire(await agents.lookup(userOf(req), { id })));
  });

  route(router, AGENT_ROUTES.create, async (req, res, input) => {
    const body = input.body();
    const config = body.config ?? undefined;
    const agent = await agents.create(userOf(req), {
      name: body.name ?? null,
      version: body.version ?? null,
      description: body.description ?? null,
      ...agentSettingsOf(body),
      mode: modeOf(config),
      model: modelOf(body.model ?? config?.model),
      inputs: body.inputs ?? null,
    });
    res.json(toAgentWire(agent));
  });

  route(router, AGENT_ROUTES.execute, async (req, res, input) => {
    const body = input.body();
    if (body.stream) {
      // The run's events instead of its record (docs/agent-runs.md): accepted, then followed as it runs.
      const principal = userOf(req);
      const live = createLiveAnswer();
      const accepted = await executions.execute(principal, toExecuteCommand(body), {
        detach: true,
        onText: (delta) => live.onText(delta),
      });
      await streamRunEvents(executions, principal, accepted.id, res, START_CURSOR, live);
      return;
    }
    res.json(toExecutionWire(await executions.execute(userOf(req), toExecuteCommand(body))));
  });

  route(router, AGENT_ROUTES.executions, async (req, res, input) => {
    const page = input.query();
    res.json((await executions.list(userOf(req), page)).map(toExecutionWire));
  });

  route(router, AGENT_ROUTES.execution, async (req, res, input) => {
    const { id } = input.params();
    res.json(toExecutionWire(await executions.get(userOf(req), id)));
  });

  return router;
}
