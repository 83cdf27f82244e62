/**
 * Named agents: `<name>:<version>` with the config their executions start from (prompt, schema, skills, tools,
 * tier, mode, model). Versions not given are derived from the config's content (`YYYYMMDD-<8 hex>`), so the same
 * definition twice is the same version. A name not given (the SDKs declare it optional) is made from the prompt's
 * first words (`receipt-total-date`), else `agent-<8 hex>`. When that made name is taken, the agent is a second
 * agent named `<made name>-<8 hex of its id>`, not a new version of the first: the caller chose neither name, and a
 * new version would change what the first caller's agent name resolves to (lookup by name takes the latest). A
 * name the caller gave stays 409 `agent_exists` when taken.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Principal } from '../domain/account';
import { BadRequestError, ConflictError, NotFoundError, SchemaInvalidError } from '../domain/errors';
import type { AgentRecord, ExecutionMode, ServiceTier } from '../domain/execution';
import { schemaProblem } from '../lib/json-schema';
import type { ToolRegistry } from '../agents/tool-registry';
import { checkToolsets } from '../agents/toolsets';
import type { AgentStore } from '../stores/types/execution';
import type { McpServersService } from './agent-mcp/mcp-servers.service';
import type { ArtifactsService } from './artifacts.service';
import { isRemoteToolOf } from './agent-mcp/remote-tools';
import { skillRefsOf, type SkillEntryWire } from './executions/execution-skills';

export interface CreateAgentCommand {
  /** `<name>` or `<name>:<version>`; null to have one made from the prompt. */
  name: string | null;
  version: string | null;
  description: string | null;
  prompt: string | null;
  jsonSchema: Record<string, unknown> | null;
  skills: SkillEntryWire[];
  tools: string[] | null;
  toolsets: string[] | null;
  /** Tools whose calls wait for a person's approval in this agent's runs (docs/agent-runs.md). */
  requireApproval: string[] | null;
  /** Registered remote MCP servers whose tools join this agent's runs (docs/agents.md). */
  mcpServers: string[] | null;
  serviceTier: ServiceTier;
  mode: ExecutionMode;
  model: string | null;
  inputs: Record<string, unknown> | null;
}

export type AgentLookup = { id: string } | { name: string } | { prompt: string };

export interface AgentsService {
  /** @throws ConflictError `agent_exists` when the organisation already has that name and version. */
  create(principal: Principal, command: CreateAgentCommand): Promise<AgentRecord>;
  /** @throws NotFoundError `agent_not_found`. */
  lookup(principal: Principal, by: AgentLookup): Promise<AgentRecord>;
  list(principal: Principal): Promise<AgentRecord[]>;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function createAgentsService(deps: {
  store: AgentStore;
  tools: ToolRegistry;
  artifacts: Pick<ArtifactsService, 'write'>;
  orgIdFor(principal: Principal): Promise<string>;
  /** Checks `config.mcp_servers` names registered servers. */
  mcpServers?: Pick<McpServersService, 'checkNames'>;
}): AgentsService {
  return {
    async create(principal, command) {
      const id = randomUUID();
      const [name = '', suffix] = (command.name ?? generatedName(command.prompt, id)).split(':');
      if (!NAME.test(name)) {
        throw new BadRequestError(
          `Agent name '${name}' must be letters, digits, '.', '_' or '-' (at most 128).`,
          null,
          'name',
        );
      }
      if (command.jsonSchema) {
        const problem = schemaProblem(command.jsonSchema);
        if (problem) throw new SchemaInvalidError('config.json_schema', problem);
      }
      deps.tools.select(command.tools);
      const mcpServers = command.mcpServers ?? [];
      if (command.requireApproval) {
        const local = command.requireApproval.filter((name) => !isRemoteToolOf(name, mcpServers));
        deps.tools.select(local, 'config.require_approval');
      }
      checkToolsets(command.toolsets);
      const orgId = await deps.orgIdFor(principal);
      if (mcpServers.length > 0) {
        if (!deps.mcpServers) throw new BadRequestError('This server has no remote MCP servers.', 'unknown_mcp_server');
        await deps.mcpServers.checkNames(orgId, mcpServers, 'config.mcp_servers');
      }
      const config = {
        prompt: command.prompt,
        jsonSchema: command.jsonSchema,
        skills: await skillRefsOf(deps.artifacts, principal, id, command.skills),
        tools: command.tools,
        toolsets: command.toolsets,
        serviceTier: command.serviceTier,
        mode: command.mode,
        model: command.model,
        // Only when asked: agents without approvals keep the content version they had before pauses existed.
        ...(command.requireApproval?.length ? { requireApproval: command.requireApproval } : {}),
        ...(mcpServers.length ? { mcpServers: [...new Set(mcpServers)] } : {}),
      };
      const now = new Date();
      const version = suffix || command.version || contentVersion(now, { ...config, skills: command.skills });
      const agent: AgentRecord = {
        id,
        orgId,
        name,
        version,
        description: command.description,
        config,
        inputs: command.inputs,
        createdAt: now,
      };
      if (await deps.store.insert(agent)) return agent;
      if (command.name !== null) {
        throw new ConflictError(`Agent '${name}:${version}' already exists.`, 'agent_exists');
      }
      // A name the caller never chose does not conflict: the same call again makes a second agent (see header).
      const distinct = { ...agent, name: `${name.slice(0, 119)}-${id.replace(/-/g, '').slice(0, 8)}` };
      if (!(await deps.store.insert(distinct))) {
        throw new ConflictError(`Agent '${distinct.name}:${version}' already exists.`, 'agent_exists');
      }
      return distinct;
    },

    async lookup(principal, by) {
      const orgId = await deps.orgIdFor(principal);
      let found: AgentRecord | null;
      if ('id' in by) found = await deps.store.get(orgId, by.id);
      else if ('name' in by) {
        const [name = '', version = null] = by.name.split(':');
        if (!name) throw new BadRequestError('The agent name is empty.', null, 'name');
        found = await deps.store.findByName(orgId, name, version || null);
      } else found = await deps.store.findByPrompt(orgId, by.prompt);
      if (!found) throw new NotFoundError('agent', 'id' in by ? by.id : 'name' in by ? by.name : 'prompt');
      return found;
    },

    async list(principal) {
      return deps.store.list(await deps.orgIdFor(principal));
    },
  };
}

/** Words of the prompt that say nothing of the task. */
const FILLER = new Set(['a', 'an', 'the', 'of', 'from', 'and', 'or', 'to', 'in', 'on', 'for', 'with', 'this', 'these']);

/** A name for an agent created without one: the prompt's first few telling words, else `agent-<8 hex of its id>`. */
export function generatedName(prompt: string | null, id: string): string {
  const words = (prompt ?? '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w && !FILLER.has(w))
    .slice(0, 5);
  const slug = words.join('-').slice(0, 60).replace(/-+$/, '');
  return NAME.test(slug) ? slug : `agent-${id.replace(/-/g, '').slice(0, 8)}`;
}

function contentVersion(now: Date, config: unknown): string {
  const day = now.toISOString().slice(0, 10).replaceAll('-', '');
  return `${day}-${createHash('sha256').update(JSON.stringify(config)).digest('hex').slice(0, 8)}`;
}
