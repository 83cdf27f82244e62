/**
 * The gateway part of the composition root: the chat, embeddings, transcription and decision services on the model catalogue and
 * the upstream client, metered by the metering part (metering.ts). The embedders and the decision engine read
 * documents and images through the extraction part's engines; the agent models' chat turns run on the agent
 * runtime (agentChat), so this part is built after it.
 *
 * Nothing here holds a resource of its own, so it has no closers yet.
 */
import type { Config } from '../config/config';
import { createDecisionEngine } from '../engines/decision/decision.engine';
import { createMultimodalEmbeddingEngine, createTextEmbeddingEngine } from '../engines/embeddings';
import { firstServingUpstreamChatModel, type ModelCatalogue } from '../gateway/catalogue/model-catalogue';
import { createChatService } from '../gateway/chat/chat.service';
import { withKeyBudgets } from '../services/admin/key-budget-biller';
import type { BudgetSlices } from '../services/admin/budget-slices';
import type { KeyPolicies } from '../services/admin/key-policies';
import type { OrgBudgets } from '../services/admin/org-budgets';
import type { ChatService } from '../gateway/chat/chat.types';
import { createDecisionsService, type DecisionsService } from '../gateway/decisions/decisions.service';
import { createEmbeddingsService, type EmbeddingsService } from '../gateway/embeddings/embeddings.service';
import {
  createTranscriptionsService,
  type TranscriptionsService,
} from '../gateway/transcriptions/transcriptions.service';
import type { UpstreamClient } from '../gateway/upstream/upstream-client';
import type { CloseStep } from '../lib/close-all';
import type { Logger } from '../lib/logger';
import type { AgentChat } from '../services/chats/agent-chat';
import type { InputResolverDeps } from '../services/inputs/resolve-input';
import type { DraftingModel } from '../services/skills/skill-authoring';
import { EMPTY_PAGE, type ExtractionPart } from './extraction';
import type { MeteringPart } from './metering';
import { upstreamTextModel } from './upstream-text-model';

export interface GatewayPart {
  chat: ChatService;
  embeddings: EmbeddingsService;
  transcriptions: TranscriptionsService;
  decisions: DecisionsService;
  closers: CloseStep[];
}

export interface GatewayPartDeps {
  config: Config;
  logger: Logger;
  metering: MeteringPart;
  catalogue: ModelCatalogue;
  upstream: UpstreamClient;
  extraction: ExtractionPart;
  inputs: InputResolverDeps;
  /** Runs the agent models' chat turns on the agent runtime. */
  agentChat: AgentChat;
  /**
   * Per-key allow-lists and budgets (the operator's API, src/services/admin): the allow-list applies to chat
   * completions, embeddings and transcriptions; the budgets to the paid ones (chat, embeddings, transcriptions and
   * decisions).
   */
  keyPolicies?: KeyPolicies;
  /** Organisations' budgets (the operator's API), held with the keys' budgets. */
  orgBudgets?: OrgBudgets;
  /** The same budgets held a slice of frames at a time, for decisions. */
  budgetSlices?: BudgetSlices;
}

export function createGatewayPart(deps: GatewayPartDeps): GatewayPart {
  const { config, logger, metering, catalogue, upstream, extraction, inputs, agentChat, keyPolicies } = deps;
  // One biller for every paid gateway call: a keyed call holds its key's budget, then its organisation's, then the
  // wallet (src/services/admin/key-budget-biller.ts); one allow-list check for every route that names a model.
  const biller = keyPolicies ? withKeyBudgets(metering.biller, keyPolicies, deps.orgBudgets ?? null) : metering.biller;
  const keyModels = keyPolicies
    ? { checkKeyModel: (keyId: string, model: string) => keyPolicies.checkModel(keyId, model) }
    : {};
  const { engine, readText, pdfText } = extraction;
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
    biller,
    ...keyModels,
  });
  const chat = createChatService({
    catalogue,
    upstream,
    biller,
    ...keyModels,
    queue: metering.queue,
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
    biller: metering.decisions.biller,
    limiter: metering.decisions.limiter,
    upstreamModel: config.decisions.upstreamModel,
    inputs,
    ...(deps.budgetSlices ? { budgets: deps.budgetSlices } : {}),
  });
  const transcriptions = createTranscriptionsService({
    catalogue,
    upstream,
    biller,
    ...keyModels,
    queue: metering.queue,
    audioDuration: extraction.kit.audioDuration,
  });
  return { chat, embeddings, transcriptions, decisions, closers: [] };
}

/** The first serving upstream chat model of the models file drafts prompt-created skills; none: the template. */
export function draftingModel(catalogue: ModelCatalogue, upstream: UpstreamClient): DraftingModel | null {
  return upstreamTextModel(catalogue, upstream, firstServingUpstreamChatModel(catalogue));
}
