/**
 * LangGraph assistants on Prism: an assistant is a Prism agent (every version of a name is a version of the
 * assistant, newest first), `graph_id` the agent loop it runs on (`agent`). Creating an assistant creates an agent;
 * updating it adds a version. The built-in assistant `agent` (the graph id) runs with no named agent.
 */
import type { Principal } from '../../domain/account';
import { NotFoundError } from '../../domain/errors';
import type { AgentRecord } from '../../domain/execution';
import type { AgentStore } from '../../stores/types';
import type { AgentsService } from '../agents.service';
import { matches } from './threads';

export const GRAPH_ID = 'agent';

export interface AssistantWire {
  assistant_id: string;
  graph_id: string;
  name: string;
  description: string | null;
  version: number;
  config: { configurable: Record<string, unknown> };
  context: Record<string, unknown>;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

const MESSAGES_SCHEMA = {
  type: 'object',
  properties: { messages: { type: 'array', items: { type: 'object' } } },
  required: ['messages'],
};

export function toAssistantWire(agent: AgentRecord | null, versions: AgentRecord[] = []): AssistantWire {
  if (!agent) {
    const at = new Date(0).toISOString();
    return {
      assistant_id: GRAPH_ID,
      graph_id: GRAPH_ID,
      name: GRAPH_ID,
      description: "Prism's agent loop with no named agent",
      version: 1,
      config: { configurable: {} },
      context: {},
      metadata: { created_by: 'system' },
      created_at: at,
      updated_at: at,
    };
  }
  const order = [...versions].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  return {
    assistant_id: agent.id,
    graph_id: GRAPH_ID,
    name: agent.name,
    description: agent.description,
    version: Math.max(1, order.findIndex((v) => v.id === agent.id) + 1),
    config: { configurable: { prism_agent: `${agent.name}:${agent.version}`, model: agent.config.model } },
    context: {},
    metadata: { prism_version: agent.version, ...(agent.inputs ?? {}) },
    created_at: agent.createdAt.toISOString(),
    updated_at: agent.createdAt.toISOString(),
  };
}

export function createAssistants(deps: {
  agents: AgentsService;
  agentStore: AgentStore;
  orgIdFor(principal: Principal): Promise<string>;
}) {
  const versionsOf = async (orgId: string, name: string): Promise<AgentRecord[]> =>
    (await deps.agentStore.list(orgId)).filter((a) => a.name === name);

  /** The agent behind an assistant id (null: the built-in `agent`); a name resolves to its newest version. */
  const resolve = async (principal: Principal, assistantId: string): Promise<AgentRecord | null> => {
    if (assistantId === GRAPH_ID) return null;
    const orgId = await deps.orgIdFor(principal);
    const agent =
      (await deps.agentStore.get(orgId, assistantId)) ?? (await deps.agentStore.findByName(orgId, assistantId, null));
    if (!agent) throw new NotFoundError('assistant', assistantId);
    return agent;
  };

  const wire = async (principal: Principal, agent: AgentRecord | null): Promise<AssistantWire> =>
    toAssistantWire(agent, agent ? await versionsOf(await deps.orgIdFor(principal), agent.name) : []);

  return {
    resolve,
    async get(principal: Principal, assistantId: string): Promise<AssistantWire> {
      return wire(principal, await resolve(principal, assistantId));
    },
    async search(
      principal: Principal,
      q: {
        graph_id?: string | null | undefined;
        name?: string | null | undefined;
        metadata?: Record<string, unknown> | null | undefined;
      },
      page: { limit: number; offset: number },
    ): Promise<AssistantWire[]> {
      const orgId = await deps.orgIdFor(principal);
      const all = await deps.agentStore.list(orgId);
      const newest = new Map<string, AgentRecord>();
      for (const a of all) {
        const seen = newest.get(a.name);
        if (!seen || seen.createdAt <= a.createdAt) newest.set(a.name, a);
      }
      const list = [
        toAssistantWire(null),
        ...[...newest.values()].map((a) =>
          toAssistantWire(
            a,
            all.filter((v) => v.name === a.name),
          ),
        ),
      ];
      return list
        .filter((a) => !q.graph_id || a.graph_id === q.graph_id)
        .filter((a) => !q.name || a.name.includes(q.name))
        .filter((a) => matches(a.metadata, q.metadata))
        .slice(page.offset, page.offset + page.limit);
    },
    async versions(principal: Principal, assistantId: string): Promise<AssistantWire[]> {
      const agent = await resolve(principal, assistantId);
      if (!agent) return [toAssistantWire(null)];
      const all = await versionsOf(await deps.orgIdFor(principal), agent.name);
      return all.map((v) => toAssistantWire(v, all)).sort((a, b) => b.version - a.version);
    },
    schemas(assistantId: string) {
      return {
        graph_id: GRAPH_ID,
        assistant_id: assistantId,
        input_schema: MESSAGES_SCHEMA,
        output_schema: MESSAGES_SCHEMA,
        state_schema: MESSAGES_SCHEMA,
        config_schema: { type: 'object', properties: { configurable: { type: 'object' } } },
        context_schema: { type: 'object' },
      };
    },
    /** Creates an agent (POST /assistants) or a new version of one (PATCH): its prompt from `context.prompt`. */
    async save(
      principal: Principal,
      body: {
        name?: string | null | undefined;
        description?: string | null | undefined;
        config?: { configurable?: Record<string, unknown> | undefined } | null | undefined;
        context?: Record<string, unknown> | null | undefined;
        metadata?: Record<string, unknown> | null | undefined;
      },
      base: AgentRecord | null,
    ): Promise<AssistantWire> {
      const settings = { ...(body.config?.configurable ?? {}), ...(body.context ?? {}) };
      const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
      const list = (v: unknown): string[] | null =>
        Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : null;
      const agent = await deps.agents.create(principal, {
        name: body.name ?? base?.name ?? null,
        version: `v${Date.now().toString(36)}`,
        description: body.description ?? base?.description ?? null,
        prompt: str(settings.prompt) ?? str(settings.system_prompt) ?? base?.config.prompt ?? null,
        jsonSchema: base?.config.jsonSchema ?? null,
        skills: [],
        tools: list(settings.tools) ?? base?.config.tools ?? null,
        toolsets: base?.config.toolsets ?? null,
        mcpServers: list(settings.mcp_servers) ?? base?.config.mcpServers ?? null,
        requireApproval: list(settings.require_approval) ?? base?.config.requireApproval ?? null,
        serviceTier: base?.config.serviceTier ?? 'standard',
        mode: base?.config.mode ?? 'agent',
        model: str(settings.model) ?? base?.config.model ?? null,
        inputs: { ...(base?.inputs ?? {}), ...(body.metadata ?? {}) },
      });
      return wire(principal, agent);
    },
  };
}

export type Assistants = ReturnType<typeof createAssistants>;
