/**
 * Skills as a dynamic domain (real-client-compat §3.4): a generate request with `config.skills` and no `domain`
 * extracts with the skills' instructions and schema, as the hosted platform does.
 *
 * The first skill with a `schema.json` gives the schema unless the request sends `config.json_schema`; the
 * instructions of every named skill guide the extraction; a skill whose front matter names a hub domain in
 * `metadata.base_domain` (audio.transcription, document.receipt, ...) lets the engines treat the input as that
 * domain. With a domain in the request, the domain wins and the skills are only recorded.
 */
import type { Principal } from '../../domain/account';
import { BadRequestError } from '../../domain/errors';
import type { ParsedSkill, SkillResolver } from '../../domain/skill';
import type { HubService } from '../hub/hub.service';
import type { GenerateCommand } from './generate-command';

export async function withSkills(
  resolver: SkillResolver | undefined,
  hub: HubService,
  principal: Principal,
  command: GenerateCommand,
): Promise<GenerateCommand> {
  const references = command.skills ?? [];
  if (references.length === 0) return command;
  if (!resolver) throw new BadRequestError('Skills are not available on this server.', null, 'config.skills');
  const skills: ParsedSkill[] = [];
  for (const reference of references) skills.push(await resolver.resolve(principal, reference));
  const recorded = skills.map((s) => ({ id: s.record.id, name: s.record.name, skillVersion: s.record.skillVersion }));
  if (command.domain) return { ...command, request: { ...command.request, skills: recorded } };

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
    ...command,
    domain: baseDomain,
    request: { ...command.request, jsonSchema, instructions: instructions || null, skills: recorded },
  };
}

function baseDomainOf(skill: ParsedSkill): string | null {
  const metadata = skill.frontMatter.metadata;
  if (typeof metadata !== 'object' || metadata === null) return null;
  const base = (metadata as Record<string, unknown>).base_domain;
  return typeof base === 'string' ? base : null;
}
