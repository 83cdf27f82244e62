/**
 * The composition root: the only place that names concrete classes.
 *
 * It asks the backend seam (src/backend) for the stores, blobs, checkpointer, job queue and shared metering state
 * the config chose, builds the services on top, and owns their lifecycle: `start()` runs the owner bootstrap and the
 * start-up sweep, `close()` releases everything even if one step fails. Each part (the backend, extraction.ts,
 * metering.ts, agents.ts, gateway.ts) returns what it built plus its closers; `close()` runs every closer in the
 * reverse of the order things were built, each guarded by closeAll.
 *
 * Everything is built in the order it is used, with no forward reference: metering before the agent runtime (which
 * bills through it), the runtime before agent chat, agent chat before the gateway's chat completions (which route
 * agent models to it), and the runtime's skill runner before the predictions service.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { BlobStore } from '../blobs/types';
import type { Config } from '../config/config';
import type { Principal } from '../domain/account';
import { checkpointDurabilityFor } from '../agents/checkpoint-durability';
import { closeAll } from '../lib/close-all';
import { createKeyedMutex } from '../lib/keyed-mutex';
import { createLogger, type Logger } from '../lib/logger';
import { createUrlSigner } from '../lib/url-signer';
import { createAccountsService, type AccountsService, type CreatedKey } from '../services/accounts.service';
import { createAuthService, type AuthService } from '../services/auth.service';
import { createAdminSql } from '../backend/admin-sql';
import { createAdminService, type AdminService } from '../services/admin/admin.service';
import { withKeyBudgets } from '../services/admin/key-budget-biller';
import { createBudgetSlices } from '../services/admin/budget-slices';
import { createKeyPolicies } from '../services/admin/key-policies';
import { createOrgBudgets } from '../services/admin/org-budgets';
import { rawDatabaseOf } from '../backend/raw-database';
import { createMcpOAuthService, type McpOAuthService } from '../services/mcp-oauth.service';
import { createExtractionWallet } from './extraction-wallet';
import { configuredSpeechModel } from '../gateway/transcriptions/speech-transcriber';
import { startGuestFileSweep, type GuestFileSweep } from './guest-file-sweep';
import {
  createLedgerRetention,
  startLedgerRetentionSweep,
  type LedgerRetention,
  type LedgerRetentionSweep,
} from './ledger-retention-sweep';
import { rollUpLedger } from '../backend/ledger-retention';
import { startRunHeartbeat, type RunHeartbeat } from './run-heartbeat';
import { createAgentsModule, type AgentsModule } from './agents';
import { createExtractionPart } from './extraction';
import { createGatewayPart, draftingModel } from './gateway';
import { createBackend, type Backend } from '../backend';
import type { Stores, WebhookDelivery } from '../stores/types';
import { createMeteringPart } from './metering';
import { createArtifactsService, type ArtifactsService } from '../services/artifacts.service';
import type { Execution } from '../domain/execution';
import { toExecutionWire } from '../wire/agents.schemas';
import { toPredictionWire } from '../wire/predictions.schemas';
import { createGuestUploadQuota } from '../services/guest-upload-quota';
import type { ChatService } from '../gateway/chat/chat.types';
import type { EmbeddingsService } from '../gateway/embeddings/embeddings.service';
import type { DecisionsService } from '../gateway/decisions/decisions.service';
import type { TranscriptionsService } from '../gateway/transcriptions/transcriptions.service';
import { loadModelCatalogue, type ModelCatalogue } from '../gateway/catalogue/model-catalogue';
import type { RateLimitStore } from '../metering/ports';
import type { RateLimiter } from '../metering/rate-limiter';
import { createUpstreamClient } from '../gateway/upstream/upstream-client';
import type { JobQueue } from '../jobs/job-queue';
import type { SignalBus } from '../signals/signal-bus';
import { createReadCaches, withCachedKeyOwners, type ReadCaches } from './read-caches';
import { createHttpTransport } from '../gateway/upstream/http-transport';
import { measuredTransport } from '../gateway/upstream/measured-transport';
import { createMetrics, type Metrics } from '../lib/metrics';
import { createEvaluationsModule, type EvaluationsModule } from './evaluations';
import { createFeedbackService, type FeedbackService } from '../services/feedback.service';
import { createFilesService, type FilesService } from '../services/files.service';
import { createHubService, type HubService } from '../services/hub/hub.service';
import type { ExtractionEngine } from '../engines/extraction-engine';
import type { OcrStats } from '../engines/ocr/ocr-engine.types';
import { createPredictionsService } from '../services/predictions/predictions.service';
import type { PredictionsService } from '../services/predictions/predictions.types';
import { createWebhookSender, type WebhookSender } from '../services/webhooks.service';
import { seedBuiltinSkills } from '../services/skills/builtin-skills';
import { createSkillAuthor } from '../services/skills/skill-authoring';
import { createSkillsService, type SkillsService } from '../services/skills/skills.service';
import { createChatsService, type ChatsService } from '../services/chats/chats.service';
import { createAgentChat } from '../services/chats/agent-chat';
import { createLangGraphService, type LangGraphService } from '../services/langgraph/langgraph.service';
import { createMemoryPorts } from '../services/langgraph/memory';
import type { RunWebhook } from '../services/langgraph/runs';
import { createStoreItems } from '../services/langgraph/store-items';
import { createTextEmbeddingEngine } from '../engines/embeddings';
import { useStructurePool } from '../lib/json-schema';
import { createStructurePool, type StructurePoolStats } from '../lib/structure-pool';

export interface Container {
  config: Config;
  logger: Logger;
  version: string;
  /** Which database the records live in. */
  dialect: 'sqlite' | 'postgres';
  stores: Stores;
  blobs: BlobStore;
  engine: ExtractionEngine;
  gateway: {
    catalogue: ModelCatalogue;
    limiter: RateLimiter;
    /** The rate limits' counts (MCP tool-call budgets count there too). */
    rateLimitStore: RateLimitStore;
    chat: ChatService;
    embeddings: EmbeddingsService;
    transcriptions: TranscriptionsService;
    decisions: DecisionsService;
  };
  /** Prometheus metrics (`GET /metrics`): request, upstream and WebSocket hooks feed it; gauges read the parts. */
  metrics: Metrics;
  /** The embedded OCR pool's counters (reads run, reads cancelled) and reads pending now, for operators and tests. */
  ocrStats(): OcrStats;
  /**
   * The structure worker pool's counters (src/lib/structure-pool.ts: jobs run, workers replaced after an overrun),
   * or null when PRISM_STRUCTURE_WORKERS=0 (large schemas compile in-line).
   */
  structureStats(): StructurePoolStats | null;
  jobs: JobQueue;
  /** Ledger retention (PRISM_LEDGER_RETENTION_DAYS): the hourly roll-up of old ledger rows, to run at once. */
  ledgerRetention: LedgerRetention;
  /** Signals between replicas (MCP cancels): in the process, or Redis pub/sub with PRISM_REDIS_URL. */
  signals: SignalBus;
  webhooks: WebhookSender;
  executionWebhooks: WebhookSender<Execution>;
  /** The tool registry and the ToolContext factory (shared by the agent runtime and MCP). */
  agents: AgentsModule;
  /** Evaluation runs, optimize and rerun (their store and the upstream model they may use). */
  evaluations: EvaluationsModule;
  services: {
    accounts: AccountsService;
    /** The operator's API (/v1/admin): keys with policies, budgets, credits, spend reports, the audit log. */
    admin: AdminService;
    auth: AuthService;
    files: FilesService;
    hub: HubService;
    predictions: PredictionsService;
    feedback: FeedbackService;
    /** The LangGraph Platform API (docs/langgraph.md) over agents, executions and the embedding engine. */
    langgraph: LangGraphService;
    artifacts: ArtifactsService;
    skills: SkillsService;
    chats: ChatsService;
    /** Prism's OAuth authorization server for `/mcp` (clients, consent, tokens). */
    mcpOAuth: McpOAuthService;
  };
  /**
   * Creates the owner on an empty database and sweeps leftovers of a crash; returns the new owner key, if any.
   * A long-running process also moves WAL checkpoints to a worker thread (`backgroundCheckpoints`, on by default).
   */
  start(options?: {
    sweep?: boolean;
    resumeJobs?: boolean;
    backgroundCheckpoints?: boolean;
  }): Promise<{ ownerKey: CreatedKey | null }>;
  close(): Promise<void>;
}

/** How often each replica looks for due LangGraph crons: a firing starts at most this late. */
const CRON_POLL_MS = 5_000;

export interface ContainerOptions {
  logger?: Logger;
  /** Replaces the local extraction engine (tests of the service layer use a scripted one). */
  engine?: ExtractionEngine;
  /** Also export the process's own metrics (CPU, memory, event loop): for the server, not for tests. */
  processMetrics?: boolean;
  /** The clock LangGraph crons fire by (tests step it); the system clock by default. */
  clock?: () => Date;
}

export async function createContainer(config: Config, options: ContainerOptions = {}): Promise<Container> {
  const logger = options.logger ?? createLogger(config.log.level);
  const backend = await createBackend(config, logger);
  try {
    return await assemble(config, options, logger, backend);
  } catch (error) {
    // A part that failed to build (a models file that does not load, say) must not leave the backend open: its
    // Redis connections and database pool would keep the process alive with nothing to serve.
    await closeAll([...backend.closers].reverse()).catch(() => undefined);
    throw error;
  }
}

async function assemble(
  config: Config,
  options: ContainerOptions,
  logger: Logger,
  backend: Backend,
): Promise<Container> {
  const secret = config.auth.secret ?? (await readOrCreateSecret(config.data.secretPath));
  const reads = createReadCaches(backend.dialect, backend.shared.signals, backend.shared.sharedAcrossReplicas);
  // In place: the stores object is the key the backend seam finds its raw database by (rawDatabaseOf).
  backend.stores.accounts = withCachedKeyOwners(backend.stores.accounts, reads.keyOwners);
  const people = buildPeople(config, backend.stores, logger, reads, (name, work) => backend.exclusive(name, work));
  const content = buildContent(config, options, backend, people.accounts, secret, logger);
  const webhookSecret = config.webhooks.secret ?? (await readOrCreateSecret(config.webhooks.secretPath));
  const senders = buildWebhookSenders(config, backend.stores, webhookSecret, logger);
  const work = buildWork(config, options, logger, backend, people, content, senders);
  const structures = openStructurePool(config, logger);
  const parts: Parts = { config, logger, backend, people, content, senders, work, structures };
  const sweeps: Sweeps = { guest: null, pause: null, heartbeat: null, ledger: null };
  const { stores, blobs } = backend;
  const { metering, gateway, agents, extraction } = work;
  return {
    config,
    logger,
    version: packageVersion(),
    structureStats: () => structures.pool?.stats() ?? null,
    dialect: backend.dialect,
    stores,
    blobs,
    engine: extraction.engine,
    metrics: content.metrics,
    ocrStats: () => extraction.kit.ocrStats(),
    gateway: {
      catalogue: content.catalogue,
      limiter: metering.limiter,
      rateLimitStore: metering.rateLimitStore,
      chat: gateway.chat,
      embeddings: gateway.embeddings,
      transcriptions: gateway.transcriptions,
      decisions: gateway.decisions,
    },
    jobs: work.jobs,
    ledgerRetention: people.ledgerRetention,
    signals: backend.shared.signals,
    webhooks: senders.webhooks,
    executionWebhooks: senders.executionWebhooks,
    agents,
    evaluations: work.evaluations,
    services: {
      accounts: people.accounts,
      admin: people.admin,
      auth: people.auth,
      files: content.files,
      hub: content.hub,
      predictions: work.predictions,
      feedback: work.feedback,
      langgraph: work.langgraph,
      artifacts: work.artifacts,
      skills: content.skills,
      chats: content.chats,
      mcpOAuth: createMcpOAuthService({ store: stores.oauth, settings: config.mcp.oauth }),
    },
    start: (startOptions) => startContainer(parts, sweeps, startOptions),
    close: () => closeContainer(parts, sweeps),
  };
}

/** Everything `start` and `close` reach: the backend and the parts built on it, in build order. */
interface Parts {
  config: Config;
  logger: Logger;
  backend: Backend;
  people: People;
  content: Content;
  senders: WebhookSenders;
  work: Work;
  structures: StructureWorkers;
}

/** The timers `start` begins and `close` stops. */
interface Sweeps {
  guest: GuestFileSweep | null;
  pause: NodeJS.Timeout | null;
  heartbeat: RunHeartbeat | null;
  ledger: LedgerRetentionSweep | null;
}

type People = ReturnType<typeof buildPeople>;

/** Accounts, the operator's API (per-key expiry, model allow-lists and budgets, spend, the audit log) and auth. */
function buildPeople(
  config: Config,
  stores: Stores,
  logger: Logger,
  reads: ReadCaches,
  exclusive: <T>(name: string, work: () => Promise<T>) => Promise<T>,
) {
  const accounts = createAccountsService({
    ownerCreditsMicros: config.gateway.ownerCreditsMicros,
    accounts: stores.accounts,
    wallets: stores.wallets,
    writeOwnerKey: (key) => writePrivateFile(config.data.ownerKeyPath, `${key}\n`),
  });
  // The operator's API: per-key expiry, model allow-lists and budgets, spend and the audit log (docs/admin.md).
  const adminSql = createAdminSql(rawDatabaseOf(stores));
  const keyPolicies = createKeyPolicies(adminSql, undefined, undefined, reads.keyPolicies);
  const orgBudgets = createOrgBudgets(adminSql, undefined, reads.orgBudgets);
  // Decision streams hold the same budgets a slice of frames at a time (src/services/admin/budget-slices.ts).
  const budgetSlices = createBudgetSlices(keyPolicies, orgBudgets);
  const admin = createAdminService({
    sql: adminSql,
    accounts,
    accountStore: stores.accounts,
    policies: keyPolicies,
    orgBudgets,
  });
  const auth = createAuthService({
    accounts: stores.accounts,
    hashKey: (key) => accounts.hashKey(key),
    singleUserOwner: config.auth.singleUser ? () => accounts.ownerPrincipal() : async () => null,
    logger,
    refuseKey: (keyId) => keyPolicies.refuseIfExpired(keyId),
  });
  const raw = rawDatabaseOf(stores);
  const ledgerRetention = createLedgerRetention({
    retentionDays: config.ledger.retentionDays,
    rollUp: (before) => rollUpLedger(raw, { before, archive: config.ledger.archive }),
    flushSpend: () => keyPolicies.flushSpend(),
    exclusive,
  });
  return { accounts, keyPolicies, orgBudgets, budgetSlices, admin, auth, ledgerRetention };
}

type Content = ReturnType<typeof buildContent>;

/** Files and skills (bytes in the blob store), the hub, the models catalogue, the upstream client and metrics. */
function buildContent(
  config: Config,
  options: ContainerOptions,
  backend: Backend,
  accounts: AccountsService,
  secret: string,
  logger: Logger,
) {
  const { stores, blobs } = backend;
  const locks = createKeyedMutex();
  const signer = createUrlSigner(secret);
  const files = createFilesService({
    files: stores.files,
    blobs,
    locks,
    signer,
    orgIdFor: (principal) => accounts.orgIdFor(principal),
    limits: { maxUploadBytes: config.limits.maxUploadBytes, urlTtlSeconds: config.limits.urlTtlSeconds },
    guestQuota: createGuestUploadQuota({
      perDay: config.guestUploads.perDay,
      bytesPerDay: config.guestUploads.bytesPerDay,
    }),
    guestFileTtlMs: config.guestUploads.ttlMs,
  });
  // How every service turns a caller's file id or URL into bytes.
  const inputs = {
    openFile: async (principal: Principal, fileId: string) => {
      const { file, stream } = await files.openContent(principal, fileId);
      return { filename: file.filename, stream };
    },
    fetch: config.fetch,
  };
  const hub = createHubService();
  const catalogue = loadModelCatalogue(config.models.file, config.models.env);
  const metrics = createMetrics({ processMetrics: options.processMetrics ?? false });
  const upstream = createUpstreamClient({
    retries: config.gateway.upstreamRetries,
    transport: measuredTransport(createHttpTransport(), {
      observeCall: (host, status, seconds) => metrics.upstreamDuration.observe({ host, status }, seconds),
      observeFirstByte: (host, seconds) => metrics.upstreamFirstByte.observe({ host }, seconds),
    }),
  });
  const chats = createChatsService({ store: stores.chats, orgIdFor: (principal) => accounts.orgIdFor(principal) });
  const skills = createSkillsService({
    store: stores.skills,
    blobs,
    locks,
    signer,
    limits: {
      maxEntries: config.skills.maxEntries,
      maxEntryBytes: config.skills.maxEntryBytes,
      maxTotalBytes: config.skills.maxTotalBytes,
      maxRatio: config.skills.maxRatio,
    },
    openFile: async (principal, fileId) => {
      const { file, stream } = await files.openContent(principal, fileId);
      return { bytes: file.bytes, stream };
    },
    // Skills from a chat: the history the caller may read (chat access rules) becomes the prompt.
    sessionPrompt: (principal, sessionId, sessionToken) => chats.sessionPrompt(principal, sessionId, sessionToken),
    author: createSkillAuthor({ model: draftingModel(catalogue, upstream), logger }),
  });
  return { locks, files, inputs, hub, catalogue, metrics, upstream, chats, skills };
}

type WebhookSenders = ReturnType<typeof buildWebhookSenders>;

/**
 * The three webhook senders, signed with one secret and bound by one set of limits: predictions, agent executions,
 * and LangGraph runs (which get the LangGraph run, their deliveries recorded with the run's execution).
 */
function buildWebhookSenders(config: Config, stores: Stores, secret: string, logger: Logger) {
  const common = {
    secret,
    timeoutMs: config.webhooks.timeoutMs,
    attempts: config.webhooks.attempts,
    backoffMs: config.webhooks.backoffMs,
    allowPrivate: config.fetch.allowPrivate,
    logger,
  };
  const executionDeliveries = {
    recordDelivery: ({ predictionId, ...rest }: WebhookDelivery) =>
      stores.executions.recordDelivery({ ...rest, executionId: predictionId }),
  };
  return {
    webhooks: createWebhookSender({ ...common, store: stores.predictions, render: toPredictionWire }),
    executionWebhooks: createWebhookSender<Execution>({
      ...common,
      store: executionDeliveries,
      render: toExecutionWire,
      eventPrefix: 'execution',
    }),
    langgraphWebhooks: createWebhookSender<RunWebhook>({
      ...common,
      store: executionDeliveries,
      render: (hook) => hook.payload,
      eventPrefix: 'langgraph.run',
    }),
  };
}

type Work = ReturnType<typeof buildWork>;

/**
 * The work Prism does, in the order it is used: extraction, the job queue, metering (everything below bills
 * through it), agents, agent chat, the gateway, predictions, evaluations, feedback and the LangGraph API.
 */
function buildWork(
  config: Config,
  options: ContainerOptions,
  logger: Logger,
  backend: Backend,
  people: People,
  content: Content,
  senders: WebhookSenders,
) {
  const { stores } = backend;
  const { catalogue, upstream, inputs, metrics } = content;
  // One set of embedded engines: `prism-1` for extraction and the toolkit the agent tools call.
  const extraction = createExtractionPart({ config, logger, catalogue, upstream, override: options.engine });
  // The queue runs every kind of background work; each service registers its handler once it exists.
  const jobs = backend.shared.createJobQueue({ concurrency: config.jobs.concurrency, logger });
  // Rate limits and billing first: the agent runtime, the gateway and priced extraction all bill through them.
  const metering = createMeteringPart(config, stores.wallets, backend.shared, (kind, payer, micros) => {
    metrics.walletDebits.inc({ kind, payer });
    metrics.walletDebitDollars.inc({ kind, payer }, micros / 1e6);
  });
  metrics.readFrom({
    gatewayInFlight: () => metering.queue.inFlight(),
    gatewayWaiting: () => metering.queue.waiting,
    jobsQueued: () => jobs.size(),
    ocr: () => extraction.kit.ocrStats(),
  });
  const artifacts = createArtifactsService({
    store: stores.artifacts,
    blobs: backend.blobs,
    locks: content.locks,
    orgIdFor: (principal) => people.accounts.orgIdFor(principal),
    maxBytes: config.limits.maxUploadBytes,
    // One process owns a SQLite file, so every read of a scope comes through this service (artifacts.service.ts).
    holdBackground: backend.dialect === 'sqlite' ? { quietMs: 50, maxHeld: 32 } : null,
  });
  const { agents, agentChat, embedForStore } = buildAgents(config, logger, backend, people, content, {
    artifacts,
    metering,
    jobs,
    extraction,
    onFinished: (execution) => senders.executionWebhooks.deliver(execution),
  });
  const gateway = createGatewayPart({
    config,
    logger,
    metering,
    catalogue,
    upstream,
    extraction,
    inputs,
    agentChat,
    keyPolicies: people.keyPolicies,
    orgBudgets: people.orgBudgets,
    budgetSlices: people.budgetSlices,
  });
  const predictions = createPredictionsService({
    store: stores.predictions,
    blobs: backend.blobs,
    locks: content.locks,
    hub: content.hub,
    engine: extraction.engine,
    inputs,
    skills: content.skills,
    orgIdFor: (principal) => people.accounts.orgIdFor(principal),
    // Credits at the extraction price, and the seconds the transcription model hears at its per-minute price.
    // Keyed requests hold the key's and the organisation's budgets before the wallet (docs/admin.md).
    wallet: createExtractionWallet(
      withKeyBudgets(metering.billerFor('extraction'), people.keyPolicies, people.orgBudgets),
      config.extraction.microsPerCredit,
      configuredSpeechModel(catalogue)?.pricing ?? null,
    ),
    // Generate requests whose skills call for the agent runtime run on it.
    skillRunner: agents.skillRunner,
    checkKeyModel: (keyId, model) => people.keyPolicies.checkModel(keyId, model),
    enqueue: (id) => jobs.enqueue({ kind: 'prediction', id }),
    signals: backend.shared.signals,
    onFinished: (prediction) => senders.webhooks.deliver(prediction),
    logger,
  });
  jobs.handle('prediction', (id, delivery) => predictions.runJob(id, delivery));
  const evaluations = createEvaluationsModule({
    store: stores.evaluations,
    predictions: stores.predictions,
    agents: stores.agents,
    blobs: backend.blobs,
    engine: extraction.engine,
    hub: content.hub,
    skills: content.skills,
    catalogue,
    upstream,
    reprocessExecution: (orgId, executionId, skill) => agents.executionRerun.rerun(orgId, executionId, skill),
    config: config.evaluations,
    orgIdFor: (principal) => people.accounts.orgIdFor(principal),
    enqueue: (id) => jobs.enqueue({ kind: 'evaluation', id }),
    logger,
  });
  jobs.handle('evaluation', (id) => evaluations.service.runJob(id));
  const feedback = createFeedbackService({
    store: stores.feedback,
    orgIdFor: (principal) => people.accounts.orgIdFor(principal),
    targets: { predictions: stores.predictions, executions: stores.executions, chats: content.chats },
  });
  const langgraph = createLangGraphService({
    store: stores.langgraph,
    agents: agents.agents,
    agentStore: stores.agents,
    executions: agents.executions,
    toolNames: () => agents.tools.list().map((tool) => tool.name),
    embed: embedForStore,
    orgIdFor: (principal) => people.accounts.orgIdFor(principal),
    deliverWebhook: (hook) => senders.langgraphWebhooks.deliver(hook),
    allowPrivateWebhooks: config.fetch.allowPrivate,
    clock: options.clock ?? (() => new Date()),
    logger,
  });
  return { extraction, jobs, metering, artifacts, agents, gateway, predictions, evaluations, feedback, langgraph };
}

/**
 * The agent runtime with its memory (the LangGraph store's semantic search, on Prism's own 256-dimension text
 * engine: 1 KiB per item), its job handler, and agent chat on top (the gateway's chat completions route to it).
 */
function buildAgents(
  config: Config,
  logger: Logger,
  backend: Backend,
  people: People,
  content: Content,
  work: {
    artifacts: ArtifactsService;
    metering: ReturnType<typeof createMeteringPart>;
    jobs: JobQueue;
    extraction: ReturnType<typeof createExtractionPart>;
    onFinished: (execution: Execution) => void;
  },
) {
  const { stores } = backend;
  const storeEmbedder = createTextEmbeddingEngine();
  const embedForStore = async (texts: string[]): Promise<Float32Array[]> =>
    (await storeEmbedder.embed(texts, { dimensions: 256 })).vectors;
  const memoryFor = createMemoryPorts(createStoreItems(stores.langgraph, embedForStore), (principal) =>
    people.accounts.orgIdFor(principal),
  );
  const agents = createAgentsModule({
    memoryFor,
    checkpointer: backend.checkpointer,
    checkpointDurability: checkpointDurabilityFor(backend.dialect),
    stores,
    artifacts: work.artifacts,
    files: content.files,
    hub: content.hub,
    inputs: content.inputs,
    catalogue: content.catalogue,
    upstream: content.upstream,
    // Runs hold the key's and the organisation's budgets before the wallet, as gateway calls do (docs/admin.md).
    biller: withKeyBudgets(work.metering.billerFor('agents'), people.keyPolicies, people.orgBudgets),
    checkKeyModel: (keyId, model) => people.keyPolicies.checkModel(keyId, model),
    skills: content.skills,
    limits: config.agents,
    agentMcp: config.agentMcp,
    signals: backend.shared.signals,
    orgIdFor: (principal) => people.accounts.orgIdFor(principal),
    enqueue: (id) => work.jobs.enqueue({ kind: 'execution', id }),
    onFinished: work.onFinished,
    logger,
    vision: work.extraction.kit.toolkit,
    audioDuration: work.extraction.kit.audioDuration,
  });
  work.jobs.handle('execution', (id, delivery) => agents.executions.runJob(id, delivery));
  // Chat turns of the agent models, on the runtime: the gateway's chat completions route them here.
  const agentChat = createAgentChat({
    chats: content.chats,
    runtime: agents.runtime,
    tools: agents.tools,
    toolContext: agents.toolContext,
    planners: agents.planners,
    skills: content.skills,
    files: content.files,
    artifacts: work.artifacts,
    limits: config.agents,
    logger,
  });
  return { agents, agentChat, embedForStore };
}

/** The structure worker pool, and how to hand large schemas back to in-line compiling when it closes. */
interface StructureWorkers {
  pool: ReturnType<typeof createStructurePool> | null;
  release: () => void;
}

/** Large caller schemas compile on worker threads (lib/json-schema.ts prepareSchema), not on the event loop. */
function openStructurePool(config: Config, logger: Logger): StructureWorkers {
  const { size: structureThreads, heapMb, deadlineMs } = config.limits.structureWorkers;
  const pool =
    structureThreads > 0 ? createStructurePool({ size: structureThreads, heapMb, deadlineMs, logger }) : null;
  return { pool, release: useStructurePool(pool) };
}

/**
 * `Container.start`: the owner on an empty database, the start-up sweep, the timers, the built-in skills, the work
 * left unfinished by a restart, the queue and the crons' scheduler.
 */
async function startContainer(
  parts: Parts,
  sweeps: Sweeps,
  { sweep = true, resumeJobs = true, backgroundCheckpoints = true } = {},
): Promise<{ ownerKey: CreatedKey | null }> {
  const { config, logger, backend, people, content, work } = parts;
  const { stores, blobs } = backend;
  const { agents } = work;
  // Replicas starting together on one empty database create one owner between them.
  const ownerKey = await backend.exclusive('bootstrap', () => people.accounts.bootstrapOwner());
  if (backgroundCheckpoints) await backend.startBackground();
  if (sweep) {
    await stores.files.deleteExpiredPending(new Date());
    const swept = await blobs.sweep(await stores.files.referencedBlobs());
    if (swept.partsRemoved + swept.orphansRemoved > 0) logger.info('swept blob leftovers', swept);
  }
  sweeps.guest ??= startGuestFileSweep(content.files, config.guestUploads.ttlMs, logger);
  if (config.ledger.retentionDays > 0) sweeps.ledger ??= startLedgerRetentionSweep(people.ledgerRetention, logger);
  // Paused agent runs whose wait expired fail with a message (at start, then every minute or TTL).
  const expirePaused = (): void =>
    void agents.executions
      .expirePaused()
      .catch((error: unknown) => logger.warn('could not expire paused runs', { error: String(error) }));
  expirePaused();
  sweeps.pause ??= setInterval(expirePaused, Math.min(60_000, config.agents.pauseTtlMs)).unref();
  await seedBuiltinSkills(content.skills, config.skills.builtinDir, logger);
  if (resumeJobs) await resumeAfterRestart(parts);
  if (backend.shared.sharedAcrossReplicas) {
    sweeps.heartbeat ??= startRunHeartbeat(agents.executions, config.jobs.leaseMs, logger);
  }
  work.jobs.start();
  // Every replica polls for due LangGraph crons; a conditional claim lets one of them start each firing.
  work.langgraph.crons.startScheduler(CRON_POLL_MS);
  return { ownerKey };
}

/** Puts the predictions, agent executions and evaluations a restart interrupted back to work. */
async function resumeAfterRestart({ logger, backend, work }: Parts): Promise<void> {
  // With a shared queue, running records belong to live replicas; the queue's leases hand over a dead one's.
  const takeOverRunning = !backend.shared.sharedAcrossReplicas;
  const jobsAfterRestart = await work.predictions.resumeUnfinished({ takeOverRunning });
  if (jobsAfterRestart.resumed + jobsAfterRestart.failed > 0) {
    logger.info('picked up unfinished predictions', jobsAfterRestart);
  }
  const runsAfterRestart = await work.agents.executions.resumeUnfinished({ takeOverRunning });
  if (runsAfterRestart.resumed + runsAfterRestart.failed > 0) {
    logger.info('picked up unfinished agent executions', runsAfterRestart);
  }
  const evaluationsAfterRestart = await work.evaluations.service.resumeUnfinished();
  if (evaluationsAfterRestart.resumed > 0) {
    logger.info('picked up unfinished evaluations', evaluationsAfterRestart);
  }
}

/**
 * `Container.close`: every closer runs, in the reverse of the order things were built, even when an earlier one
 * throws: queued debits are always written and the file closed.
 */
function closeContainer(parts: Parts, sweeps: Sweeps): Promise<void> {
  const { config, backend, people, senders, work, structures } = parts;
  const { jobs, agents } = work;
  return closeAll(
    [
      ...backend.closers,
      // After every call has settled, before the database closes: the spend records still queued.
      { name: 'decision budget slices', run: () => people.budgetSlices.flushAll() },
      { name: 'key spend records', run: () => people.keyPolicies.flushSpend() },
      ...work.extraction.closers,
      {
        name: 'structure workers',
        run: async () => {
          structures.release();
          await structures.pool?.close();
        },
      },
      ...work.metering.closers,
      ...work.gateway.closers,
      // After the runs stop, before the database closes: steps.json files still being written.
      { name: 'artifact writes', run: () => work.artifacts.drain() },
      { name: 'execution webhooks', run: () => senders.executionWebhooks.close() },
      { name: 'langgraph webhooks', run: () => senders.langgraphWebhooks.close() },
      { name: 'webhooks', run: () => senders.webhooks.close() },
      { name: 'jobs', run: () => jobs.close(config.server.shutdownGraceMs) },
      { name: 'executions', run: () => agents.executions.cancelAll() },
      { name: 'prediction runs', run: () => agents.skillRunner.cancelAll() },
      { name: 'evaluation execution re-runs', run: () => agents.executionRerun.cancelAll() },
      // Before running work is stopped: a shared queue hands the jobs cut short back to the other replicas.
      { name: 'jobs: stop taking work', run: () => jobs.stopTaking() },
      { name: 'guest file sweep', run: () => sweeps.guest?.stop() },
      { name: 'ledger retention', run: () => sweeps.ledger?.stop() },
      { name: 'paused-run expiry', run: () => sweeps.pause && clearInterval(sweeps.pause) },
      { name: 'agent run heartbeat', run: () => sweeps.heartbeat?.stop() },
      { name: 'langgraph crons', run: () => work.langgraph.crons.stop() },
    ].reverse(),
  );
}

function packageVersion(): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pkg = require('../../package.json') as { version: string };
  return pkg.version;
}

/** The signing secret: generated once, kept in the data folder with owner-only permissions. */
async function readOrCreateSecret(file: string): Promise<string> {
  try {
    return (await fs.readFile(file, 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const secret = randomBytes(32).toString('hex');
  await writePrivateFile(file, `${secret}\n`);
  return secret;
}

async function writePrivateFile(file: string, content: string): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, content, { mode: 0o600 });
  await fs.chmod(file, 0o600);
}
