/**
 * Store interfaces: what services may ask of persistence.
 *
 * Every method is async so a Postgres implementation can slot in beside SQLite; each method is atomic on its own.
 * Every read of tenant data takes the organisation id explicitly, so a missing scope is a type error, not a leak.
 *
 * One file per resource under types/; this barrel keeps `stores/types` the one import path.
 */
import type { FeedbackEntityType, FeedbackRecord } from '../../domain/feedback';
import type { StoredBytes } from '../../domain/file';

export type { FeedbackEntityType, FeedbackRecord, StoredBytes };
export type * from './account';
export type * from './wallet';
export type * from './file';
export type * from './prediction';
export type * from './feedback';
export type * from './skill';
export type * from './artifact';
export type * from './chat';
export type * from './evaluation';
export type * from './execution';
export type * from './oauth';
export type * from './mcp-server';
export type * from './langgraph';

import type { AccountStore } from './account';
import type { ArtifactStore } from './artifact';
import type { ChatStore } from './chat';
import type { EvaluationStore } from './evaluation';
import type { AgentStore, ExecutionStore, ProgramStore } from './execution';
import type { FeedbackStore } from './feedback';
import type { FileStore } from './file';
import type { OAuthStore } from './oauth';
import type { McpServerStore } from './mcp-server';
import type { LangGraphStore } from './langgraph';
import type { PredictionStore } from './prediction';
import type { SkillStore } from './skill';
import type { WalletStore } from './wallet';

/** Every record store, as one backend (SQLite or PostgreSQL) builds them. */
export interface Stores {
  accounts: AccountStore;
  wallets: WalletStore;
  files: FileStore;
  predictions: PredictionStore;
  feedback: FeedbackStore;
  artifacts: ArtifactStore;
  executions: ExecutionStore;
  agents: AgentStore;
  programs: ProgramStore;
  skills: SkillStore;
  chats: ChatStore;
  evaluations: EvaluationStore;
  oauth: OAuthStore;
  mcpServers: McpServerStore;
  langgraph: LangGraphStore;
}
