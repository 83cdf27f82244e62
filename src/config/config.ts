/**
 * Configuration, read once from the environment and validated with zod.
 *
 * This is the only module that reads `process.env`. `loadConfig(env)` is pure so tests pass a literal object;
 * it fails fast with every bad variable named at once, so an operator fixes them in one go.
 */
import path from 'node:path';
import { z } from 'zod';
import { parseS3BlobUrl, type S3Location } from '../blobs/s3-location';
import type { Tier } from '../domain/account';
import { DEFAULT_WORK_LIMITS, parseWorkLimits, type WorkLimits } from '../lib/work-budget';
import { parseSecretsKey } from '../lib/secret-box';

const MIB = 1024 * 1024;

const booleanFlag = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'])
  .transform((v) => ['1', 'true', 'yes', 'on'].includes(v));

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
/** `kind=count` pairs over the defaults (src/lib/work-budget.ts names the kinds). */
const workLimits = (defaults: WorkLimits) =>
  z
    .string()
    .default('')
    .transform((value, ctx) => {
      try {
        return parseWorkLimits(value, defaults);
      } catch (error) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: (error as Error).message });
        return z.NEVER;
      }
    });

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  PRISM_DATA_DIR: z.string().min(1).default('./data'),
  PRISM_DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
  PRISM_DATABASE_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lower-case SQL identifier')
    .default('public'),
  PRISM_DATABASE_POOL_MAX: positiveInt(10),
  PRISM_DATABASE_MIGRATE: booleanFlag.default(true),
  PRISM_SINGLE_USER: booleanFlag.default(false),
  PRISM_MODELS_FILE: z.string().min(1).optional(),
  PRISM_PUBLIC_URL: z.url().optional(),
  PRISM_TRUST_PROXY: z
    .string()
    .regex(/^(true|false|\d+|[\w.:/,\s-]+)$/)
    .default('false'),
  PRISM_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  PRISM_MAX_JSON_BYTES: positiveInt(32 * MIB),
  PRISM_MAX_UPLOAD_BYTES: positiveInt(512 * MIB),
  PRISM_MAX_TRANSCRIPTION_BYTES: positiveInt(25 * MIB),
  PRISM_TRANSCRIPTION_PIECE_S: z.coerce.number().int().min(10).max(3600).default(600),
  PRISM_TRANSCRIPTION_PARALLEL: z.coerce.number().int().min(1).max(32).default(4),
  PRISM_MAX_JSON_DEPTH: z.coerce.number().int().min(8).max(512).default(64),
  PRISM_WORK_BUDGET_ANONYMOUS: workLimits(DEFAULT_WORK_LIMITS.anonymous),
  PRISM_WORK_BUDGET_KEYED: workLimits(DEFAULT_WORK_LIMITS.keyed),
  PRISM_STRUCTURE_WORKERS: z.coerce.number().int().min(0).max(64).default(1),
  PRISM_STRUCTURE_WORKER_HEAP_MB: z.coerce.number().int().min(16).max(4096).default(128),
  PRISM_STRUCTURE_WORKER_DEADLINE_MS: z.coerce.number().int().min(10).max(600_000).default(10_000),
  PRISM_GUEST_UPLOADS_PER_DAY: z.coerce.number().int().min(0).default(50),
  PRISM_GUEST_UPLOAD_MB_PER_DAY: z.coerce.number().min(0).default(100),
  PRISM_GUEST_FILE_TTL_H: z.coerce.number().min(0).max(8760).default(24),
  PRISM_LEDGER_RETENTION_DAYS: z.coerce.number().int().min(0).max(36500).default(0),
  PRISM_LEDGER_ARCHIVE: booleanFlag.default(true),
  PRISM_EXTRACTION_USD_PER_PAGE: z.coerce.number().min(0).max(100).default(0),
  PRISM_URL_TTL_S: positiveInt(3600),
  PRISM_SHUTDOWN_GRACE_S: positiveInt(10),
  PRISM_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  PRISM_CLI_PROGRESS_MS: positiveInt(1000),
  PRISM_ALLOW_PRIVATE_URLS: booleanFlag.default(false),
  PRISM_FETCH_MAX_BYTES: positiveInt(100 * MIB),
  PRISM_FETCH_TIMEOUT_S: positiveInt(30),
  PRISM_JOB_CONCURRENCY: positiveInt(1),
  PRISM_JOB_LEASE_S: z.coerce.number().min(0.2).max(3600).default(30),
  PRISM_REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\/./, 'must be a redis:// or rediss:// URL')
    .optional(),
  PRISM_REDIS_PREFIX: z
    .string()
    .regex(/^[\w:.-]{1,64}$/, 'must be 1-64 letters, digits, or _ : . -')
    .default('prism:'),
  PRISM_BLOB_URL: z
    .string()
    .superRefine((value, ctx) => {
      try {
        parseS3BlobUrl(value);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
      }
    })
    .optional(),
  AWS_ACCESS_KEY_ID: z.string().min(1).optional(),
  AWS_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  AWS_SESSION_TOKEN: z.string().min(1).optional(),
  AWS_REGION: z.string().min(1).optional(),
  PRISM_OCR_WORKERS: z.coerce.number().int().min(0).default(0),
  PRISM_OCR_ENGINE: z.enum(['tesseract', 'ppocr', 'ensemble']).default('ppocr'),
  PRISM_OCR_THREADS: z.coerce.number().int().min(0).default(0),
  PRISM_OCR_DECODER: z.enum(['greedy', 'beam']).default('greedy'),
  PRISM_OCR_HEAD: z.enum(['shipped', 'receipts']).default('shipped'),
  PRISM_EXTRACT_UPSTREAM_MODEL: z.string().min(1).optional(),
  PRISM_DOCUMENT_MAX_PAGES: positiveInt(500),
  PRISM_WEBHOOK_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  PRISM_WEBHOOK_TIMEOUT_S: positiveInt(30),
  PRISM_WEBHOOK_ATTEMPTS: positiveInt(5),
  PRISM_WEBHOOK_BACKOFF_MS: positiveInt(2000),
  PRISM_GATEWAY_MAX_IN_FLIGHT: positiveInt(512),
  PRISM_GATEWAY_LOCAL_IN_FLIGHT: positiveInt(4),
  PRISM_GATEWAY_MAX_QUEUE: z.coerce.number().int().min(0).default(256),
  PRISM_UPSTREAM_RETRIES: z.coerce.number().int().min(0).max(5).default(1),
  PRISM_RATE_LIMIT_PER_MINUTE: positiveInt(60),
  PRISM_RATE_LIMIT_PER_HOUR: positiveInt(1000),
  PRISM_RATE_LIMIT_TIERS: z
    .string()
    .regex(
      /^\s*((anonymous|free|pro|enterprise)=\d+\/\d+\s*(,\s*|$))*$/,
      'must be tier=PER_MINUTE/PER_HOUR pairs, comma-separated (tiers: anonymous, free, pro, enterprise)',
    )
    .default(''),
  PRISM_CORS_ORIGINS: z.string().default(''),
  PRISM_GUEST_DAILY_CAP_USD: z.coerce.number().positive().default(0.5),
  PRISM_MIN_CHARGE_USD: z.coerce.number().positive().default(0.001),
  PRISM_OWNER_CREDITS_USD: z.coerce.number().min(0).default(100),
  PRISM_WALLET_FLUSH_MS: z.coerce.number().int().min(0).max(10_000).default(10),
  PRISM_WAL_CHECKPOINT_MS: z.coerce.number().int().min(0).max(600_000).default(1000),
  PRISM_MCP_MAX_JSON_BYTES: positiveInt(8 * MIB),
  PRISM_MCP_ALLOWED_HOSTS: z.string().min(1).optional(),
  PRISM_MCP_OAUTH: booleanFlag.default(true),
  PRISM_MCP_TOOLSETS: z.string().default('extraction,files,run'),
  PRISM_MCP_CALLS_PER_MINUTE: z
    .string()
    .default('anonymous=60,free=60,pro=600,enterprise=6000')
    .transform((value, ctx) => {
      const limits = { anonymous: 60, free: 60, pro: 600, enterprise: 6000 };
      for (const pair of value
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean)) {
        const [tier = '', count = ''] = pair.split('=').map((p) => p.trim());
        if (!(tier in limits) || !/^\d+$/.test(count)) {
          ctx.addIssue({
            code: 'custom',
            message: `expected tier=count pairs (anonymous, free, pro, enterprise; 0 = no limit), got '${pair}'`,
          });
          return z.NEVER;
        }
        limits[tier as keyof typeof limits] = Number(count);
      }
      return limits;
    }),
  PRISM_MCP_OWNER_UNLIMITED: booleanFlag.default(true),
  PRISM_MCP_HEADERLESS: z.enum(['challenge', 'anonymous']).default('challenge'),
  PRISM_MCP_ACCESS_TOKEN_TTL_S: z.coerce.number().int().min(1).max(86_400).default(3600),
  PRISM_MCP_REFRESH_TOKEN_TTL_S: positiveInt(30 * 24 * 3600),
  PRISM_AGENT_MAX_STEPS: z.coerce.number().int().min(1).max(200).default(24),
  PRISM_AGENT_DEADLINE_S: positiveInt(600),
  PRISM_AGENT_PAUSE_TTL_S: positiveInt(24 * 3600),
  PRISM_SECRETS_KEY: z
    .string()
    .refine((v) => parseSecretsKey(v) !== null, 'must be 64 hex digits or the base64 of 32 bytes')
    .optional(),
  PRISM_AGENT_MCP_TIMEOUT_S: z.coerce.number().positive().max(600).default(30),
  PRISM_AGENT_MCP_MAX_BYTES: positiveInt(4 * MIB),
  PRISM_AGENT_MCP_MAX_CALLS: positiveInt(50),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url().optional(),
  OTEL_EXPORTER_OTLP_HEADERS: z.string().optional(),
  OTEL_SERVICE_NAME: z.string().min(1).default('prism'),
  PRISM_OTEL_BATCH_MS: positiveInt(2000),
  PRISM_DECISION_FRAME_BYTES: positiveInt(8 * 1024 * 1024),
  PRISM_DECISION_IDLE_S: z.coerce.number().positive().default(60),
  PRISM_DECISION_BUFFER_BYTES: positiveInt(1024 * 1024),
  PRISM_DECISION_CALLER_STREAMS: positiveInt(6),
  PRISM_DECISION_STREAMS: positiveInt(24),
  PRISM_DECISION_PER_MINUTE: positiveInt(6000),
  PRISM_DECISION_PER_HOUR: positiveInt(120_000),
  PRISM_DECISION_MIN_CHARGE_USD: z.coerce.number().positive().default(0.0001),
  PRISM_DECISION_UPSTREAM_MODEL: z.string().min(1).optional(),
  PRISM_MEDIA_MEMORY_MB: z.coerce.number().int().min(0).default(2048),
  PRISM_DOCUMENT_DEADLINE_S: z.coerce.number().min(0).default(600),
  PRISM_SKILL_MAX_ENTRIES: positiveInt(1000),
  PRISM_SKILL_MAX_ENTRY_BYTES: positiveInt(10 * MIB),
  PRISM_SKILL_MAX_TOTAL_BYTES: positiveInt(50 * MIB),
  PRISM_SKILL_MAX_RATIO: positiveInt(100),
  PRISM_SKILLS_DIR: z.string().min(1).optional(),
  PRISM_EVAL_MODEL: z.string().min(1).optional(),
  PRISM_EVAL_MAX_ITEMS: z.coerce.number().int().min(1).max(100_000).default(10_000),
  FFMPEG_PATH: z.string().min(1).optional(),
  FFPROBE_PATH: z.string().min(1).optional(),
});

/** Typed, nested configuration built from the environment. */
/** The environment as the schema parsed it. */
type Env = z.infer<typeof envSchema>;

export interface Config {
  server: {
    port: number;
    host: string;
    publicUrl: string | undefined;
    /** express `trust proxy`: false, true, a hop count, or a list of trusted subnets. */
    trustProxy: boolean | number | string;
    shutdownGraceMs: number;
    /** Browser origins allowed to call the API (CORS): exact origins, or `*` for any; empty: none. */
    corsOrigins: string[];
  };
  data: {
    dir: string;
    dbPath: string;
    blobDir: string;
    ownerKeyPath: string;
    secretPath: string;
    /** How often the server checkpoints SQLite's WAL on a worker thread (0: inside commits, SQLite's default). */
    walCheckpointMs: number;
  };
  /** Where records live: the SQLite file above (default) or PostgreSQL (src/backend builds either). */
  database: {
    /** postgres://… when set; undefined keeps SQLite in the data folder. */
    url: string | undefined;
    /** PostgreSQL schema holding Prism's tables (and, beside it, `<schema>_checkpoints` for LangGraph). */
    schema: string;
    poolMax: number;
    /** Apply pending migrations at start (under an advisory lock); off: `prism db migrate` does it. */
    migrate: boolean;
  };
  auth: { singleUser: boolean; secret: string | undefined };
  limits: {
    maxJsonBytes: number;
    /** Deepest array/object nesting a JSON body may have (checked on the raw text, before parsing). */
    maxJsonDepth: number;
    maxUploadBytes: number;
    /** Largest audio file `POST /v1/compat/audio/transcriptions` takes (OpenAI's limit, 25 MiB, by default). */
    maxTranscriptionBytes: number;
    urlTtlSeconds: number;
    /** The per-request work budget (src/lib/work-budget.ts), for callers without and with a key. */
    workBudget: { anonymous: WorkLimits; keyed: WorkLimits };
    /**
     * The structure worker pool (src/lib/structure-pool.ts) large schemas compile on: threads (0: compile
     * in-line), each thread's heap cap and each job's deadline.
     */
    structureWorkers: { size: number; heapMb: number; deadlineMs: number };
  };
  /** Anonymous (guest) uploads on the gateway, per client address per UTC day. */
  guestUploads: {
    perDay: number;
    bytesPerDay: number;
    /** How long a guest's file lives before the sweep deletes it (0: forever). */
    ttlMs: number;
  };
  /**
   * Ledger retention (src/backend/ledger-retention.ts): per-call wallet and spend ledger rows older than
   * `retentionDays` (0: kept forever) are rolled up into exact per-day totals; the per-call rows are moved to the
   * archive tables (`archive`) or deleted.
   */
  ledger: { retentionDays: number; archive: boolean };
  /** Price of one extraction credit (a page, an image, a started minute), micro-dollars; 0: extraction is free. */
  extraction: { microsPerCredit: number };
  /**
   * How recordings are sent to the models file's transcription model from extraction and the agent tools: pieces
   * of at most `pieceS` seconds (cut at a pause, else with 1 s sent twice), `parallel` of them at once.
   */
  transcription: { pieceS: number; parallel: number };
  /** The model catalogue file and the environment snapshot upstream keys are looked up in (by variable name). */
  models: { file: string | undefined; env: Readonly<Record<string, string | undefined>> };
  gateway: {
    /** Upstream calls running at once per replica. */
    maxInFlight: number;
    /** Calls on the embedded engines running at once per replica. */
    localInFlight: number;
    maxQueue: number;
    upstreamRetries: number;
    perMinute: number;
    perHour: number;
    /** Tiers with budgets of their own (PRISM_RATE_LIMIT_TIERS); the others get perMinute/perHour. */
    tierLimits: Record<string, { perMinute: number; perHour: number }>;
    guestDailyCapMicros: number;
    minimumChargeMicros: number;
    ownerCreditsMicros: number;
    /** Longest a gateway debit waits in memory before it is written (0: every debit is its own transaction). */
    walletFlushMs: number;
  };
  /** The decision stream and `POST /v1/compat/decisions`. */
  decisions: {
    maxFrameBytes: number;
    idleTimeoutMs: number;
    /** Frames are dropped while more than this many bytes of events wait unsent on a socket. */
    maxBufferedBytes: number;
    /** Decision streams one caller (key, or client address) may have open at once (429 before the upgrade). */
    streamsPerCaller: number;
    /** Decision streams the server holds open at once. */
    maxStreams: number;
    perMinute: number;
    perHour: number;
    minimumChargeMicros: number;
    /** The upstream vision model for questions no local measure answers (default: the first the catalogue lists). */
    upstreamModel: string | undefined;
  };
  /** Fetching caller-supplied URLs (inputs) and calling callback URLs. */
  fetch: { allowPrivate: boolean; maxBytes: number; timeoutMs: number };
  jobs: {
    concurrency: number;
    /**
     * With Redis: how long a replica's claim on a job lasts without renewal; a job whose replica died runs again
     * elsewhere after about one to two leases.
     */
    leaseMs: number;
  };
  /** Redis (`PRISM_REDIS_URL`): shared rate limits, guest spend, cancellation signals and the job queue. */
  redis: {
    url: string | undefined;
    /** Prefix of every key and channel, so several installs (or test runs) can share one Redis. */
    prefix: string;
  };
  /** Where bytes live: the local folder (`data.blobDir`, default) or an S3-compatible bucket. */
  blobs: {
    s3: (S3Location & { credentials: AwsCredentials | undefined }) | undefined;
    /**
     * Static credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (also for `prism db copy --blobs s3://…`);
     * unset: the SDK's default chain.
     */
    awsCredentials: AwsCredentials | undefined;
  };
  /** Agent executions: most planner steps per run, and the total deadline of one run. */
  /** `pauseTtlMs`: how long a paused run waits for a person before it fails (PRISM_AGENT_PAUSE_TTL_S). */
  agents: { maxSteps: number; deadlineMs: number; pauseTtlMs: number };
  /**
   * Remote MCP servers as agent tools (docs/agents.md): the key that seals their secrets (PRISM_SECRETS_KEY; none:
   * servers with a key cannot be registered), the default limit of one call, the cap on one answer, and the most
   * calls to remote servers one run makes.
   */
  agentMcp: { secretsKey: Buffer | undefined; timeoutMs: number; maxBytes: number; maxCallsPerRun: number };
  /**
   * OpenTelemetry traces (docs/operations.md): on when an OTLP endpoint is set (`tracesUrl` is then the full traces
   * URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`).
   */
  tracing: {
    tracesUrl: string | undefined;
    serviceName: string;
    headers: Record<string, string>;
    batchDelayMs: number;
  };
  engines: {
    ocrWorkers: number;
    /** Which OCR reads images (`tesseract`, `ppocr` or `ensemble`). */
    ocrEngine: 'tesseract' | 'ppocr' | 'ensemble';
    /** onnxruntime threads for one PP-OCR read; 0 means one per core. */
    ocrThreads: number;
    /** How PP-OCR's output becomes text: greedy CTC or the beam search with a language model. */
    ocrDecoder: 'greedy' | 'beam';
    /** PP-OCR's output layer: as shipped, or its Latin columns refitted on receipt lines (ppocr-head.ts). */
    ocrHead: 'shipped' | 'receipts';
    documentMaxPages: number;
    ffmpegPath: string | undefined;
    ffprobePath: string | undefined;
    /** Address-space limit for every ffmpeg/ffprobe run, in MiB (0: none). */
    mediaMemoryMb: number;
    /** How long one document request may start reading pages, ms (0: no limit). */
    documentDeadlineMs: number;
    /** The models-file model that assists `prism-1`'s schema extraction (none: the embedded extractor alone). */
    extractUpstreamModel: string | undefined;
  };
  webhooks: { secret: string | undefined; secretPath: string; timeoutMs: number; attempts: number; backoffMs: number };
  mcp: {
    /** JSON body limit of `/mcp`: base64 media rides in tool arguments, so it is larger than the API's. */
    maxJsonBytes: number;
    /**
     * Host names `/mcp` answers for, checked on `Host` and on `Origin` when a browser sends one (DNS rebinding).
     * Loopback names and the host of PRISM_PUBLIC_URL are always allowed; `*` turns the check off.
     */
    allowedHosts: string[];
    /** Toolsets a connection gets when it names none (`a,b` or `all`; docs/mcp-clients.md). */
    toolsets: string;
    /** Tool calls a minute per caller on `/mcp`, by tier (0: no limit); in single-user mode the owner's are unlimited. */
    toolCalls: { perMinute: Record<'anonymous' | Tier, number>; ownerUnlimited: boolean };
    /** Prism as the OAuth 2.1 authorization server of `/mcp` (docs/mcp-clients.md). */
    oauth: {
      enabled: boolean;
      /** A request with no Authorization header: a 401 challenge (clients then offer OAuth) or anonymous. */
      headerless: 'challenge' | 'anonymous';
      accessTokenTtlS: number;
      refreshTokenTtlS: number;
    };
  };
  /** Skill bundles: the unpacking limits every zip is checked against, and the folder of built-in skills. */
  skills: {
    maxEntries: number;
    maxEntryBytes: number;
    maxTotalBytes: number;
    /** Largest uncompressed/compressed size ratio of one entry. */
    maxRatio: number;
    builtinDir: string;
  };
  /**
   * Evaluations: the upstream chat model for llm_judge, inferring corrections and rewriting instructions (unset: the
   * first serving upstream chat model of the models file, if any), and the most items one run reads.
   */
  evaluations: { model: string | undefined; maxItems: number };
  log: { level: 'debug' | 'info' | 'warn' | 'error' | 'silent' };
  /** The CLI: how often `prism extract` reports progress on stderr (once an extraction has run that long). */
  cli: { progressMs: number };
}

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string | undefined;
}

/** Raised when the environment is invalid; `problems` names every bad variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid environment variables:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/** `pro=600/10000, enterprise=6000/100000` (already checked by the schema) as budgets by tier. */
function parseTierLimits(text: string): Record<string, { perMinute: number; perHour: number }> {
  const limits: Record<string, { perMinute: number; perHour: number }> = {};
  for (const pair of text.split(',')) {
    const match = /^\s*(\w+)=(\d+)\/(\d+)\s*$/.exec(pair);
    if (match) limits[match[1]!] = { perMinute: Number(match[2]), perHour: Number(match[3]) };
  }
  return limits;
}

/**
 * Parse the environment into a {@link Config}.
 * @throws ConfigError naming every invalid variable.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const known = Object.fromEntries(Object.keys(envSchema.shape).map((k) => [k, emptyToUndefined(env[k])]));
  const parsed = envSchema.safeParse(known);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  const e = parsed.data;
  const dir = path.resolve(e.PRISM_DATA_DIR);
  return {
    ...hostSections(e, dir),
    ...gatewaySections(e, env),
    ...workSections(e, dir),
  };
}

/** The server, its data folder and database, sign-in and the request limits. */
function hostSections(
  e: Env,
  dir: string,
): Pick<Config, 'server' | 'data' | 'database' | 'auth' | 'limits' | 'guestUploads' | 'ledger'> {
  return {
    server: {
      port: e.PORT,
      host: e.HOST,
      publicUrl: e.PRISM_PUBLIC_URL?.replace(/\/+$/, ''),
      trustProxy: parseTrustProxy(e.PRISM_TRUST_PROXY),
      shutdownGraceMs: e.PRISM_SHUTDOWN_GRACE_S * 1000,
      corsOrigins: e.PRISM_CORS_ORIGINS.split(',')
        .map((o) => o.trim().replace(/\/+$/, ''))
        .filter((o) => o !== ''),
    },
    data: {
      dir,
      dbPath: path.join(dir, 'prism.db'),
      blobDir: path.join(dir, 'blobs'),
      ownerKeyPath: path.join(dir, 'owner.key'),
      secretPath: path.join(dir, 'secret.key'),
      walCheckpointMs: e.PRISM_WAL_CHECKPOINT_MS,
    },
    database: {
      url: e.PRISM_DATABASE_URL,
      schema: e.PRISM_DATABASE_SCHEMA,
      poolMax: e.PRISM_DATABASE_POOL_MAX,
      migrate: e.PRISM_DATABASE_MIGRATE,
    },
    auth: { singleUser: e.PRISM_SINGLE_USER, secret: e.PRISM_SECRET },
    limits: {
      maxJsonBytes: e.PRISM_MAX_JSON_BYTES,
      maxJsonDepth: e.PRISM_MAX_JSON_DEPTH,
      maxUploadBytes: e.PRISM_MAX_UPLOAD_BYTES,
      maxTranscriptionBytes: e.PRISM_MAX_TRANSCRIPTION_BYTES,
      urlTtlSeconds: e.PRISM_URL_TTL_S,
      workBudget: { anonymous: e.PRISM_WORK_BUDGET_ANONYMOUS, keyed: e.PRISM_WORK_BUDGET_KEYED },
      structureWorkers: {
        size: e.PRISM_STRUCTURE_WORKERS,
        heapMb: e.PRISM_STRUCTURE_WORKER_HEAP_MB,
        deadlineMs: e.PRISM_STRUCTURE_WORKER_DEADLINE_MS,
      },
    },
    guestUploads: {
      perDay: e.PRISM_GUEST_UPLOADS_PER_DAY,
      bytesPerDay: Math.round(e.PRISM_GUEST_UPLOAD_MB_PER_DAY * MIB),
      ttlMs: Math.round(e.PRISM_GUEST_FILE_TTL_H * 3_600_000),
    },
    ledger: { retentionDays: e.PRISM_LEDGER_RETENTION_DAYS, archive: e.PRISM_LEDGER_ARCHIVE },
  };
}

/** The models file and prices, the gateway's and decisions' limits, fetches, the job queue and the shared backends. */
function gatewaySections(
  e: Env,
  env: Record<string, string | undefined>,
): Pick<
  Config,
  'extraction' | 'transcription' | 'models' | 'gateway' | 'decisions' | 'fetch' | 'jobs' | 'redis' | 'blobs'
> {
  return {
    extraction: { microsPerCredit: e.PRISM_EXTRACTION_USD_PER_PAGE * 1_000_000 },
    transcription: { pieceS: e.PRISM_TRANSCRIPTION_PIECE_S, parallel: e.PRISM_TRANSCRIPTION_PARALLEL },
    models: {
      file: e.PRISM_MODELS_FILE ? path.resolve(e.PRISM_MODELS_FILE) : undefined,
      env: Object.freeze({ ...env }),
    },
    gateway: {
      maxInFlight: e.PRISM_GATEWAY_MAX_IN_FLIGHT,
      localInFlight: e.PRISM_GATEWAY_LOCAL_IN_FLIGHT,
      maxQueue: e.PRISM_GATEWAY_MAX_QUEUE,
      upstreamRetries: e.PRISM_UPSTREAM_RETRIES,
      perMinute: e.PRISM_RATE_LIMIT_PER_MINUTE,
      perHour: e.PRISM_RATE_LIMIT_PER_HOUR,
      tierLimits: parseTierLimits(e.PRISM_RATE_LIMIT_TIERS),
      guestDailyCapMicros: Math.round(e.PRISM_GUEST_DAILY_CAP_USD * 1_000_000),
      minimumChargeMicros: Math.round(e.PRISM_MIN_CHARGE_USD * 1_000_000),
      ownerCreditsMicros: Math.round(e.PRISM_OWNER_CREDITS_USD * 1_000_000),
      walletFlushMs: e.PRISM_WALLET_FLUSH_MS,
    },
    decisions: {
      maxFrameBytes: e.PRISM_DECISION_FRAME_BYTES,
      idleTimeoutMs: Math.round(e.PRISM_DECISION_IDLE_S * 1000),
      maxBufferedBytes: e.PRISM_DECISION_BUFFER_BYTES,
      streamsPerCaller: e.PRISM_DECISION_CALLER_STREAMS,
      maxStreams: e.PRISM_DECISION_STREAMS,
      perMinute: e.PRISM_DECISION_PER_MINUTE,
      perHour: e.PRISM_DECISION_PER_HOUR,
      minimumChargeMicros: Math.round(e.PRISM_DECISION_MIN_CHARGE_USD * 1_000_000),
      upstreamModel: e.PRISM_DECISION_UPSTREAM_MODEL,
    },
    fetch: {
      allowPrivate: e.PRISM_ALLOW_PRIVATE_URLS,
      maxBytes: e.PRISM_FETCH_MAX_BYTES,
      timeoutMs: e.PRISM_FETCH_TIMEOUT_S * 1000,
    },
    jobs: { concurrency: e.PRISM_JOB_CONCURRENCY, leaseMs: Math.round(e.PRISM_JOB_LEASE_S * 1000) },
    redis: { url: e.PRISM_REDIS_URL, prefix: e.PRISM_REDIS_PREFIX },
    blobs: {
      s3: e.PRISM_BLOB_URL
        ? { ...parseS3BlobUrl(e.PRISM_BLOB_URL, e.AWS_REGION), credentials: awsCredentials(e) }
        : undefined,
      awsCredentials: awsCredentials(e),
    },
  };
}

/** Agents, tracing, the engines, webhooks, MCP, skills, evaluations, logging and the CLI. */
function workSections(
  e: Env,
  dir: string,
): Pick<
  Config,
  'agents' | 'tracing' | 'agentMcp' | 'engines' | 'webhooks' | 'mcp' | 'skills' | 'evaluations' | 'log' | 'cli'
> {
  return {
    agents: {
      maxSteps: e.PRISM_AGENT_MAX_STEPS,
      deadlineMs: e.PRISM_AGENT_DEADLINE_S * 1000,
      pauseTtlMs: e.PRISM_AGENT_PAUSE_TTL_S * 1000,
    },
    tracing: {
      tracesUrl:
        e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
        (e.OTEL_EXPORTER_OTLP_ENDPOINT ? `${e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces` : undefined),
      serviceName: e.OTEL_SERVICE_NAME,
      headers: otlpHeaders(e.OTEL_EXPORTER_OTLP_HEADERS),
      batchDelayMs: e.PRISM_OTEL_BATCH_MS,
    },
    agentMcp: {
      secretsKey: e.PRISM_SECRETS_KEY ? (parseSecretsKey(e.PRISM_SECRETS_KEY) ?? undefined) : undefined,
      timeoutMs: Math.round(e.PRISM_AGENT_MCP_TIMEOUT_S * 1000),
      maxBytes: e.PRISM_AGENT_MCP_MAX_BYTES,
      maxCallsPerRun: e.PRISM_AGENT_MCP_MAX_CALLS,
    },
    engines: {
      ocrWorkers: e.PRISM_OCR_WORKERS,
      ocrEngine: e.PRISM_OCR_ENGINE,
      ocrThreads: e.PRISM_OCR_THREADS,
      ocrDecoder: e.PRISM_OCR_DECODER,
      ocrHead: e.PRISM_OCR_HEAD,
      documentMaxPages: e.PRISM_DOCUMENT_MAX_PAGES,
      ffmpegPath: e.FFMPEG_PATH,
      ffprobePath: e.FFPROBE_PATH,
      mediaMemoryMb: e.PRISM_MEDIA_MEMORY_MB,
      documentDeadlineMs: Math.round(e.PRISM_DOCUMENT_DEADLINE_S * 1000),
      extractUpstreamModel: e.PRISM_EXTRACT_UPSTREAM_MODEL,
    },
    webhooks: {
      secret: e.PRISM_WEBHOOK_SECRET,
      secretPath: path.join(dir, 'webhook.key'),
      timeoutMs: e.PRISM_WEBHOOK_TIMEOUT_S * 1000,
      attempts: e.PRISM_WEBHOOK_ATTEMPTS,
      backoffMs: e.PRISM_WEBHOOK_BACKOFF_MS,
    },
    mcp: {
      maxJsonBytes: e.PRISM_MCP_MAX_JSON_BYTES,
      allowedHosts: mcpAllowedHosts(e),
      toolsets: e.PRISM_MCP_TOOLSETS,
      toolCalls: { perMinute: e.PRISM_MCP_CALLS_PER_MINUTE, ownerUnlimited: e.PRISM_MCP_OWNER_UNLIMITED },
      oauth: {
        enabled: e.PRISM_MCP_OAUTH,
        headerless: e.PRISM_MCP_HEADERLESS,
        accessTokenTtlS: e.PRISM_MCP_ACCESS_TOKEN_TTL_S,
        refreshTokenTtlS: e.PRISM_MCP_REFRESH_TOKEN_TTL_S,
      },
    },
    skills: {
      maxEntries: e.PRISM_SKILL_MAX_ENTRIES,
      maxEntryBytes: e.PRISM_SKILL_MAX_ENTRY_BYTES,
      maxTotalBytes: e.PRISM_SKILL_MAX_TOTAL_BYTES,
      maxRatio: e.PRISM_SKILL_MAX_RATIO,
      builtinDir: path.resolve(e.PRISM_SKILLS_DIR ?? path.join(__dirname, '..', '..', 'skills')),
    },
    evaluations: { model: e.PRISM_EVAL_MODEL, maxItems: e.PRISM_EVAL_MAX_ITEMS },
    log: { level: e.PRISM_LOG_LEVEL },
    cli: { progressMs: e.PRISM_CLI_PROGRESS_MS },
  };
}

function awsCredentials(e: Env): AwsCredentials | undefined {
  if (!e.AWS_ACCESS_KEY_ID || !e.AWS_SECRET_ACCESS_KEY) return undefined;
  return {
    accessKeyId: e.AWS_ACCESS_KEY_ID,
    secretAccessKey: e.AWS_SECRET_ACCESS_KEY,
    sessionToken: e.AWS_SESSION_TOKEN,
  };
}

const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

function mcpAllowedHosts(e: { PRISM_MCP_ALLOWED_HOSTS?: string | undefined; PRISM_PUBLIC_URL?: string | undefined }) {
  const listed = (e.PRISM_MCP_ALLOWED_HOSTS ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  const publicHost = e.PRISM_PUBLIC_URL ? [new URL(e.PRISM_PUBLIC_URL).hostname.toLowerCase()] : [];
  return [...new Set([...LOOPBACK_HOSTS, ...publicHost, ...listed])];
}

function parseTrustProxy(value: string): boolean | number | string {
  if (value === 'true' || value === 'false') return value === 'true';
  return /^\d+$/.test(value) ? Number(value) : value;
}

/** An empty variable (`PORT=`) means "use the default", as shells and compose files often leave them. */
function emptyToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

/** OTEL_EXPORTER_OTLP_HEADERS (`key=value,key2=value2`, values URL-encoded) as headers. */
function otlpHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const cut = pair.indexOf('=');
    if (cut <= 0) continue;
    headers[pair.slice(0, cut).trim()] = decodeURIComponent(pair.slice(cut + 1).trim());
  }
  return headers;
}

/**
 * The configuration of a one-shot CLI command (keys, credits, skills, extract, models check): as loadConfig, but the
 * log says only errors unless PRISM_LOG_LEVEL asks for more, so a command's output is its own lines, not start-up's
 * JSON (the bundled-ffmpeg warning and the skills seeding belong in the server's log).
 */
export function loadCommandConfig(env: Record<string, string | undefined> = process.env): Config {
  return loadConfig({ ...env, PRISM_LOG_LEVEL: env['PRISM_LOG_LEVEL'] || 'error' });
}
