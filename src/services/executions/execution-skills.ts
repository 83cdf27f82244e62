/**
 * Skills of an execution: the request's skill entries (stored references by id or name and version, or inline
 * base64 zips) turned into references that survive a restart (inline zips are kept as artifacts), and resolved
 * through the skills registry's SkillResolver when the run starts.
 */
import type { Principal } from '../../domain/account';
import { BadRequestError } from '../../domain/errors';
import type { ExecutionSkillRef } from '../../domain/execution';
import type { ParsedSkill, SkillResolver } from '../../domain/skill';
import type { RunSpec, SkillBrief } from '../../agents/agent-runtime';
import { isUuid } from '../../lib/uuid';
import type { ArtifactsService } from '../artifacts.service';

/** A skill entry as clients send it (spec "Skill entry" plus the SDKs' deprecated aliases). */
export interface SkillEntryWire {
  type?: string | null | undefined;
  skill_id?: string | null | undefined;
  skill_name?: string | null | undefined;
  skill_version?: string | number | null | undefined;
  version?: string | number | null | undefined;
  name?: string | null | undefined;
  description?: string | null | undefined;
  source?: { type?: string | undefined; media_type?: string | undefined; data?: string | undefined } | null | undefined;
  data?: string | null | undefined;
  bundle?: string | null | undefined;
}

export async function skillRefsOf(
  artifacts: Pick<ArtifactsService, 'write'>,
  principal: Principal,
  executionId: string,
  entries: SkillEntryWire[],
): Promise<ExecutionSkillRef[]> {
  const refs: ExecutionSkillRef[] = [];
  for (const [i, entry] of entries.entries()) {
    const param = `config.skills.${i}`;
    const zip = entry.source?.data ?? entry.data ?? entry.bundle ?? null;
    if (entry.type === 'inline' || (zip && !entry.skill_id && !entry.skill_name)) {
      if (!zip) throw new BadRequestError('An inline skill needs source.data (a base64 zip).', 'missing_input', param);
      const bytes = Buffer.from(zip, 'base64');
      if (bytes.length < 4 || bytes.readUInt32LE(0) !== 0x04034b50) {
        throw new BadRequestError(
          'The inline skill is not a base64-encoded zip.',
          'invalid_document',
          `${param}.source.data`,
        );
      }
      const stored = await artifacts.write(
        principal,
        { executionId },
        { kind: 'document', filename: `${entry.name ?? 'skill'}.zip`, mimeType: 'application/zip', bytes },
      );
      refs.push({
        kind: 'inline',
        artifactId: stored.objectId,
        name: entry.name ?? null,
        description: entry.description ?? null,
      });
      continue;
    }
    const version = String(entry.skill_version ?? entry.version ?? 'latest');
    const idOrName = entry.skill_id ?? entry.skill_name ?? entry.name;
    if (!idOrName) throw new BadRequestError('A skill reference needs skill_id (or a name).', 'missing_input', param);
    refs.push(isUuid(idOrName) ? { kind: 'id', id: idOrName, version } : { kind: 'name', name: idOrName, version });
  }
  return refs;
}

export async function resolveSkills(
  resolver: SkillResolver | null,
  artifacts: Pick<ArtifactsService, 'read'>,
  principal: Principal,
  refs: ExecutionSkillRef[],
): Promise<ParsedSkill[]> {
  if (refs.length === 0) return [];
  if (!resolver) {
    throw new BadRequestError('Skills are not available on this server (no skills registry).', null, 'config.skills');
  }
  const skills: ParsedSkill[] = [];
  for (const ref of refs) {
    if (ref.kind === 'inline') {
      const { bytes } = await artifacts.read(principal, { objectId: ref.artifactId });
      skills.push(
        await resolver.resolve(principal, { kind: 'inline', name: ref.name, description: ref.description, zip: bytes }),
      );
    } else {
      skills.push(await resolver.resolve(principal, ref));
    }
  }
  return skills;
}

/** What the agent loop tells the planner about each skill of a run: its name, description and instructions. */
/** The agent loop's limits, as the executions module is configured with them. */
export interface LoopLimits {
  maxSteps: number;
  deadlineMs: number;
}

/**
 * What executions, generate-with-skills and evaluation re-runs all hand the runtime besides their own task: the
 * skills' briefs and the configured limits, built in one place so a new limit or skill field reaches all three.
 */
export function loopRunSpec(
  skills: ParsedSkill[],
  limits: LoopLimits,
  run: Omit<RunSpec, 'skills' | 'maxSteps' | 'deadlineMs'>,
): RunSpec {
  return { ...run, skills: skillBriefs(skills), maxSteps: limits.maxSteps, deadlineMs: limits.deadlineMs };
}

function skillBriefs(skills: ParsedSkill[]): SkillBrief[] {
  return skills.map((s) => ({ name: s.record.name, description: s.record.description, instructions: s.instructions }));
}

/** The request's toolsets, else those the run's skills declare in prism.yaml, else none (every tool). */
export function toolsetsOf(requested: string[] | null, skills: ParsedSkill[]): string[] | null {
  if (requested && requested.length > 0) return requested;
  const declared = [...new Set(skills.flatMap((s) => s.config?.toolsets ?? []))];
  return declared.length > 0 ? declared : null;
}
