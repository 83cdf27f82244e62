/**
 * The composition root: the only place that names concrete classes.
 *
 * It opens SQLite and the blob folder from the config, builds the stores and services on top, and owns their
 * lifecycle: `start()` runs the owner bootstrap and the start-up sweep, `close()` releases everything even if one
 * step fails.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { buffer as readAll } from 'node:stream/consumers';
import { createFsBlobStore } from './blobs/fs.blob-store';
import type { BlobStore } from './blobs/types';
import type { Config } from './config/config';
import type { Principal } from './domain/account';
import { InvalidSkillBundleError } from './domain/errors';
import type { PredictionRequest } from './domain/prediction';
import type { LayoutPage } from './engines/types';
import { closeAll } from './lib/close-all';
import { createKeyedMutex } from './lib/keyed-mutex';
import { createLogger, type Logger } from './lib/logger';
import { createUrlSigner } from './lib/url-signer';
import { createAccountsService, type AccountsService, type CreatedKey } from './services/accounts.service';
import { createAuthService, type AuthService } from './services/auth.service';
import { createLocalEngineKit } from './engines/local-engine-set';
import { createAgentsModule, type AgentsModule } from './container/agents';
import { createEvaluationsModule, type EvaluationsModule } from './container/evaluations';
import { createArtifactsService, type ArtifactsService } from './services/artifacts.service';
import { createSqliteArtifactStore } from './stores/sqlite/artifacts.store';
import type { ArtifactStore } from './stores/artifact-store';
import { createSqliteExecutionStore } from './stores/sqlite/executions.store';
import { createSqliteAgentStore, createSqliteProgramStore } from './stores/sqlite/agents.store';
import type { AgentStore, ExecutionStore, ProgramStore } from './stores/execution-store';
import type { Execution } from './domain/execution';
import { toExecutionWire } from './http/schemas/agents.schemas';
import { toPredictionWire } from './http/schemas/predictions.schemas';
import { createBiller } from './gateway/billing';
import { createGuestUploadQuota } from './services/guest-upload-quota';
import { createChatService, type ChatService } from './gateway/chat.service';
import { createEmbeddingsService, type EmbeddingsService } from './gateway/embeddings.service';
import { createDecisionsService, type DecisionsService } from './gateway/decisions.service';
import { createDecisionEngine } from './engines/decision/decision.engine';
import { createRoutedExtractionEngine } from './gateway/upstream-extraction';
import { createMultimodalEmbeddingEngine, createTextEmbeddingEngine } from './engines/embeddings';
import { createGuestSpendGuard, createMemoryGuestSpendStore } from './gateway/guest-spend';
import { loadModelCatalogue, type ModelCatalogue } from './gateway/model-catalogue';
import { createMemoryRateLimitStore, createRateLimiter, type RateLimiter } from './gateway/rate-limiter';
import { createRequestQueue } from './gateway/request-queue';
import { createUpstreamClient, type UpstreamClient } from './gateway/upstream-client';
import { createJobQueue, type JobQueue } from './jobs/job-queue';
import { createFeedbackService, type FeedbackService } from './services/feedback.service';
import { createFilesService, type FilesService } from './services/files.service';
import { createHubService, type HubService } from './services/hub/hub.service';
import type { ExtractionEngine } from './engines/extraction-engine';
import { createPredictionsService, type PredictionsService } from './services/predictions/predictions.service';
import { createWebhookSender, type WebhookSender } from './services/webhooks.service';
import { seedBuiltinSkills } from './services/skills/builtin-skills';
import { createSkillAuthor, type DraftingModel } from './services/skills/skill-authoring';
import { createSkillsService, type SkillsService } from './services/skills/skills.service';
import { createSqliteSkillStore } from './stores/sqlite/skills.store';
import { createSqliteFeedbackStore } from './stores/sqlite/feedback.store';
import { createSqlitePredictionStore } from './stores/sqlite/predictions.store';
import { createSqliteAccountStore } from './stores/sqlite/accounts.store';
import { startBackgroundCheckpoints, type BackgroundCheckpoints } from './stores/sqlite/background-checkpoints';
import { openDatabase, type SqliteDatabase } from './stores/sqlite/database';
import { createSqliteFileStore } from './stores/sqlite/files.store';
import { createSqliteWalletStore } from './stores/sqlite/wallets.store';
import type { AccountStore, FeedbackStore, FileStore, PredictionStore, SkillStore, WalletStore } from './stores/types';

export interface Container {
  config: Config;
  logger: Logger;
  version: string;
  db: SqliteDatabase;
  stores: {
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
  };
  blobs: BlobStore;
  engine: ExtractionEngine;
  gateway: {
    catalogue: ModelCatalogue;
    limiter: RateLimiter;
    chat: ChatService;
    embeddings: EmbeddingsService;
    decisions: DecisionsService;
  };
  jobs: JobQueue;
  webhooks: WebhookSender;
  executionWebhooks: WebhookSender<Execution>;
  /** The tool registry and the ToolContext factory (shared by the agent runtime and MCP). */
  agents: AgentsModule;
  /** Evaluation runs, optimize and rerun (their store and the upstream model they may use). */
  evaluations: EvaluationsModule;
  services: {
    accounts: AccountsService;
    auth: AuthService;
    files: FilesService;
    hub: HubService;
    predictions: PredictionsService;
    feedback: FeedbackService;
    artifacts: ArtifactsService;
    skills: SkillsService;
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

export interface ContainerOptions {
  logger?: Logger;
  /** Replaces the local extraction engine (tests of the service layer use a scripted one). */
  engine?: ExtractionEngine;
}

export async function createContainer(config: Config, options: ContainerOptions = {}): Promise<Container> {
  const logger = options.logger ?? createLogger(config.log.level);
  await fs.mkdir(config.data.dir, { recursive: true });
  const secret = config.auth.secret ?? (await readOrCreateSecret(config.data.secretPath));
  const db = openDatabase(config.data.dbPath);
  let checkpoints: BackgroundCheckpoints | null = null;

  // Gateway debits are written behind (PRISM_WALLET_FLUSH_MS); close() writes what is queued before the file closes.
  const wallets = createSqliteWalletStore(db, { logger, flushMs: config.gateway.walletFlushMs });
  const stores = {
    accounts: createSqliteAccountStore(db),
    wallets,
    files: createSqliteFileStore(db),
    predictions: createSqlitePredictionStore(db),
    feedback: createSqliteFeedbackStore(db),
    artifacts: createSqliteArtifactStore(db),
    executions: createSqliteExecutionStore(db),
    agents: createSqliteAgentStore(db),
    programs: createSqliteProgramStore(db),
    skills: createSqliteSkillStore(db),
  };
  const blobs = createFsBlobStore(config.data.blobDir);

  const accounts = createAccountsService({
    ownerCreditsMicros: config.gateway.ownerCreditsMicros,
    accounts: stores.accounts,
    wallets: stores.wallets,
    writeOwnerKey: (key) => writePrivateFile(config.data.ownerKeyPath, `${key}\n`),
  });
  const auth = createAuthService({
    accounts: stores.accounts,
    hashKey: (key) => accounts.hashKey(key),
    singleUserOwner: config.auth.singleUser ? () => accounts.ownerPrincipal() : async () => null,
    logger,
  });
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
  const upstream = createUpstreamClient({ retries: config.gateway.upstreamRetries });
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
      if (file.bytes > config.skills.maxTotalBytes) {
        stream.destroy();
        throw new InvalidSkillBundleError(
          'total_too_large',
          null,
          `the zip (${file.bytes} bytes) is larger than the bundle limit of ${config.skills.maxTotalBytes} bytes`,
        );
      }
      return readAll(stream);
    },
    // Chats do not exist yet: every session id is unknown (404 chat_not_found) until the chat store lands.
    sessionPrompt: async () => null,
    author: createSkillAuthor({ model: draftingModel(catalogue, upstream), logger }),
  });
  // One set of embedded engines: `prism-1` for extraction and the toolkit the agent tools call.
  const kit = createLocalEngineKit({
    ocrWorkers: config.engines.ocrWorkers,
    ocrEngine: config.engines.ocrEngine,
    ocrThreads: config.engines.ocrThreads,
    documentMaxPages: config.engines.documentMaxPages,
    ffmpegPath: config.engines.ffmpegPath,
    ffprobePath: config.engines.ffprobePath,
    mediaMemoryMb: config.engines.mediaMemoryMb,
    documentDeadlineMs: config.engines.documentDeadlineMs,
    logger,
  });
  const localEngine = options.engine ?? kit.engine;
  // Generate requests naming an upstream model from the catalogue go there; `prism-1` stays on the local engines.
  const engine = createRoutedExtractionEngine({ local: localEngine, catalogue, upstream });
  const webhookSecret = config.webhooks.secret ?? (await readOrCreateSecret(config.webhooks.secretPath));
  const webhooks = createWebhookSender({
    store: stores.predictions,
    secret: webhookSecret,
    render: toPredictionWire,
    timeoutMs: config.webhooks.timeoutMs,
    attempts: config.webhooks.attempts,
    backoffMs: config.webhooks.backoffMs,
    allowPrivate: config.fetch.allowPrivate,
    logger,
  });
  // The queue and the services refer to each other: the queue runs the services' jobs, one handler per kind
  // (`execution:<id>` for agent executions, a bare id for predictions).
  const handlers: {
    prediction: (id: string) => Promise<void>;
    execution: (id: string) => Promise<void>;
    evaluation: (id: string) => Promise<void>;
  } = {
    prediction: async () => undefined,
    execution: async () => undefined,
    evaluation: async () => undefined,
  };
  const EXECUTION_JOB = 'execution:';
  const EVALUATION_JOB = 'evaluation:';
  const jobs = createJobQueue({
    concurrency: config.jobs.concurrency,
    run: (key) => {
      if (key.startsWith(EXECUTION_JOB)) return handlers.execution(key.slice(EXECUTION_JOB.length));
      if (key.startsWith(EVALUATION_JOB)) return handlers.evaluation(key.slice(EVALUATION_JOB.length));
      return handlers.prediction(key);
    },
    logger,
  });
  const predictions = createPredictionsService({
    store: stores.predictions,
    blobs,
    locks,
    hub,
    engine,
    inputs,
    skills,
    orgIdFor: (principal) => accounts.orgIdFor(principal),
    enqueue: (id) => jobs.enqueue(id),
    onFinished: (prediction) => webhooks.deliver(prediction),
    logger,
  });
  handlers.prediction = (id) => predictions.runJob(id);
  const limiter = createRateLimiter(createMemoryRateLimitStore(), [
    { name: 'minute', lengthS: 60, limit: config.gateway.perMinute },
    { name: 'hour', lengthS: 3600, limit: config.gateway.perHour },
  ]);
  // The embedders read documents and images through the same engines as extraction.
  const readText = async (bytes: Buffer, family: 'image' | 'document') =>
    (
      await engine.read(
        { bytes, mimeType: family === 'document' ? 'application/pdf' : 'image/png', family, filename: null },
        PLAIN_READ,
      )
    ).layout;
  const pdfText = async (pdf: Buffer) =>
    (await readText(pdf, 'document')).pages.map((p) => p.lines.map((l) => l.text).join('\n'));
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
    wallets: stores.wallets,
    guestSpend,
    minimumMicros: config.gateway.minimumChargeMicros,
  });
  const chat = createChatService({
    catalogue,
    upstream,
    biller,
    queue: createRequestQueue({
      maxInFlight: { upstream: config.gateway.maxInFlight, local: config.gateway.localInFlight },
      maxWaiting: config.gateway.maxQueue,
    }),
    extraction: engine,
    inputs,
    logger,
  });
  const artifacts = createArtifactsService({
    store: stores.artifacts,
    blobs,
    locks,
    orgIdFor: (principal) => accounts.orgIdFor(principal),
    maxBytes: config.limits.maxUploadBytes,
  });
  const executionWebhooks = createWebhookSender<Execution>({
    store: {
      recordDelivery: ({ predictionId, ...rest }) =>
        stores.executions.recordDelivery({ ...rest, executionId: predictionId }),
    },
    secret: webhookSecret,
    render: toExecutionWire,
    eventPrefix: 'execution',
    timeoutMs: config.webhooks.timeoutMs,
    attempts: config.webhooks.attempts,
    backoffMs: config.webhooks.backoffMs,
    allowPrivate: config.fetch.allowPrivate,
    logger,
  });
  const agents = createAgentsModule({
    db,
    stores,
    artifacts,
    files,
    hub,
    inputs,
    catalogue,
    upstream,
    biller,
    minimumChargeMicros: config.gateway.minimumChargeMicros,
    skills,
    limits: config.agents,
    orgIdFor: (principal) => accounts.orgIdFor(principal),
    enqueue: (id) => jobs.enqueue(`${EXECUTION_JOB}${id}`),
    onFinished: (execution) => executionWebhooks.deliver(execution),
    logger,
    vision: {
      ...kit.toolkit,
      async analyzeAudio(bytes) {
        const a = await kit.toolkit.analyzeAudio(bytes);
        return {
          durationS: a.durationS,
          format: a.format,
          codec: a.codec,
          channels: a.channels,
          sampleRate: a.sampleRate,
          vad: a.vadNote ? `${a.vad} (${a.vadNote})` : a.vad,
          speechSegments: a.speechSegments.map((s) => ({ startS: s.start_s, endS: s.end_s })),
          speechS: a.speechS,
          transcriptMessage: a.transcriptMessage,
        };
      },
    },
  });
  handlers.execution = (id) => agents.executions.runJob(id);
  const decisions = createDecisionsService({
    engine: createDecisionEngine({
      readLines: async (image) => ((await readText(image, 'image')).pages[0]?.lines ?? []).map((l) => l.text),
    }),
    catalogue,
    upstream,
    biller: createBiller({
      wallets: stores.wallets,
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
  const evaluations = createEvaluationsModule({
    db,
    predictions: stores.predictions,
    agents: stores.agents,
    blobs,
    engine,
    hub,
    skills,
    catalogue,
    upstream,
    config: config.evaluations,
    orgIdFor: (principal) => accounts.orgIdFor(principal),
    enqueue: (id) => jobs.enqueue(`${EVALUATION_JOB}${id}`),
    logger,
  });
  handlers.evaluation = (id) => evaluations.service.runJob(id);
  const feedback = createFeedbackService({
    store: stores.feedback,
    orgIdFor: (principal) => accounts.orgIdFor(principal),
    targetExists: async (orgId, type, id) => {
      if (type === 'request') return (await stores.predictions.get(orgId, id)) !== null;
      if (type === 'agent_execution') return (await stores.executions.get(orgId, id)) !== null;
      return false;
    },
  });

  return {
    config,
    logger,
    version: packageVersion(),
    db,
    stores,
    blobs,
    engine,
    gateway: { catalogue, limiter, chat, embeddings, decisions },
    jobs,
    webhooks,
    executionWebhooks,
    agents,
    evaluations,
    services: { accounts, auth, files, hub, predictions, feedback, artifacts, skills },

    async start({ sweep = true, resumeJobs = true, backgroundCheckpoints = true } = {}) {
      const ownerKey = await accounts.bootstrapOwner();
      if (backgroundCheckpoints && config.data.walCheckpointMs > 0 && checkpoints === null) {
        try {
          checkpoints = await startBackgroundCheckpoints(db, config.data.dbPath, {
            intervalMs: config.data.walCheckpointMs,
            logger,
          });
        } catch (error) {
          logger.warn('WAL checkpoints stay in commits: the worker did not start', { error: String(error) });
        }
      }
      if (sweep) {
        await stores.files.deleteExpiredPending(new Date());
        const swept = await blobs.sweep(await stores.files.referencedBlobs());
        if (swept.partsRemoved + swept.orphansRemoved > 0) logger.info('swept blob leftovers', swept);
      }
      await seedBuiltinSkills(skills, config.skills.builtinDir, logger);
      if (resumeJobs) {
        const jobsAfterRestart = await predictions.resumeUnfinished();
        if (jobsAfterRestart.resumed + jobsAfterRestart.failed > 0) {
          logger.info('picked up unfinished predictions', jobsAfterRestart);
        }
        const runsAfterRestart = await agents.executions.resumeUnfinished();
        if (runsAfterRestart.resumed + runsAfterRestart.failed > 0) {
          logger.info('picked up unfinished agent executions', runsAfterRestart);
        }
        const evaluationsAfterRestart = await evaluations.service.resumeUnfinished();
        if (evaluationsAfterRestart.resumed > 0) {
          logger.info('picked up unfinished evaluations', evaluationsAfterRestart);
        }
      }
      return { ownerKey };
    },

    close: () =>
      // Every step runs even when an earlier one throws: queued debits are always written and the file closed.
      closeAll([
        { name: 'executions', run: () => agents.executions.cancelAll() },
        { name: 'jobs', run: () => jobs.close(config.server.shutdownGraceMs) },
        { name: 'webhooks', run: () => webhooks.close() },
        { name: 'execution webhooks', run: () => executionWebhooks.close() },
        { name: 'engine', run: () => engine.close() },
        { name: 'embedded engines', run: () => (options.engine ? kit.engine.close() : undefined) },
        { name: 'checkpoints', run: () => checkpoints?.stop() },
        { name: 'wallet debits', run: () => (db.open ? wallets.flush() : undefined) },
        { name: 'database', run: () => (db.open ? db.close() : undefined) },
      ]),
  };
}

/** The first serving upstream chat model of the models file drafts prompt-created skills; none: the template. */
function draftingModel(catalogue: ModelCatalogue, upstream: UpstreamClient): DraftingModel | null {
  const model = catalogue.list('chat').find((m) => m.engine.kind === 'upstream' && m.serving);
  const target = model ? catalogue.upstreamTarget(model) : null;
  if (!model || !target) return null;
  return {
    id: model.id,
    async complete(messages) {
      const reply = await upstream.chat(target, { model: target.model, messages, temperature: 0 });
      const choices = reply.choices as Array<{ message?: { content?: unknown } }> | undefined;
      const content = choices?.[0]?.message?.content;
      if (typeof content !== 'string') throw new Error('the model answered without text');
      return content;
    },
  };
}

/** How embedders ask the engines to read a document or image: defaults only. */
const PLAIN_READ: PredictionRequest = {
  jsonSchema: null,
  detail: 'auto',
  confidence: false,
  grounding: false,
  gqlStmt: null,
  documentDpi: null,
  videoFps: null,
  videoMaxFrames: null,
  pageIndices: null,
  metadata: {},
  batch: false,
};

const EMPTY_PAGE: LayoutPage = { index: 0, width: 0, height: 0, source: 'ocr', lines: [], status: 'ok' };

function packageVersion(): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pkg = require('../package.json') as { version: string };
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
