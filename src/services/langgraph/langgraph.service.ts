/**
 * The LangGraph Platform API's service (docs/langgraph.md): assistants over Prism agents, threads with their
 * checkpoints, runs over Prism executions, crons that start runs on a schedule, and the long-term store, composed
 * over the existing services (not a second runtime). The HTTP adapter (src/http/routes/langgraph.routes.ts) parses and renders; this decides.
 */
import type { Principal } from '../../domain/account';
import type { Logger } from '../../lib/logger';
import type { AgentStore, LangGraphStore } from '../../stores/types';
import type { AgentsService } from '../agents.service';
import type { ExecutionsService } from '../executions/executions.types';
import { createAssistants } from './assistants';
import { createCrons } from './crons';
import { createRuns, type RunWebhook } from './runs';
import { createStoreItems, type TextEmbedder } from './store-items';
import { createThreads } from './threads';

export interface LangGraphServiceDeps {
  store: LangGraphStore;
  agents: AgentsService;
  agentStore: AgentStore;
  executions: ExecutionsService;
  /** Every tool's name (`interrupt_before: ['tools']` asks approval for each). */
  toolNames(): string[];
  /** Prism's text embedding engine for the store's semantic search; null: searches rank by recency only. */
  embed: TextEmbedder | null;
  orgIdFor(principal: Principal): Promise<string>;
  /** Delivers a run's webhook (the executions' signed, SSRF-checked sender); null: webhooks are refused. */
  deliverWebhook: ((hook: RunWebhook) => void) | null;
  allowPrivateWebhooks: boolean;
  /** The crons' clock (tests step it). */
  clock: () => Date;
  logger: Logger | null;
}

export function createLangGraphService(deps: LangGraphServiceDeps) {
  const threads = createThreads(deps.store);
  const assistants = createAssistants(deps);
  const runs = createRuns({ ...deps, threads, assistants });
  const items = createStoreItems(deps.store, deps.embed);
  const crons = createCrons({ ...deps, threads, runs, assistants });
  return { threads, assistants, runs, crons, items, orgIdFor: (principal: Principal) => deps.orgIdFor(principal) };
}

export type LangGraphService = ReturnType<typeof createLangGraphService>;
