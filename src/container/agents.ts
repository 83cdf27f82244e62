/**
 * The agent part of the composition root: the tool registry and the per-call ToolContext factory that binds the
 * SDK's ports to the services. The MCP server and the agent runtime take what this returns.
 */
import { createToolRegistry, type ToolRegistry } from '../agents/tool-registry';
import type { VisionPort } from '../agents/sdk';
import type { ArtifactsService } from '../services/artifacts.service';
import type { HubService } from '../services/hub/hub.service';
import type { InputResolverDeps } from '../services/predictions/inputs';
import { createToolContextFactory, type ToolContextFactory } from '../services/tool-context';
import { BUILTIN_TOOLS } from '../../tools';

export interface AgentsModule {
  /** Every tool; `config.tools` and MCP select from it by exact name. */
  tools: ToolRegistry;
  /** Builds the ToolContext of one call (principal, cancel signal, progress, execution or session scope). */
  toolContext: ToolContextFactory;
}

export interface AgentsModuleDeps {
  artifacts: ArtifactsService;
  hub: HubService;
  vision: VisionPort;
  inputs: InputResolverDeps;
}

export function createAgentsModule(deps: AgentsModuleDeps): AgentsModule {
  return {
    tools: createToolRegistry(BUILTIN_TOOLS),
    toolContext: createToolContextFactory(deps),
  };
}
