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
import { fieldError, parseInput } from '../../wire/validation';
import { createLiveAnswer, streamRunEvents } from './agent-runs.routes';

export function agentsRoutes(agents: AgentsService, executions: ExecutionsService): Router {
  const router = Router();

  router.get('/agent', async (req, res) => {
    res.json((await agents.list(userOf(req))).map(toAgentWire));
  });

  router.post('/agent/lookup', async (req, res) => {
    const body = parseInput(lookupAgentBodySchema, req.body, 'body');
    const given = (['id', 'name', 'prompt'] as const).filter((k) => body[k]);
    if (given.length !== 1) {
      throw fieldError('body', 'id', 'value_error', 'Send exactly one of id, name or prompt', req.body);
    }
    const key = given[0] as 'id' | 'name' | 'prompt';
    const value = body[key] as string;
    const by = key === 'id' ? { id: value } : key === 'name' ? { name: value } : { prompt: value };
    res.json(toAgentWire(await agents.lookup(userOf(req), by)));
  });

  router.get('/agents/:id', async (req, res) => {
    const { id } = parseInput(executionIdParamsSchema, req.params, 'path');
    res.json(toAgentWire(await agents.lookup(userOf(req), { id })));
  });

  router.post('/agent/create', async (req, res) => {
    const body = parseInput(createAgentBodySchema, req.body, 'body');
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

  router.post('/agent/execute', async (req, res) => {
    const body = parseInput(executeBodySchema, req.body, 'body');
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

  router.get('/agent/executions', async (req, res) => {
    const page = parseInput(listExecutionsQuerySchema, req.query, 'query');
    res.json((await executions.list(userOf(req), page)).map(toExecutionWire));
  });

  router.get('/agent/executions/:id', async (req, res) => {
    const { id } = parseInput(executionIdParamsSchema, req.params, 'path');
    res.json(toExecutionWire(await executions.get(userOf(req), id)));
  });

  return router;
}
