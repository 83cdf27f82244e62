/**
 * The predictions service's contract: what it needs (PredictionsServiceDeps) and what it offers
 * (PredictionsService). Its use cases (create-prediction.ts, prediction-run.ts, prediction-resume.ts) and their
 * callers import it from here; predictions.service.ts composes them.
 */
import type { Principal } from '../../domain/account';
import type { Prediction } from '../../domain/prediction';
import type { SkillResolver } from '../../domain/skill';
import type { BlobStore } from '../../blobs/types';
import type { CancelSignal } from '../../lib/cancel';
import type { KeyedMutex } from '../../lib/keyed-mutex';
import type { JobDelivery } from '../../jobs/job-queue';
import type { Logger } from '../../lib/logger';
import type { PredictionStore } from '../../stores/types';
import type { ExtractionEngine } from '../../engines/extraction-engine';
import type { HubService } from '../hub/hub.service';
import type { InputResolverDeps } from '../inputs/resolve-input';
import type { ExtractionWallet } from './extraction-billing';
import type { GenerateCommand } from './generate-command';
import type { SkillRunner } from './skill-runner';
import type { KeyModelCheck } from '../admin/key-model-check';
import type { SignalBus } from '../../signals/signal-bus';

export interface PredictionsServiceDeps {
  store: PredictionStore;
  blobs: BlobStore;
  locks: KeyedMutex;
  hub: HubService;
  engine: ExtractionEngine;
  inputs: InputResolverDeps;
  /** Resolves `config.skills`; without it a request naming skills is refused. */
  skills?: SkillResolver;
  orgIdFor: (principal: Principal) => Promise<string>;
  /** Charges extraction by the credit (PRISM_EXTRACTION_USD_PER_PAGE); absent: extraction is free. */
  wallet?: ExtractionWallet | null;
  /** Runs requests whose skills call for the agent runtime; without it they take the extraction engine's path. */
  skillRunner?: SkillRunner | null;
  /** A key's allow-list of models (docs/admin.md), asked of the model a generate request names. */
  checkKeyModel?: KeyModelCheck;
  enqueue: (id: string) => void;
  /** Carries a cancel to the replica running the prediction (absent: a cancel reaches this replica's runs only). */
  signals?: SignalBus;
  onFinished: (prediction: Prediction) => void;
  logger: Logger;
}

export interface PredictionsService {
  /**
   * `onProgress` reports pages or frames done on long synchronous inputs (the CLI prints it). `signal` (synchronous
   * requests only; a batch request ignores it) cancels the work: the record ends `failed`, billed nothing, and
   * the call rejects with `WorkCancelledError`.
   */
  create(
    principal: Principal,
    command: GenerateCommand,
    options?: { onProgress?: (done: number, total: number) => void; signal?: CancelSignal },
  ): Promise<Prediction>;
  get(principal: Principal, id: string): Promise<Prediction>;
  /**
   * Cancels a prediction that has not finished: it ends `failed` saying it was cancelled, billed nothing
   * (prediction-cancel.ts). A running one is stopped at its next page or frame; the answer waits up to 10 s for it.
   * @throws NotFoundError, ConflictError `prediction_finished` (already ended) or `prediction_not_cancellable` (running
   * on the agent runtime).
   */
  cancel(principal: Principal, id: string): Promise<Prediction>;
  list(principal: Principal, page: { skip: number; limit: number }): Promise<Prediction[]>;
  /**
   * Runs one job by id (the job queue's handler). A redelivered job whose record says `running` lost its replica:
   * it is taken over (or given up once it has used its starts; a redelivery counts as a start).
   */
  runJob(id: string, delivery?: JobDelivery): Promise<void>;
  /**
   * After a restart: re-enqueue unfinished work, give up on work that keeps failing to finish. With a shared queue
   * (`takeOverRunning: false`) records another replica is running are left to it; the queue's leases hand them
   * over if that replica died.
   */
  resumeUnfinished(options?: { takeOverRunning?: boolean }): Promise<{ resumed: number; failed: number }>;
}
