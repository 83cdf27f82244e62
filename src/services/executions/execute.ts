/**
 * `execute`: accept an execution. Checks and normalises the request (callback URL, a named agent's config, schema,
 * tools, skills, model, inputs), checks the wallet and holds the run's budget, stores the record, then runs it now
 * or hands it to the job queue (`batch`).
 */
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../domain/account';
import { BadRequestError, NotFoundError, SchemaInvalidError } from '../../domain/errors';
import { emptyExecutionUsage, type Execution, type ExecutionRequest } from '../../domain/execution';
import { schemaProblem } from '../../lib/json-schema';
import { checkPublicUrl, SafeFetchError } from '../../lib/safe-fetch';
import { checkToolsets, selectRunTools } from '../../agents/toolsets';
import { isRemoteToolOf } from '../agent-mcp/remote-tools';
import { normaliseInputs } from './execution-inputs';
import type { StartExecution } from './execution-run';
import type { ExecutionRuns } from './execution-runs';
import { resolveSkills, skillRefsOf } from './execution-skills';
import { checkKeyModelOf } from '../admin/key-model-check';
import {
  DEFAULT_AGENT_MODEL,
  type ExecuteCommand,
  type ExecuteOptions,
  type ExecutionsServiceDeps,
} from './executions.types';

export type Execute = (principal: Principal, command: ExecuteCommand, options?: ExecuteOptions) => Promise<Execution>;

export function createExecute(deps: ExecutionsServiceDeps, runs: ExecutionRuns, start: StartExecution): Execute {
  const { store } = deps;
  const { holds, releaseHold } = runs;
  return async (principal, command, options = {}) => {
    // Refused at submission what the webhook sender would refuse at delivery, as the generate endpoints do.
    if (command.callbackUrl !== null) {
      try {
        await checkPublicUrl(command.callbackUrl, deps.allowPrivateCallbacks ?? false);
      } catch (error) {
        const reason = error instanceof SafeFetchError ? error.message : 'invalid URL';
        throw new BadRequestError(`callback_url refused: ${reason}.`, 'url_not_allowed', 'callback_url');
      }
    }
    const orgId = await deps.orgIdFor(principal);
    const id = randomUUID();
    let agentId: string | null = null;
    let config = command;
    let name = command.name ?? '';
    if (command.name) {
      const [agentName = '', version = null] = command.name.split(':');
      const agent = await deps.agents.findByName(orgId, agentName, version || null);
      if (!agent) throw new NotFoundError('agent', command.name);
      agentId = agent.id;
      name = `${agent.name}:${agent.version}`;
      config = {
        ...command,
        prompt: command.prompt ?? agent.config.prompt,
        jsonSchema: command.jsonSchema ?? agent.config.jsonSchema,
        tools: command.tools ?? agent.config.tools,
        toolsets: command.toolsets ?? agent.config.toolsets,
        model: command.model ?? agent.config.model,
        mode: command.mode ?? agent.config.mode,
        requireApproval: command.requireApproval ?? agent.config.requireApproval ?? null,
        mcpServers: command.mcpServers ?? agent.config.mcpServers ?? null,
      };
    }
    if (config.jsonSchema) {
      const problem = schemaProblem(config.jsonSchema);
      if (problem) throw new SchemaInvalidError('config.json_schema', problem);
    }
    selectRunTools(deps.tools, config.tools, config.toolsets);
    const mcpServers = config.mcpServers ?? [];
    if (mcpServers.length > 0) {
      if (!deps.mcpServers) throw new BadRequestError('This server has no remote MCP servers.', 'unknown_mcp_server');
      await deps.mcpServers.checkNames(orgId, mcpServers, 'config.mcp_servers');
    }
    // Approval is asked for tools Prism has (a typo would otherwise let the call through unasked); a remote tool
    // (`<server>__<tool>`) is named for a server of the run: its tools are known when the run reads the server.
    if (config.requireApproval) {
      const local = config.requireApproval.filter((name) => !isRemoteToolOf(name, mcpServers));
      selectRunTools(deps.tools, local, null, { tools: 'config.require_approval' });
    }
    const agentSkills =
      agentId && command.skills.length === 0
        ? ((await deps.agents.get(orgId, agentId))?.config.skills ?? [])
        : await skillRefsOf(deps.artifacts, principal, id, command.skills);
    const skills = await resolveSkills(deps.skills, deps.artifacts, principal, agentSkills);
    for (const skill of skills) checkToolsets(skill.config?.toolsets, 'config.skills');
    const model = config.model ?? skills.find((s) => s.config?.model)?.config?.model ?? DEFAULT_AGENT_MODEL;
    await checkKeyModelOf(deps.checkKeyModel, principal, model);
    const planner = deps.planners.resolve(model);
    await deps.billing.authorize(orgId);
    const request: ExecutionRequest = {
      model,
      prompt: config.prompt,
      jsonSchema: config.jsonSchema,
      skills: agentSkills,
      tools: config.tools,
      toolsets: config.toolsets,
      serviceTier: config.serviceTier,
      mode: config.mode ?? 'agent',
      inputs: await normaliseInputs(deps, principal, id, command.inputs),
      metadata: command.metadata,
      batch: command.batch,
      requireApproval: config.requireApproval ?? [],
      ...(mcpServers.length > 0 ? { mcpServers: [...new Set(mcpServers)] } : {}),
      clientId: command.clientId,
      clientCreatedAt: command.clientCreatedAt,
    };
    // The run's budget is held before it is stored or run, as a gateway call's is: concurrent runs at a small
    // wallet get 402 once the holds fill it, and the balance never goes below zero.
    holds.set(
      id,
      await deps.billing.reserve(
        orgId,
        {
          pricing: planner.pricing,
          multiplier: emptyExecutionUsage(config.serviceTier).mode_multiplier,
          maxSteps: deps.limits.maxSteps,
        },
        principal.kind === 'user' ? principal.keyId : null,
      ),
    );
    const inserted = store.insert({
      id,
      orgId,
      agentId,
      name: name || (config.prompt ?? '').slice(0, 80),
      model,
      status: command.batch ? 'enqueued' : 'pending',
      executionMode: 'agent',
      request,
      response: null,
      usage: emptyExecutionUsage(config.serviceTier),
      steps: [],
      errorMessage: null,
      callbackUrl: command.callbackUrl,
      sessionId: typeof command.metadata.session_id === 'string' ? command.metadata.session_id : null,
      attempts: 0,
      pause: null,
      createdAt: new Date(),
      completedAt: null,
    });
    inserted.catch(() => releaseHold(id));
    const execution = await inserted;
    if (command.batch) {
      deps.enqueue(execution.id);
      return execution;
    }
    if (options.detach) {
      void start(execution.id, false, options).catch((error: unknown) =>
        deps.logger.error('an execution failed to start', { execution: execution.id, error: String(error) }),
      );
      return execution;
    }
    return (await start(execution.id, false, options)) ?? execution;
  };
}
