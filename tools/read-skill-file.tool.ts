/**
 * read_skill_file: the files of the skills enabled for this run (instructions, references, schemas), read on
 * demand so only names and descriptions sit in the prompt (progressive disclosure).
 */
import { defineTool, z } from '../src/agents/sdk';

const MAX_TEXT = 100_000;

export const readSkillFileTool = defineTool({
  name: 'read_skill_file',
  description:
    'Read a file of one of the skills enabled for this run (for example SKILL.md, schema.json or references/*.md). ' +
    'Without a path, lists the enabled skills and their files. Text files come back as text; other files only as ' +
    'their size.',
  inputSchema: z.object({
    skill: z.string().optional().describe('Skill name (or id); omit to list every enabled skill'),
    path: z.string().optional().describe('Path inside the skill bundle, e.g. references/fields.md'),
  }),
  outputSchema: z.object({
    skills: z.array(
      z.object({ name: z.string(), version: z.string(), description: z.string(), files: z.array(z.string()) }),
    ),
    file: z
      .object({ skill: z.string(), path: z.string(), size_bytes: z.number().int(), text: z.string().nullable() })
      .nullable(),
  }),
  annotations: { title: 'Read a skill file', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async handler({ skill, path }, ctx) {
    const skills = ctx.skills.list().map((s) => ({
      name: s.name,
      version: s.version,
      description: s.description,
      files: s.files.map((f) => f.path),
    }));
    if (!skill || !path) return { skills, file: null };
    const bytes = await ctx.skills.readFile(skill, path);
    const text = looksLikeText(bytes) ? bytes.toString('utf8').slice(0, MAX_TEXT) : null;
    return { skills, file: { skill, path, size_bytes: bytes.length, text } };
  },
});

function looksLikeText(bytes: Buffer): boolean {
  return !bytes.subarray(0, 4096).includes(0);
}
