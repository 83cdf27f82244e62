/**
 * What the agents and executions services ask of persistence: named agents, execution records with compare-and-set
 * status changes (a job runner and a restart sweep can never both move one record), callback deliveries, and
 * compiled skill programs. Every tenant read takes the organisation id.
 */
import type {
  AgentRecord,
  Execution,
  ExecutionPause,
  ExecutionStep,
  ExecutionUsage,
  SkillProgram,
} from '../../domain/execution';
import type { Status } from '../../domain/prediction';
import type { WebhookDelivery } from './prediction';

export interface ExecutionUpdate {
  response?: Record<string, unknown> | null;
  usage?: ExecutionUsage;
  steps?: ExecutionStep[];
  executionMode?: Execution['executionMode'];
  errorMessage?: string | null;
  completedAt?: Date | null;
  attempts?: number;
  /** What a paused run waits for; null clears it (resumed, expired, cancelled). */
  pause?: ExecutionPause | null;
}

export interface ExecutionStore {
  insert(execution: Execution): Promise<Execution>;
  get(orgId: string, id: string): Promise<Execution | null>;
  /** Unscoped: for the job runner, which only ever holds ids it created. */
  getById(id: string): Promise<Execution | null>;
  /** Newest first. */
  list(orgId: string, page: { skip: number; limit: number }): Promise<Execution[]>;
  /**
   * Moves `id` to `to` only if its status is one of `from`; null when it was not.
   * @param claim when given, the record must also still have these `attempts` (the claim a worker took it with):
   *   a worker whose run another replica took over, after its lease ran out, then finishes nothing.
   */
  transition(
    id: string,
    from: readonly Status[],
    to: Status,
    update?: ExecutionUpdate,
    claim?: number,
  ): Promise<Execution | null>;
  /** Saves progress (steps, usage) of a running execution (with `claim`: still at those attempts), status unchanged. */
  saveProgress(id: string, update: Pick<ExecutionUpdate, 'steps' | 'usage'>, claim?: number): Promise<void>;
  /** pending, enqueued and running executions, oldest first (the restart sweep). */
  unfinished(): Promise<Execution[]>;
  /** Paused executions, oldest first (the expiry sweep). */
  paused(): Promise<Execution[]>;
  /** Marks running executions as alive now (their replica's heartbeat): sets updated_at, status unchanged. */
  touch(ids: readonly string[]): Promise<void>;
  /** Running executions not written (progress, heartbeat) since `before`, oldest first: their replica may be gone. */
  stalled(before: Date): Promise<Execution[]>;
  recordDelivery(delivery: Omit<WebhookDelivery, 'predictionId'> & { executionId: string }): Promise<void>;
  deliveries(executionId: string): Promise<(Omit<WebhookDelivery, 'predictionId'> & { executionId: string })[]>;
}

export interface AgentStore {
  /** @returns false when the organisation already has `<name>:<version>`. */
  insert(agent: AgentRecord): Promise<boolean>;
  get(orgId: string, id: string): Promise<AgentRecord | null>;
  /** `version` null = the newest version of that name. */
  findByName(orgId: string, name: string, version: string | null): Promise<AgentRecord | null>;
  findByPrompt(orgId: string, prompt: string): Promise<AgentRecord | null>;
  list(orgId: string): Promise<AgentRecord[]>;
}

export interface ProgramStore {
  get(skillId: string, skillVersion: string, signature: string): Promise<SkillProgram | null>;
  /** Inserts or replaces the program of that skill version and signature. */
  put(program: SkillProgram): Promise<void>;
}
