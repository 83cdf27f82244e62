/**
 * Writes a skill (SKILL.md + schema.json) from a prompt, for `POST /v1/skills/create` with `prompt` or `session_id`.
 *
 * With a chat model on an upstream server in the models file, that model drafts the name, description,
 * instructions and schema (a caller's `json_schema` always wins). Without one — or when its answer is unusable — a
 * deterministic template writes the prompt as the instructions and derives the schema from the fields the prompt
 * names. The description says which of the two wrote the skill.
 */
import { stringify as toYaml } from 'yaml';
import { schemaProblem } from '../../lib/json-schema';
import type { Logger } from '../../lib/logger';
import { SKILL_NAME_MAX, SKILL_NAME_PATTERN } from './skill-parser';

/** What a skill draft holds before it is packed. */
export interface SkillDraft {
  name: string;
  description: string;
  instructions: string;
  schema: Record<string, unknown>;
  /** Who wrote it: an upstream model (by id) or the template. */
  author: { kind: 'upstream'; model: string } | { kind: 'template' };
}

export interface AuthoringRequest {
  prompt: string;
  jsonSchema: Record<string, unknown> | null;
  /**
   * What the task is about in a few words when the prompt is long (a chat's title, for a skill made from a chat):
   * the default name and description come from it instead of the prompt's first words.
   */
  subject?: string | null;
  name: string | null;
  description: string | null;
}

/** An upstream chat call: the model's reply text for the messages, or an error. */
export interface DraftingModel {
  id: string;
  complete(messages: Array<{ role: 'system' | 'user'; content: string }>): Promise<string>;
}

export interface SkillAuthor {
  draft(request: AuthoringRequest): Promise<SkillDraft>;
}

const SYSTEM_PROMPT = [
  'You write skills for a document and media extraction service.',
  'A skill has a name (lower-case letters, digits and hyphens), a one-sentence description, Markdown instructions',
  'for an extraction agent, and a JSON Schema (type object) of the structured response.',
  'Answer with one JSON object only: {"name": string, "description": string, "instructions": string,',
  '"json_schema": object}. Use snake_case property names and a description on every property.',
].join(' ');

/** The files of a drafted skill: SKILL.md (front matter + instructions) and schema.json. */
export function draftFiles(draft: SkillDraft): Array<{ path: string; data: Buffer }> {
  const frontMatter = toYaml({ name: draft.name, description: draft.description }, { lineWidth: 0 }).trim();
  return [
    { path: 'SKILL.md', data: Buffer.from(`---\n${frontMatter}\n---\n\n${draft.instructions}\n`) },
    { path: 'schema.json', data: Buffer.from(`${JSON.stringify(draft.schema, null, 2)}\n`) },
  ];
}

export function createSkillAuthor(deps: { model: DraftingModel | null; logger: Logger }): SkillAuthor {
  return {
    async draft(request) {
      if (deps.model) {
        try {
          const reply = await deps.model.complete([
            { role: 'system', content: SYSTEM_PROMPT },
            { role: 'user', content: userMessage(request) },
          ]);
          const drafted = readModelDraft(reply, request, deps.model.id);
          if (drafted) return drafted;
          deps.logger.warn('skill drafting model gave an unusable answer; using the template', {
            model: deps.model.id,
          });
        } catch (error) {
          deps.logger.warn('skill drafting model failed; using the template', {
            model: deps.model.id,
            error: String(error),
          });
        }
      }
      return templateDraft(request);
    },
  };
}

function userMessage(request: AuthoringRequest): string {
  const parts = [`Task:\n${request.prompt}`];
  if (request.jsonSchema) parts.push(`Use exactly this JSON Schema:\n${JSON.stringify(request.jsonSchema)}`);
  if (request.name) parts.push(`Name the skill '${request.name}'.`);
  return parts.join('\n\n');
}

function readModelDraft(reply: string, request: AuthoringRequest, model: string): SkillDraft | null {
  const json = /\{[\s\S]*\}/.exec(reply)?.[0];
  if (!json) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null) return null;
  const draft = parsed as Record<string, unknown>;
  const schema = request.jsonSchema ?? draft.json_schema;
  if (typeof draft.instructions !== 'string' || draft.instructions.trim() === '' || !isUsableSchema(schema)) {
    return null;
  }
  const name = request.name ?? (typeof draft.name === 'string' ? slug(draft.name) : '');
  const described = typeof draft.description === 'string' ? draft.description.trim() : '';
  return {
    name: name || defaultName(request),
    description: withAuthor(request.description ?? (described || defaultDescription(request)), `model ${model}`),
    instructions: draft.instructions.trim(),
    schema,
    author: { kind: 'upstream', model },
  };
}

/** The deterministic draft: the prompt as instructions, the schema given or derived from the prompt's field names. */
export function templateDraft(request: AuthoringRequest): SkillDraft {
  const schema = request.jsonSchema ?? deriveSchema(request.prompt);
  const fields = Object.keys((schema.properties as Record<string, unknown> | undefined) ?? {});
  const instructions = [
    `# ${titleOf(request.name ?? defaultName(request))}`,
    '',
    '## Task',
    '',
    request.prompt.trim(),
    '',
    '## Output',
    '',
    'Return one JSON object that validates against `schema.json`'.concat(
      fields.length > 0 ? ` (fields: ${fields.map((f) => `\`${f}\``).join(', ')}).` : '.',
    ),
    'Use `null` for anything the input does not show; never invent values.',
  ].join('\n');
  return {
    name: request.name ?? defaultName(request),
    description: withAuthor(request.description ?? defaultDescription(request), 'the deterministic template'),
    instructions,
    schema,
    author: { kind: 'template' },
  };
}

const NUMBER_WORDS = /(total|amount|price|cost|sum|tax|fee|balance|count|quantity|qty|number_of|rate|score|age)/;
const DATE_WORDS = /(date|day|deadline|expir|birth|issued|due)/;
const LIST_WORDS = /(items|lines|entries|transactions|participants|attendees|action_items|decisions|topics|tags)$/;

/**
 * Derives an object schema from the fields a prompt names ("extract the vendor, total and date"): the list after
 * extract/fields/including/such as/with, split on commas and "and"; types guessed from the words.
 */
export function deriveSchema(prompt: string): Record<string, unknown> {
  const match = /(?:extract|fields?|including|such as|capture|return|get|list)\s*:?\s+(?:the\s+)?([^.;\n]+)/i.exec(
    prompt,
  );
  const names = (match?.[1] ?? '')
    .split(/,|\band\b|\bor\b|&/i)
    .map((part) => part.split(/\s+(?:from|in|on|for|across|within|of each|per)\s+/i)[0] ?? '')
    .map((part) => snake(part.replace(/^\s*(the|a|an|its|their)\s+/i, '')))
    .filter((name) => name.length > 0 && name.length <= 40 && name.split('_').length <= 4);
  const unique = [...new Set(names)];
  if (unique.length === 0) {
    return {
      type: 'object',
      properties: { result: { type: ['string', 'null'], description: prompt.trim().slice(0, 300) } },
      required: ['result'],
    };
  }
  const properties = Object.fromEntries(unique.map((name) => [name, propertyFor(name)]));
  return { type: 'object', properties, required: unique };
}

function propertyFor(name: string): Record<string, unknown> {
  const description = name.replace(/_/g, ' ');
  if (LIST_WORDS.test(name)) return { type: 'array', items: { type: 'string' }, description };
  if (DATE_WORDS.test(name)) return { type: ['string', 'null'], format: 'date', description };
  if (NUMBER_WORDS.test(name)) return { type: ['number', 'null'], description };
  return { type: ['string', 'null'], description };
}

function isUsableSchema(value: unknown): value is Record<string, unknown> {
  return schemaProblem(value) === null;
}

const snake = (text: string): string =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');

function slug(text: string): string {
  const candidate = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, SKILL_NAME_MAX)
    .replace(/-+$/, '');
  return SKILL_NAME_PATTERN.test(candidate) ? candidate : '';
}

const STOP_WORDS = new Set(
  ['a', 'an', 'the', 'of', 'from', 'and', 'or', 'to', 'in', 'on', 'for', 'with', 'all'].concat([
    'extract',
    'get',
    'read',
    'parse',
    'find',
    'return',
    'pull',
    'please',
  ]),
);

function slugFromPrompt(prompt: string): string {
  const words = prompt
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w && !STOP_WORDS.has(w))
    .slice(0, 5);
  return slug(words.join('-')) || 'prompt-skill';
}

/** The name a skill gets when none is given: from its subject (a chat's title) if any, else from the prompt. */
function defaultName(request: AuthoringRequest): string {
  return slugFromPrompt(request.subject ?? request.prompt);
}

function defaultDescription(request: AuthoringRequest): string {
  const subject = request.subject?.replace(/\s+/g, ' ').trim();
  if (subject) return `Performs the task worked through in the chat "${subject.replace(/"/g, "'")}".`;
  return firstSentence(request.prompt);
}

function titleOf(name: string): string {
  return name
    .split('-')
    .map((w) => (w ? w[0]?.toUpperCase() + w.slice(1) : w))
    .join(' ');
}

function firstSentence(prompt: string): string {
  const sentence = /^[^.!?\n]+[.!?]?/.exec(prompt.trim())?.[0] ?? prompt.trim();
  return sentence.slice(0, 200).trim() || 'A skill written from a prompt.';
}

function withAuthor(description: string, author: string): string {
  return `${description.trim().slice(0, 900)} (written from a prompt by ${author})`;
}
