/**
 * Predictions: one record per generate request, with the spec's status enum and usage object.
 *
 * Status moves pending -> enqueued -> running -> completed | failed (a synchronous request goes pending -> running
 * directly). `canTransition` is the single place that says which moves are legal, so a store or a job never writes
 * an impossible history.
 */
import type { StoredSkillRef } from './skill';

export const PREDICTION_KINDS = ['image', 'document', 'video', 'audio', 'image_schema'] as const;
export type PredictionKind = (typeof PREDICTION_KINDS)[number];

export const STATUSES = ['pending', 'enqueued', 'running', 'completed', 'failed', 'paused'] as const;
export type Status = (typeof STATUSES)[number];

export type ElementType = 'image' | 'page' | 'video' | 'audio';

/** The prediction usage object: only these five fields, integers where the SDKs demand integers. */
export interface PredictionUsage {
  elements_processed: number | null;
  element_type: ElementType | null;
  credits_used: number | null;
  steps: number | null;
  message: string | null;
}

export const EMPTY_USAGE: PredictionUsage = {
  elements_processed: null,
  element_type: null,
  credits_used: null,
  steps: null,
  message: null,
};

/** An input the job reads, stored content-addressed in the blob store. */
export interface PredictionInput {
  sha256: string;
  contentType: string;
  filename: string | null;
}

/** What the caller asked for, normalised; stored with the record so a job can run (or resume) from it alone. */
export interface PredictionRequest {
  jsonSchema: Record<string, unknown> | null;
  detail: 'auto' | 'hi' | 'lo';
  confidence: boolean;
  grounding: boolean;
  gqlStmt: string | null;
  documentDpi: number | null;
  videoFps: number | null;
  videoMaxFrames: number | null;
  pageIndices: number[] | null;
  metadata: Record<string, unknown>;
  batch: boolean;
  /**
   * Propose a schema for the input instead of filling one (`/v1/document/schema`; `image_schema` records always
   * do). Absent on records stored before it existed, which read as false.
   */
  proposeSchema?: boolean;
  /**
   * Instructions of the skills a request named in `config.skills` (with no domain): they guide extraction the way a
   * domain's prompt does. Absent on requests without skills.
   */
  instructions?: string | null;
  /** The skill versions the request was resolved to, so a resumed job and the record say what ran. */
  skills?: Array<{ id: string; name: string; skillVersion: string }>;
  /**
   * Set when the request's skills call for the agent runtime (see services/predictions/skill-runner.ts): the agent
   * model that plans and the skills as references a job can resolve after a restart (pinned versions; inline zips
   * kept as artifacts of the prediction). Absent: the extraction engine runs the request.
   */
  agent?: { model: string; skills: StoredSkillRef[] } | null;
  /** Why skills that call for the runtime ran on the extraction engine instead (said in `usage.message`). */
  runtimeNote?: string | null;
}

/**
 * A request with every option at its default (no schema, auto detail, no confidence or grounding, every page and
 * frame, not batched): the one place the defaults are written; callers override what they set.
 */
export function defaultPredictionRequest(overrides: Partial<PredictionRequest> = {}): PredictionRequest {
  return {
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
    ...overrides,
  };
}

export interface Prediction {
  id: string;
  orgId: string;
  kind: PredictionKind;
  model: string;
  domain: string | null;
  status: Status;
  request: PredictionRequest;
  inputs: PredictionInput[];
  response: unknown;
  usage: PredictionUsage;
  errorMessage: string | null;
  callbackUrl: string | null;
  attempts: number;
  createdAt: Date;
  completedAt: Date | null;
}

const NEXT: Record<Status, readonly Status[]> = {
  pending: ['enqueued', 'running', 'failed'],
  enqueued: ['running', 'failed'],
  running: ['completed', 'failed', 'paused', 'enqueued'],
  paused: ['running', 'failed'],
  completed: [],
  failed: [],
};

/** Whether a record may move from `from` to `to` (`running -> enqueued` is a job resumed after a restart). */
export function canTransition(from: Status, to: Status): boolean {
  return NEXT[from].includes(to);
}

export const isTerminal = (status: Status): boolean => status === 'completed' || status === 'failed';

/** Model ids real clients send by default for the structured model, mapped to ours (the SDKs default to `vlm-1`). */
export const STRUCTURED_MODEL_ALIASES: Readonly<Record<string, string>> = { 'vlm-1': 'prism-1' };
