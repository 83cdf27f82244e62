/**
 * Resources: every skill version's SKILL.md at `prism://skills/{skill_id}/{version}/SKILL.md`, so a client can put
 * a skill's instructions into a conversation without a tool call. The list holds the latest version of each skill
 * the caller can see (their organisation's plus the public ones; public only for anonymous callers); any older
 * version they can see is readable by its URI. Reads go through the skills service, so the scope is the API's.
 */
import type { Principal } from '../domain/account';
import { NotFoundError } from '../domain/errors';
import type { SkillRecord } from '../domain/skill';
import type { SkillsService } from '../services/skills/skills.service';
import { segmentMatcher, type ResourceKind } from './mcp-resource-handlers';

const MIME = 'text/markdown';
const TEMPLATE = 'prism://skills/{skill_id}/{version}/SKILL.md';

/** Most skills a resources/list answer names. */
const LIST_LIMIT = 1000;

export const skillMdUri = (skill: Pick<SkillRecord, 'id' | 'skillVersion'>): string =>
  `prism://skills/${encodeURIComponent(skill.id)}/${encodeURIComponent(skill.skillVersion)}/SKILL.md`;

export function skillResources(skills: SkillsService, principal: Principal): ResourceKind {
  return {
    template: {
      name: 'skill_md',
      uriTemplate: TEMPLATE,
      title: 'Skill instructions (SKILL.md)',
      description: 'The SKILL.md of one skill version: front matter and the instructions the agent follows',
      mimeType: MIME,
    },
    match: segmentMatcher(TEMPLATE),
    async list() {
      const latest = await skills.list(principal, {
        limit: LIST_LIMIT,
        offset: 0,
        orderBy: 'name',
        descending: false,
        grouped: true,
      });
      return latest.map((skill) => ({
        uri: skillMdUri(skill),
        name: `${skill.name}@${skill.skillVersion}`,
        title: `${skill.name} (SKILL.md)`,
        description: skill.description,
        mimeType: MIME,
      }));
    },
    async read(uri, { skill_id: id = '', version = '' }) {
      const record = await skills.get(principal, id);
      if (record.skillVersion !== version) throw new NotFoundError('skill', `${id}@${version}`);
      const view = await skills.resolve(principal, { kind: 'id', id: record.id, version });
      const text = (await view.readFile('SKILL.md')).toString('utf8');
      return { contents: [{ uri, mimeType: MIME, text }] };
    },
  };
}
