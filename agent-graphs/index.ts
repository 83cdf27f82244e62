/**
 * Every built-in graph, by the role the runtime gives it. Adding a graph = one `*.graph.ts` file (importing only
 * src/agents/sdk) plus one line here; the composition root hands this list to the runtime (src/container/agents.ts).
 */
import type { AgentGraphs } from '../src/agents/sdk';
import { buildAgentLoopGraph } from './agent-loop.graph';

export const BUILTIN_GRAPHS: AgentGraphs = {
  /** plan -> tools -> plan ... -> finish, with a step limit, skill-graph sub-goals and checkpoints per execution. */
  agentLoop: buildAgentLoopGraph,
};
