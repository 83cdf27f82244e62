/**
 * The port through which the generate endpoints run a request on the agent runtime, so the
 * predictions service never imports the runtime: the composition root binds it to the executions code
 * (services/executions/runtime-skill-runner.ts).
 *
 * WHEN the runtime runs a generate request: it names `config.skills`, sends no `domain`, and either one of its
 * skills declares `toolsets` or a `graph` in `prism.yaml`, or the request's `model` is an agent model
 * (`prism-orion-1`/`-2` and their variants). Every other skill-driven request keeps the extraction engine's direct
 * path (skill-domain.ts), which produces the same schema-guided extraction without a planning loop and keeps the
 * domains' own output shapes (transcriptions) that the runtime's tools do not build.
 *
 * One exception, so a built-in skill never gets worse: when the run would be planned by the deterministic planner
 * (no upstream model for the agent model), the request did not name an agent model, and the skills are based on a
 * transcription domain (`audio.transcription`, `video.transcription`), the direct path runs — the engines build that
 * transcription, while the deterministic planner could only fill the schema from frame OCR — and `usage.message`
 * says why the skill's graph was not followed.
 */
import type { Principal } from '../../domain/account';
import type { PredictionKind, PredictionUsage } from '../../domain/prediction';
import type { ParsedSkill, SkillReference, StoredSkillRef } from '../../domain/skill';
import type { ExtractionInput } from '../../engines/extraction-engine';

/** Agent model ids (the execute endpoint's enum): a generate request naming one always runs on the runtime. */
export const AGENT_MODEL_ID = /^prism-orion-[12](:(auto|fast|pro|lite))?$/;

/** Whether a generate request with these skills (and no domain) runs on the agent runtime; see the header. */
export function callsForRuntime(skills: readonly ParsedSkill[], requestModel: string): boolean {
  if (skills.length === 0) return false;
  if (AGENT_MODEL_ID.test(requestModel)) return true;
  return skills.some((s) => (s.config?.toolsets.length ?? 0) > 0 || (s.config?.graphStates.length ?? 0) > 0);
}

/** Base domains whose response the extraction engine builds itself (not by filling the schema). */
const ENGINE_SHAPED_DOMAIN = /^(audio|video)\.transcription/;

/**
 * Whether a request `callsForRuntime` accepted goes to the direct path after all (the exception in the header);
 * returns the note for `usage.message`, or null to run on the runtime.
 */
export function directPathNote(
  planner: { model: string; deterministic: boolean },
  requestModel: string,
  baseDomain: string | null,
): string | null {
  if (!planner.deterministic || AGENT_MODEL_ID.test(requestModel)) return null;
  if (!baseDomain || !ENGINE_SHAPED_DOMAIN.test(baseDomain)) return null;
  return (
    `The skill's toolsets and graph were not run: no language model is configured for ${planner.model}, and the ` +
    `extraction engine builds the ${baseDomain} response itself. Configure an upstream chat model with tool calling ` +
    `for the agent model in PRISM_MODELS_FILE (or send model: ${planner.model}) to run the skill on the agent runtime.`
  );
}

/**
 * Thrown by `run` when a shutdown stopped it: the record stays `running`, and the next start re-queues it and runs
 * it again (see PredictionsService.resumeUnfinished). Nothing is billed for the stopped run.
 */
export class SkillRunInterrupted extends Error {
  constructor() {
    super('The run was stopped by a shutdown; it runs again after the restart.');
    this.name = 'SkillRunInterrupted';
  }
}

/** Money held for one run between acceptance and its end (settled by the runner, given back on failure). */
export interface SkillRunHold {
  release(): void;
}

/** One prediction to run: its input, the schema and hints the extraction would use, the skills and the planner. */
export interface SkillRunJob {
  predictionId: string;
  orgId: string;
  kind: PredictionKind;
  input: ExtractionInput;
  schema: Record<string, unknown> | null;
  /** The hub domain the skills are based on (`metadata.base_domain`), a hint for filling the schema. */
  domain: string | null;
  /** The skills' instructions as the extraction engine would receive them. */
  instructions: string | null;
  skills: StoredSkillRef[];
  /** The agent model that plans (`prism-orion-1:auto`, ...). */
  model: string;
}

export interface SkillRunResult {
  response: Record<string, unknown>;
  usage: PredictionUsage;
}

export interface SkillRunner {
  /**
   * The agent model that plans a request — the request's model when it is an agent model, else the first skill's
   * `prism.yaml` model, else the default agent model — and whether the deterministic planner serves it.
   * @throws AppError 404 `model_not_found` when that model is not served.
   */
  planner(requestModel: string, skills: readonly ParsedSkill[]): { model: string; deterministic: boolean };
  /** References a job resolves to the same versions after a restart (inline zips stored as the prediction's). */
  persist(
    principal: Principal,
    predictionId: string,
    references: readonly SkillReference[],
    skills: readonly ParsedSkill[],
  ): Promise<StoredSkillRef[]>;
  /**
   * Holds the run's budget on the organisation's wallet, as an execution's (minimum charge at least), after the
   * asking key's budget and the organisation's (`keyId`, docs/admin.md).
   * @throws AppError 402 `insufficient_credits`, `key_budget_exceeded` or `org_budget_exceeded`.
   */
  reserve(orgId: string, model: string, keyId?: string | null): Promise<SkillRunHold>;
  /**
   * Runs the job (program replay when the planner model allows it and a verified program exists, else the agent
   * loop), settles `hold` (or debits directly when null: a job resumed after a restart) and returns the response
   * with the prediction usage. @throws AppError with a message for the caller when the run fails;
   * {@link SkillRunInterrupted} when a shutdown stopped it.
   */
  run(job: SkillRunJob, hold: SkillRunHold | null): Promise<SkillRunResult>;
  /** Stops running runs for a shutdown: each `run` rejects with {@link SkillRunInterrupted}. */
  cancelAll(): void;
}
