/**
 * Prompts: one per built-in skill (the `skills/` folder Prism seeds as public skills), so a user can pick "receipt"
 * or "invoice" in their client's prompt menu. The arguments are the skill's declared inputs (`metadata.inputs` in
 * the front matter: image, document, audio, video), each an optional URL, data URL or file id; the text is the
 * skill's SKILL.md instructions followed by how to run it with `execute_agent`. The folder is read once, when the
 * server factory is built; a folder that cannot be read or parsed is skipped, as the seeding skips it.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  McpError,
  type GetPromptResult,
  type ListPromptsResult,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Logger } from '../lib/logger';
import { parseSkillMd } from '../services/skills/skill-parser';

const INPUT_KINDS = ['image', 'document', 'audio', 'video'] as const;
/** Longest prompt argument: a URL or a file id, not a document's bytes. */
export const MAX_PROMPT_ARGUMENT = 8 * 1024;
type InputKind = (typeof INPUT_KINDS)[number];

/** One built-in skill as a prompt. */
export interface SkillPrompt {
  name: string;
  description: string;
  /** The declared input kinds, in the order the front matter lists them. */
  inputs: InputKind[];
  /** The Markdown body of SKILL.md. */
  instructions: string;
}

/** Reads `dir/<skill>/SKILL.md` for every folder; unreadable or malformed folders are logged and left out. */
export function loadSkillPrompts(dir: string, logger: Logger): SkillPrompt[] {
  let folders: string[];
  try {
    folders = fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
      .map((e) => e.name)
      .sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const prompts: SkillPrompt[] = [];
  for (const folder of folders) {
    try {
      const { frontMatter, instructions } = parseSkillMd(fs.readFileSync(path.join(dir, folder, 'SKILL.md')));
      const metadata = frontMatter.metadata as { inputs?: unknown } | undefined;
      const declared = Array.isArray(metadata?.inputs) ? metadata.inputs : [];
      prompts.push({
        name: typeof frontMatter.name === 'string' ? frontMatter.name : folder,
        description: typeof frontMatter.description === 'string' ? frontMatter.description : '',
        inputs: INPUT_KINDS.filter((kind) => declared.includes(kind)).sort(
          (a, b) => declared.indexOf(a) - declared.indexOf(b),
        ),
        instructions,
      });
    } catch (error) {
      logger.warn('built-in skill has no usable prompt', {
        folder,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
  return prompts;
}

/** The user message of a skill prompt for the given argument values. */
export function skillPromptText(skill: SkillPrompt, args: Partial<Record<InputKind, string>>): string {
  const given = skill.inputs.filter((kind) => args[kind]?.trim());
  const inputs = Object.fromEntries(given.map((kind) => [kind, inputValue(args[kind]?.trim() ?? '')]));
  const call = {
    inputs,
    config: { skills: [{ type: 'skill_reference', skill_name: skill.name, skill_version: 'latest' }] },
  };
  const lines = [
    `Use the Prism skill "${skill.name}": ${skill.description}`,
    '',
    '<skill_instructions>',
    skill.instructions,
    '</skill_instructions>',
    '',
  ];
  if (given.length > 0) {
    lines.push('Inputs:', ...given.map((kind) => `- ${kind}: ${args[kind]?.trim() ?? ''}`), '');
  } else if (skill.inputs.length > 0) {
    lines.push(`Ask me for the ${skill.inputs.join(' or ')} to read if I have not given one.`, '');
  }
  lines.push(
    'Run it with the execute_agent tool, with these arguments (add inputs as they come):',
    JSON.stringify(call),
    'The answer is the execution’s response, which follows the skill’s schema.json. Report any field that stays null.',
  );
  return lines.join('\n');
}

/** A file id stays a file reference; URLs and data URLs are passed as they are. */
function inputValue(value: string): unknown {
  return /^(https?:|data:)/i.test(value) ? value : { type: 'input_file', file_id: value };
}

/**
 * The prompt handlers, prepared once per factory. The SDK's `registerPrompt` builds a zod object per prompt on
 * every server (about 1 ms for these six, on every request of the stateless server), so the list answer and the
 * argument schemas are built here once and each server only gets two request handlers.
 */
export interface SkillPromptHandlers {
  list(): ListPromptsResult;
  /** @throws McpError InvalidParams for an unknown prompt or arguments that are not strings of its inputs. */
  get(name: string, args: Record<string, unknown> | undefined): GetPromptResult;
}

export function skillPromptHandlers(prompts: readonly SkillPrompt[]): SkillPromptHandlers {
  const byName = new Map(
    prompts.map((skill) => [
      skill.name,
      { skill, args: z.object(Object.fromEntries(skill.inputs.map((kind) => [kind, z.string().optional()]))) },
    ]),
  );
  const listed: ListPromptsResult = {
    prompts: prompts.map((skill) => ({
      name: skill.name,
      title: `Skill: ${skill.name}`,
      description: skill.description,
      arguments: skill.inputs.map((kind) => ({
        name: kind,
        description: `The ${kind} to read: an http(s) URL, a data: URL, or a file id from upload_file`,
        required: false,
      })),
    })),
  };
  return {
    list: () => listed,
    get(name, args) {
      const prompt = byName.get(name);
      if (!prompt) throw new McpError(ErrorCode.InvalidParams, `Prompt ${name} not found`);
      // The text echoes the arguments: bounded, so a prompt's answer stays small.
      for (const [arg, value] of Object.entries(args ?? {})) {
        if (typeof value === 'string' && value.length > MAX_PROMPT_ARGUMENT) {
          throw new McpError(
            ErrorCode.InvalidParams,
            `Argument ${arg.slice(0, 40)} of prompt ${name} is longer than ${MAX_PROMPT_ARGUMENT} characters: ` +
              'pass a URL or a file id from upload_file, not the bytes',
          );
        }
      }
      const parsed = prompt.args.safeParse(args ?? {});
      if (!parsed.success) {
        // One readable issue, not zod's JSON dump of all of them.
        const [issue] = parsed.error.issues;
        const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
        throw new McpError(
          ErrorCode.InvalidParams,
          `Invalid arguments for prompt ${name}: ${where}${issue?.message ?? 'not valid'}`,
        );
      }
      return {
        description: prompt.skill.description,
        messages: [{ role: 'user', content: { type: 'text', text: skillPromptText(prompt.skill, parsed.data) } }],
      };
    },
  };
}

/** Serves the prompts on `server` (prompts/list and prompts/get). */
export function registerSkillPrompts(server: McpServer, handlers: SkillPromptHandlers): void {
  server.server.registerCapabilities({ prompts: {} });
  server.server.setRequestHandler(ListPromptsRequestSchema, () => handlers.list());
  server.server.setRequestHandler(GetPromptRequestSchema, (request) =>
    handlers.get(request.params.name, request.params.arguments),
  );
}
