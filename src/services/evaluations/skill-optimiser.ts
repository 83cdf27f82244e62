/**
 * `optimize`: applies the optimiser to a skill and saves the result as a new version of the same name through the
 * skills service. The base is the named skill's latest version (its other bundle files are carried over), or, for a
 * hub-domain source without a skill yet, the domain's schema and prompt under the name the caller gives
 * (`metadata.base_domain` keeps the engines treating inputs as that domain).
 *
 * Without an upstream model the result is deterministic: the same corrections give the same bundle. With one (and
 * `use_model`), the model also rewrites the instructions above the cited cases; if its answer is unusable the
 * deterministic text is kept and the response says so.
 */
import { stringify as toYaml } from 'yaml';
import type { Principal } from '../../domain/account';
import { BadRequestError, NotFoundError } from '../../domain/errors';
import type { EvaluationSourceType } from '../../domain/evaluation';
import type { SkillRecord } from '../../domain/skill';
import type { Logger } from '../../lib/logger';
import { isUuid } from '../../lib/uuid';
import type { HubService } from '../hub/hub.service';
import { zipFiles, type PackedFile } from '../skills/skill-pack';
import { checkSkillName } from '../skills/skill-view';
import type { SkillsService } from '../skills/skills.service';
import { EVALUATION_MODEL_SETTING, type EvaluationModel } from './model';
import { optimiseSkill, type CitedCase, type Correction, type SchemaChange } from './correction-rewrite';

export interface OptimiseRequest {
  evaluationId: string | null;
  sourceType: EvaluationSourceType | null;
  sourceId: string | null;
  skillId: string | null;
  skillName: string | null;
  inferCorrections: boolean;
  /** Let the upstream model (when configured) rewrite the instructions. */
  useModel: boolean;
}

export interface OptimiseResult {
  skill: SkillRecord;
  previous: SkillRecord | null;
  mode: 'deterministic' | 'model';
  note: string;
  reviewedItems: number;
  correctedItems: number;
  changes: SchemaChange[];
  cases: CitedCase[];
}

const SECTION_HEADING = '## Corrections from reviewed feedback';

interface Base {
  name: string;
  record: SkillRecord | null;
  frontMatter: Record<string, unknown>;
  instructions: string;
  schema: Record<string, unknown>;
  files: PackedFile[];
}

export function createSkillOptimiser(deps: {
  skills: SkillsService;
  hub: HubService;
  model: EvaluationModel | null;
  logger: Logger;
}) {
  async function target(
    principal: Principal,
    request: OptimiseRequest & { source: { type: EvaluationSourceType; id: string } },
  ): Promise<{ name: string; record: SkillRecord | null }> {
    if (request.skillId) {
      const record = await deps.skills.lookup(
        principal,
        isUuid(request.skillId) ? { id: request.skillId } : { name: request.skillId },
      );
      return { name: record.name, record };
    }
    const name = request.skillName ?? (request.source.type === 'skill' ? request.source.id : null);
    if (!name) {
      throw new BadRequestError(
        'Name the skill to write (`skill_id` or `skill_name`): the source is not a skill.',
        null,
        'skill_name',
      );
    }
    try {
      return { name, record: await deps.skills.lookup(principal, { name }) };
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      return { name: checkSkillName(name), record: null };
    }
  }

  async function baseOf(
    principal: Principal,
    name: string,
    record: SkillRecord | null,
    source: { type: EvaluationSourceType; id: string },
  ): Promise<Base> {
    if (record) {
      const parsed = await deps.skills.resolve(principal, { kind: 'id', id: record.id, version: 'latest' });
      const files: PackedFile[] = [];
      for (const f of parsed.files) {
        if (f.path === 'SKILL.md' || f.path === 'schema.json') continue;
        files.push({ path: f.path, data: await parsed.readFile(f.path) });
      }
      const baseDomain = (parsed.frontMatter.metadata as { base_domain?: unknown } | undefined)?.base_domain;
      const domain = typeof baseDomain === 'string' ? deps.hub.find(baseDomain) : null;
      return {
        name,
        record,
        frontMatter: parsed.frontMatter,
        instructions: parsed.instructions,
        schema: parsed.schema ?? domain?.jsonSchema ?? { type: 'object', properties: {} },
        files,
      };
    }
    const domain = source.type === 'request_domain' ? deps.hub.find(source.id) : null;
    return {
      name,
      record: null,
      frontMatter: {
        name,
        description: domain
          ? `${domain.name} extraction tuned from reviewed feedback`
          : 'Extraction tuned from reviewed feedback',
        ...(domain ? { metadata: { base_domain: domain.name } } : {}),
      },
      instructions: domain?.prompt ?? '',
      schema: domain?.jsonSchema ?? { type: 'object', properties: {} },
      files: [],
    };
  }

  async function rewrite(instructions: string, section: string): Promise<string | null> {
    if (!deps.model) return null;
    try {
      const reply = await deps.model.complete([
        {
          role: 'system',
          content:
            'You improve the instructions of an extraction skill. Rewrite them so the reviewed cases below come out ' +
            'right. Answer with the new Markdown instructions only.',
        },
        { role: 'user', content: `Current instructions:\n${instructions || '(none)'}\n\n${section}` },
      ]);
      const text = reply.trim();
      return text.length >= 20 ? text : null;
    } catch (error) {
      deps.logger.warn('optimize: the model did not rewrite the instructions', { error: String(error) });
      return null;
    }
  }

  return {
    async optimise(
      principal: Principal,
      request: OptimiseRequest & { source: { type: EvaluationSourceType; id: string } },
      corrections: Correction[],
    ): Promise<OptimiseResult> {
      const { name, record } = await target(principal, request);
      if (corrections.length === 0) {
        throw new BadRequestError(
          'No feedback with corrections for this source: submit corrected `response` JSON (or notes with ' +
            '`infer_corrections`) on its predictions or executions first.',
          null,
          request.evaluationId ? 'evaluation_id' : 'source_id',
        );
      }
      const base = await baseOf(principal, name, record, request.source);
      const result = optimiseSkill(base.schema, corrections);
      if (result.cases.length === 0) {
        throw new BadRequestError(
          'Every reviewed value already matches the responses: nothing to optimize.',
          null,
          null,
        );
      }
      const kept = stripSection(base.instructions);
      const rewritten = request.useModel ? await rewrite(kept, result.casesSection) : null;
      const instructions = [rewritten ?? kept, result.casesSection].filter((t) => t.trim() !== '').join('\n\n');
      const frontMatter = toYaml({ ...base.frontMatter, name }, { lineWidth: 0 }).trim();
      const zip = await zipFiles([
        { path: 'SKILL.md', data: Buffer.from(`---\n${frontMatter}\n---\n\n${instructions}\n`) },
        { path: 'schema.json', data: Buffer.from(`${JSON.stringify(result.schema, null, 2)}\n`) },
        ...base.files,
      ]);
      const owned = record !== null && principal.kind === 'user' && record.orgId === principal.orgId;
      const skill = owned
        ? await deps.skills.update(principal, record.id, zip)
        : await deps.skills.createFromZip(principal, zip, { name, source: 'zip' });
      const mode = rewritten ? 'model' : 'deterministic';
      const note = rewritten
        ? `Schema tightened deterministically; instructions rewritten by model ${deps.model?.id ?? ''} above the cited cases.`
        : `Deterministic: no LLM was used (${
            deps.model ? 'the model gave no usable instructions' : `${EVALUATION_MODEL_SETTING} is not set`
          }). The schema was tightened and the corrected cases appended to the instructions.`;
      return {
        skill,
        previous: record,
        mode,
        note,
        reviewedItems: corrections.length,
        correctedItems: result.correctedItems,
        changes: result.changes,
        cases: result.cases,
      };
    },
  };
}

/** The instructions without an earlier optimize's cases section (each optimize writes a fresh one). */
function stripSection(instructions: string): string {
  const at = instructions.indexOf(SECTION_HEADING);
  return (at < 0 ? instructions : instructions.slice(0, at)).trim();
}
