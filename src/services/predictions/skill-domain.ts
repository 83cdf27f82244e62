/**
 * Skills as a dynamic domain: a generate request with `config.skills` and no `domain`
 * extracts with the skills' instructions and schema, as the hosted platform does.
 *
 * The first skill with a `schema.json` gives the schema unless the request sends `config.json_schema`; the
 * instructions of every named skill guide the extraction; a skill whose front matter names a hub domain in
 * `metadata.base_domain` (audio.transcription, document.receipt, ...) lets the engines treat the input as that
 * domain. With a domain in the request, the domain wins and the skills are only recorded.
 *
 * The parsed skills come back too: the predictions service decides from them whether the request runs on the agent
 * runtime instead of the extraction engine (skill-runner.ts says when); either way the schema, the base domain and
 * the instructions are the ones set here.
 */
import type { Principal } from '../../domain/account';
import { AppError, BadRequestError } from '../../domain/errors';
import type { ParsedSkill, SkillReference, SkillResolver } from '../../domain/skill';
import type { HubService } from '../hub/hub.service';
import type { GenerateCommand } from './generate-command';

export async function withSkills(
  resolver: SkillResolver | undefined,
  hub: HubService,
  principal: Principal,
  command: GenerateCommand,
): Promise<{ command: GenerateCommand; skills: ParsedSkill[] }> {
  const references = command.skills ?? [];
  if (references.length === 0) return { command, skills: [] };
  if (!resolver) throw new BadRequestError('Skills are not available on this server.', null, 'config.skills');
  const skills: ParsedSkill[] = [];
  for (const reference of references) skills.push(await resolveOne(resolver, principal, reference));
  const recorded = skills.map((s) => ({ id: s.record.id, name: s.record.name, skillVersion: s.record.skillVersion }));
  if (command.domain) return { command: { ...command, request: { ...command.request, skills: recorded } }, skills };

  const withSchema = skills.find((s) => s.schema !== null);
  const baseDomain = skills.map(baseDomainOf).find((d) => d !== null && hub.find(d) !== undefined) ?? null;
  const jsonSchema = command.request.jsonSchema ?? withSchema?.schema ?? null;
  if (jsonSchema === null && baseDomain === null) {
    throw new BadRequestError(
      `Skill '${skills[0]?.record.name ?? ''}' has no schema.json; send config.json_schema or a domain.`,
      null,
      'config.skills',
    );
  }
  const instructions = skills
    .map((s) => `## Skill: ${s.record.name}\n\n${s.instructions}`)
    .join('\n\n')
    .trim();
  return {
    command: {
      ...command,
      domain: baseDomain,
      request: { ...command.request, jsonSchema, instructions: instructions || null, skills: recorded },
    },
    skills,
  };
}

/** Resolves one reference; a skill that is not found (or is another organisation's) names `config.skills`. */
async function resolveOne(
  resolver: SkillResolver,
  principal: Principal,
  reference: SkillReference,
): Promise<ParsedSkill> {
  try {
    return await resolver.resolve(principal, reference);
  } catch (error) {
    if (error instanceof AppError && error.code === 'skill_not_found' && error.param === null) {
      throw new AppError(error.status, {
        message: error.message,
        type: error.type,
        code: error.code,
        param: 'config.skills',
      });
    }
    throw error;
  }
}

function baseDomainOf(skill: ParsedSkill): string | null {
  const metadata = skill.frontMatter.metadata;
  if (typeof metadata !== 'object' || metadata === null) return null;
  const base = (metadata as Record<string, unknown>).base_domain;
  return typeof base === 'string' ? base : null;
}
