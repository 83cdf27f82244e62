/**
 * The chat service's contract: what a call carries besides its body (ChatContext), what it answers (ChatOutcome),
 * what the service needs (ChatServiceDeps) and offers (ChatService). Its paths (local-completion.ts,
 * upstream-completion.ts) and their callers import it from here; chat.service.ts composes them.
 */
import type { Principal } from '../../domain/account';
import type { ExtractionEngine } from '../../engines/extraction-engine';
import type { CancelSignal } from '../../lib/cancel';
import type { Logger } from '../../lib/logger';
import type { RawJson } from '../../lib/raw-json';
import type { Biller } from '../../metering/billing';
import type { RequestQueue } from '../../metering/request-queue';
import type { AgentChat } from '../../services/chats/agent-chat';
import type { InputResolverDeps } from '../../services/inputs/resolve-input';
import type { ModelCatalogue } from '../catalogue/model-catalogue';
import type { UpstreamClient } from '../upstream/upstream-client';
import type { KeyModelCheck } from '../../services/admin/key-model-check';

export type Json = Record<string, unknown>;

export interface ChatContext {
  requestId: string;
  /** Aborts when the client disconnects. */
  signal: CancelSignal;
  /** Browser fingerprint header of guests (`X-Prism-Fingerprint`), for the guest spend cap. */
  fingerprint: string | null;
  /** The `X-Session-Id` header (agent models: the chat thread to continue). */
  sessionHeader?: string | null;
}

/**
 * A reply: a JSON body, or SSE chunks in non-empty batches (each batch leaves in one socket write), and headers to
 * send with it (agent models name their chat thread).
 */
export type ChatOutcome = (
  { stream: false; body: Json } | { stream: true; batches: AsyncIterable<ReadonlyArray<Json | RawJson>> }
) & {
  headers?: Record<string, string>;
};

export interface ChatServiceDeps {
  catalogue: ModelCatalogue;
  upstream: UpstreamClient;
  biller: Biller;
  queue: RequestQueue;
  extraction: ExtractionEngine;
  inputs: InputResolverDeps;
  logger: Logger;
  /** Runs the agent models' turns on the agent runtime; without it they answer like any local or upstream model. */
  agentChat?: AgentChat | null;
  /** @throws 403 `model_not_allowed` when the key may not call the model (keys with an allow-list, docs/admin.md). */
  checkKeyModel?: KeyModelCheck;
}

export interface ChatService {
  complete(principal: Principal, body: Json, context: ChatContext): Promise<ChatOutcome>;
}
