/**
 * `run_skill`: runs a stored or built-in skill by name over files, URLs or data, the one call an assistant needs to
 * use a skill (before it, a client had to know the `execute_agent` body: `config.skills: [{type:
 * "skill_reference", …}]`). It is that body, built here, so the run is an ordinary execution (REST, get_execution,
 * resume_execution and cancel_execution all see it) and its answer follows the skill's schema.json.
 */
import { z } from 'zod';
import { toExecuteCommand } from '../../wire/agents.schemas';
import type { ExecutionsService } from '../../services/executions/executions.types';
import { defineMcpTool, type McpTool } from '../mcp-tool';
import { executionOutput, withPauseNote } from './agents.mcp-tools';

/** Lean on purpose (it is in every default tools/list); the execution service bounds the inputs it is given. */
const runSkillInput = z.object({
  skill: z.string().min(1).max(200).describe('e.g. invoice, receipt'),
  version: z.string().min(1).optional().describe('Default latest'),
  file_ids: z.array(z.string()).optional(),
  urls: z.array(z.string()).optional().describe('https or data: URLs'),
  inputs: z.record(z.string(), z.unknown()).optional().describe('Named inputs or JSON data'),
  prompt: z.string().optional(),
  batch: z.boolean().optional().describe('Return at once; poll get_execution'),
});

export function runSkillTool(executions: ExecutionsService): McpTool {
  return defineMcpTool({
    name: 'run_skill',
    title: 'Run a skill',
    description:
      'Runs a skill by name over files, URLs or data; returns the execution (response follows the skill schema).',
    input: runSkillInput,
    output: executionOutput,
    // Stores and bills an execution; a repeat runs again; URLs and upstream models reach outside.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    needsAccount: true,
    async run(args, ctx) {
      const command = toExecuteCommand({
        inputs: args.inputs ?? null,
        file_ids: args.file_ids ?? null,
        urls: args.urls ?? null,
        batch: args.batch ?? null,
        config: {
          prompt: args.prompt ?? null,
          skills: [{ type: 'skill_reference', skill_name: args.skill, skill_version: args.version ?? 'latest' }],
        },
      });
      const execution = await executions.execute(ctx.principal, command, {
        signal: ctx.signal,
        onStep: (step, done) => ctx.progress(done, undefined, `${step.kind} ${step.name}`),
      });
      return withPauseNote(execution, ctx);
    },
  });
}
