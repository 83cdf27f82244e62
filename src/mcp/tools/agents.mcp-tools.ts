/**
 * Agent tools: run an agent execution and read executions back, the MCP face of `POST /v1/agent/execute` and
 * `GET /v1/agent/executions[/{id}]`. `execute_agent` takes the REST execute body and waits for the run (unless
 * `batch`), sending a progress notification per plan or tool step; cancelling the call cancels the run, which then
 * ends `failed` with a message saying so. `structuredContent` is the REST execution record. A run that pauses for a
 * person (docs/agent-runs.md) comes back `paused` with what it waits for (`pause`) and a text block saying how to
 * go on: `resume_execution` with approve, reject, edit or answer; `cancel_execution` stops it.
 */
import { z } from 'zod';
import { STATUSES } from '../../domain/prediction';
import type { Execution } from '../../domain/execution';
import {
  executeBodySchema,
  resumeBodySchema,
  toExecuteCommand,
  toExecutionWire,
  toResumeDecision,
} from '../../wire/agents.schemas';
import { parseInput } from '../../wire/validation';
import type { ExecutionsService } from '../../services/executions/executions.types';
import { defineMcpTool, type McpCallContext, type McpTool } from '../mcp-tool';

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/*
 * Usage and steps are described, not spelled out: the execution record is the output of execute_agent, run_skill
 * and get_execution, all three in the default tools/list, and their field lists (the REST "Usage" and step objects,
 * docs/agent-runs.md) would cost ~1.9 KB of every conversation's context per tool.
 */
const executionUsage = z.record(z.string(), z.unknown()).describe('credits_used, cost_dollars, steps, … (as REST)');
const executionStep = z.record(z.string(), z.unknown());

/** What a paused run waits for (present only while it is paused; docs/agent-runs.md). */
const executionPause = z
  .record(z.string(), z.unknown())
  .describe('While paused: kind, tool_call, question, expires_at, resume');

export const executionOutput = z.object({
  id: z.string(),
  name: z.string(),
  model: z.string(),
  status: z.enum(STATUSES),
  execution_mode: z.enum(['agent', 'program']),
  response: z.record(z.string(), z.unknown()).nullable(),
  usage: executionUsage,
  steps: z.array(executionStep).describe('index, kind, name, arguments, error per step'),
  created_at: z.string(),
  completed_at: z.string().nullable(),
  pause: executionPause.optional(),
});

/** The record, and for a paused run a text block saying what it waits for and how to resume it. */
export function withPauseNote(execution: Execution, ctx: McpCallContext) {
  const pause = execution.pause;
  if (execution.status === 'paused' && pause) {
    const what =
      pause.kind === 'question'
        ? `an answer to the question "${pause.question ?? ''}"`
        : `approval of a call to '${pause.toolCall?.name ?? ''}' with arguments ${JSON.stringify(pause.toolCall?.arguments ?? {})}`;
    const how =
      pause.kind === 'question'
        ? `{"id": "${execution.id}", "action": "answer", "text": "<the answer>"}`
        : `{"id": "${execution.id}", "action": "approve"} (or "reject" with a "reason", or "edit" with new "arguments")`;
    ctx.attach({
      type: 'text',
      text:
        `The run is paused: it waits for ${what}. Ask the person, then call resume_execution with ${how}. ` +
        `It waits until ${pause.expiresAt}; cancel_execution stops it.`,
    });
  }
  return executionResult(execution);
}

/** The REST record as the output schema types it (usage and steps as plain objects). */
function executionResult(execution: Execution) {
  const wire = toExecutionWire(execution);
  const { pause, ...rest } = wire;
  return {
    ...rest,
    usage: { ...wire.usage },
    steps: wire.steps.map((step) => ({ ...step })),
    ...(pause ? { pause: { ...pause } } : {}),
  };
}

/**
 * What tools/list shows of the execute body: the fields a person uses. It is loose, so every other REST field
 * (`file_ids`, `urls`, `id`, `toolsets`, `config.mode`, `config.caching`, …) still goes through, and the call checks the
 * whole body against the REST schema (the same errors as POST /v1/agent/execute). The full schema costs 2.2 KB of
 * every conversation's context in the default list; this one a third of it.
 */
const executeInput = z
  .object({
    inputs: z.record(z.string(), z.unknown()).optional().describe('Named inputs: URLs, {file_id}, or data'),
    config: z
      .object({
        prompt: z.string().optional(),
        json_schema: z.record(z.string(), z.unknown()).optional(),
        skills: z
          .array(z.record(z.string(), z.unknown()))
          .optional()
          .describe('[{type: "skill_reference", skill_name, skill_version}]'),
        tools: z.array(z.string()).optional(),
        require_approval: z.array(z.string()).optional().describe('Tools whose calls wait for approval'),
      })
      .loose()
      .optional(),
    model: z.string().optional(),
    batch: z.boolean().optional().describe('Return at once; poll get_execution'),
  })
  .loose();

export function agentTools(executions: ExecutionsService): McpTool[] {
  return [
    defineMcpTool({
      name: 'execute_agent',
      title: 'Execute an agent',
      description:
        'Runs an agent over inputs by URL, file_id or data with config.prompt, ' +
        'json_schema, skills and tools. Waits and returns the execution (response is the answer), with progress; ' +
        'batch: true returns at once.',
      input: executeInput,
      output: executionOutput,
      // Stores an execution and bills it; a repeat runs again. Inputs by URL and upstream models reach outside.
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      needsAccount: true,
      async run(args, ctx) {
        const body = parseInput(executeBodySchema, args, 'body');
        const execution = await executions.execute(ctx.principal, toExecuteCommand(body), {
          signal: ctx.signal,
          onStep: (step, done) => ctx.progress(done, undefined, `${step.kind} ${step.name}`),
        });
        return withPauseNote(execution, ctx);
      },
    }),
    defineMcpTool({
      name: 'resume_execution',
      title: 'Resume a paused agent execution',
      description:
        'Continues an execution that is paused waiting for a person, as POST /v1/agent/executions/{id}/resume: ' +
        'action approve (run the tool call as planned), reject with a reason (the agent carries on without it), ' +
        'edit with new arguments (the call runs with them), or answer with text (a question a skill asked). Waits ' +
        'for the run to end or pause again and returns the execution.',
      input: resumeBodySchema.omit({ stream: true }).extend({ id: z.string().min(1).max(200) }),
      output: executionOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      needsAccount: true,
      async run(args, ctx) {
        const { id, ...body } = args;
        const execution = await executions.resume(ctx.principal, id, toResumeDecision(body), {
          signal: ctx.signal,
          onStep: (step, done) => ctx.progress(done, undefined, `${step.kind} ${step.name}`),
        });
        return withPauseNote(execution, ctx);
      },
    }),
    defineMcpTool({
      name: 'cancel_execution',
      title: 'Cancel an agent execution',
      description:
        'Cancels a paused or running execution, as POST /v1/agent/executions/{id}/cancel; it ends failed with a ' +
        'message saying it was cancelled.',
      input: z.object({ id: z.string().min(1).max(200) }),
      output: executionOutput,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      needsAccount: true,
      run: async (args, ctx) => executionResult(await executions.cancel(ctx.principal, args.id)),
    }),
    defineMcpTool({
      name: 'get_execution',
      title: 'Get an agent execution',
      description: 'An execution by id; polls batch runs.',
      input: z.object({ id: z.string().min(1).max(200) }),
      output: executionOutput,
      annotations: READ_ONLY,
      needsAccount: true,
      run: async (args, ctx) => executionResult(await executions.get(ctx.principal, args.id)),
    }),
    defineMcpTool({
      name: 'list_executions',
      title: 'List agent executions',
      description:
        'Your organisation’s executions, newest first, as GET /v1/agent/executions; page with skip and limit.',
      input: z.object({
        skip: z.number().int().min(0).default(0),
        limit: z.number().int().min(1).max(1000).default(10),
      }),
      output: z.object({ items: z.array(executionOutput) }),
      annotations: READ_ONLY,
      needsAccount: true,
      async run(args, ctx) {
        const list = await executions.list(ctx.principal, { skip: args.skip, limit: args.limit });
        return { items: list.map(executionResult) };
      },
    }),
  ];
}
