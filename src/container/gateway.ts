/**
 * The gateway part of the composition root: rate limits, the guest spend cap and billing, and the chat,
 * embeddings and decision services on the model catalogue and the upstream client. The embedders and the decision
 * engine read documents and images through the extraction part's engines.
 *
 * Nothing here holds a resource of its own (limits and queues are in memory), so it has no closers yet.
 */
import type { Config } from '../config/config';
import { createDecisionEngine } from '../engines/decision/decision.engine';
import { createMultimodalEmbeddingEngine, createTextEmbeddingEngine } from '../engines/embeddings';
import { createBiller, type Biller } from '../metering/billing';
import type { ModelCatalogue } from '../gateway/catalogue/model-catalogue';
import { createChatService, type ChatService } from '../gateway/chat/chat.service';
import { createDecisionsService, type DecisionsService } from '../gateway/decisions/decisions.service';
import { createEmbeddingsService, type EmbeddingsService } from '../gateway/embeddings/embeddings.service';
import { createGuestSpendGuard } from '../metering/guest-spend';
import { createMemoryGuestSpendStore, createMemoryRateLimitStore } from '../metering/memory-stores';
import { createRateLimiter, type RateLimiter } from '../metering/rate-limiter';
import type { RateWindow } from '../metering/ports';
import { createRequestQueue, type RequestQueue } from '../metering/request-queue';
import type { UpstreamClient } from '../gateway/upstream/upstream-client';
import type { CloseStep } from '../lib/close-all';
import type { Logger } from '../lib/logger';
import type { AgentChat } from '../services/chats/agent-chat';
import type { InputResolverDeps } from '../services/inputs/resolve-input';
import type { DraftingModel } from '../services/skills/skill-authoring';
import type { WalletStore } from '../stores/types';
import { EMPTY_PAGE, type ExtractionPart } from './extraction';
import { upstreamTextModel } from './upstream-text-model';

export interface GatewayPart {
  limiter: RateLimiter;
  /** The gateway's biller (chat and agent executions); decisions have one of their own. */
  biller: Biller;
  chat: ChatService;
  embeddings: EmbeddingsService;
  decisions: DecisionsService;
  /** The chat calls' queue (its depth is a metric). */
  queue: RequestQueue;
  closers: CloseStep[];
}

export interface GatewayPartDeps {
  config: Config;
  logger: Logger;
  wallets: WalletStore;
  catalogue: ModelCatalogue;
  upstream: UpstreamClient;
  extraction: ExtractionPart;
  inputs: InputResolverDeps;
  /** Runs the agent models' chat turns on the agent runtime. */
  agentChat: AgentChat;
}

export function createGatewayPart(deps: GatewayPartDeps): GatewayPart {
  const { config, logger, wallets, catalogue, upstream, extraction, inputs, agentChat } = deps;
  const { engine, readText, pdfText } = extraction;
  const windows = (perMinute: number, perHour: number): RateWindow[] => [
    { name: 'minute', lengthS: 60, limit: perMinute },
    { name: 'hour', lengthS: 3600, limit: perHour },
  ];
  const limiter = createRateLimiter(
    createMemoryRateLimitStore(),
    windows(config.gateway.perMinute, config.gateway.perHour),
    Object.fromEntries(
      Object.entries(config.gateway.tierLimits).map(([tier, l]) => [tier, windows(l.perMinute, l.perHour)]),
    ),
  );
  // The embedders read documents and images through the same engines as extraction.
  const textEmbedder = createTextEmbeddingEngine({ pdfText });
  const embeddings = createEmbeddingsService({
    catalogue,
    upstream,
    embedders: {
      'word-vector-embeddings': textEmbedder,
      'multimodal-embeddings': createMultimodalEmbeddingEngine({
        text: textEmbedder,
        pdfText,
        ocr: { recognize: async (image) => (await readText(image, 'image')).pages[0] ?? EMPTY_PAGE },
      }),
    },
    inputs,
  });
  // One guest cap across chat and decisions; decisions bill their own (smaller) minimum per decision.
  const guestSpend = createGuestSpendGuard(createMemoryGuestSpendStore(), {
    capMicros: config.gateway.guestDailyCapMicros,
  });
  const biller = createBiller({
    wallets,
    guestSpend,
    minimumMicros: config.gateway.minimumChargeMicros,
  });
  const queue = createRequestQueue({
    maxInFlight: { upstream: config.gateway.maxInFlight, local: config.gateway.localInFlight },
    maxWaiting: config.gateway.maxQueue,
  });
  const chat = createChatService({
    catalogue,
    upstream,
    biller,
    queue,
    extraction: engine,
    inputs,
    logger,
    agentChat,
  });
  const decisions = createDecisionsService({
    engine: createDecisionEngine({
      readLines: async (image) => ((await readText(image, 'image')).pages[0]?.lines ?? []).map((l) => l.text),
    }),
    catalogue,
    upstream,
    biller: createBiller({
      wallets,
      guestSpend,
      minimumMicros: config.decisions.minimumChargeMicros,
    }),
    limiter: createRateLimiter(createMemoryRateLimitStore(), [
      { name: 'minute', lengthS: 60, limit: config.decisions.perMinute },
      { name: 'hour', lengthS: 3600, limit: config.decisions.perHour },
    ]),
    upstreamModel: config.decisions.upstreamModel,
    inputs,
  });
  return { limiter, biller, chat, embeddings, decisions, queue, closers: [] };
}

/** The first serving upstream chat model of the models file drafts prompt-created skills; none: the template. */
export function draftingModel(catalogue: ModelCatalogue, upstream: UpstreamClient): DraftingModel | null {
  const model = catalogue.list('chat').find((m) => m.engine.kind === 'upstream' && m.serving);
  return upstreamTextModel(catalogue, upstream, model);
}
