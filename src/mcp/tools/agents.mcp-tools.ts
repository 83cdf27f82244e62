/**
 * Agent tools: run an agent execution and read executions back, the MCP face of `POST /v1/agent/execute` and
 * `GET /v1/agent/executions[/{id}]`. `execute_agent` takes the REST execute body and waits for the run (unless
 * `batch`), sending a progress notification per plan or tool step; cancelling the call cancels the run, which then
 * ends `failed` with a message saying so. `structuredContent` is the REST execution record. A run that pauses for a
 * person (docs/agent-runs.md) comes back `paused` with what it waits for (`pause`) and a text block saying how to
 * go on: `resume_execution` with approve, reject, edit or answer; `cancel_execution` stops it.
 */
import { z } from 'zod';
import { SERVICE_TIERS } from '../../domain/execution';
import { STATUSES } from '../../domain/prediction';
import type { Execution } from '../../domain/execution';
import {
  executeBodySchema,
  resumeBodySchema,
  toExecuteCommand,
  toExecutionWire,
  toResumeDecision,
} from '../../wire/agents.schemas';
import type { ExecutionsService } from '../../services/executions/executions.types';
import { defineMcpTool, type McpCallContext, type McpTool } from '../mcp-tool';

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/** The execution usage object (spec "Usage"). */
const executionUsage = z.object({
  elements_processed: z.number(),
  element_type: z.enum(['image', 'page', 'video', 'audio']).nullable(),
  credits_used: z.number(),
  steps: z.number(),
  message: z.string().nullable(),
  duration_seconds: z.number(),
  service_tier: z.enum(SERVICE_TIERS),
  mode_multiplier: z.number(),
  standard_cost_dollars: z.number(),
  cost_dollars: z.number(),
  savings_dollars: z.number(),
});

/** The execution record of `/v1/agent/executions`. */
/** One recorded step of a run (tool outputs are in the execution's `steps.json` artifact). */
const executionStep = z.object({
  index: z.number(),
  kind: z.enum(['plan', 'tool']),
  goal: z.string().nullable(),
  name: z.string(),
  tool_call_id: z.string().nullable(),
  arguments: z.record(z.string(), z.unknown()).nullable(),
  error: z.string().nullable(),
  duration_ms: z.number(),
  input_tokens: z.number(),
  output_tokens: z.number(),
});

/** What a paused run waits for (present only while it is paused). */
const executionPause = z.object({
  kind: z.enum(['tool_approval', 'question']),
  tool_call: z.object({ id: z.string(), name: z.string(), arguments: z.record(z.string(), z.unknown()) }).nullable(),
  question: z.string().nullable(),
  goal: z.string().nullable(),
  paused_at: z.string(),
  expires_at: z.string(),
  resume: z.array(z.enum(['approve', 'reject', 'edit', 'answer'])),
});

export const executionOutput = z.object({
  id: z.string(),
  name: z.string(),
  model: z.string(),
  status: z.enum(STATUSES),
  execution_mode: z.enum(['agent', 'program']),
  response: z.record(z.string(), z.unknown()).nullable().describe('The answer (null until completed)'),
  usage: executionUsage,
  steps: z.array(executionStep).describe('What the run did, step by step'),
  created_at: z.string(),
  completed_at: z.string().nullable(),
  pause: executionPause.optional().describe('What a paused run waits for; resume it with resume_execution'),
});

/** The record, and for a paused run a text block saying what it waits for and how to resume it. */
function withPauseNote(execution: Execution, ctx: McpCallContext) {
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
  return toExecutionWire(execution);
}

export function agentTools(executions: ExecutionsService): McpTool[] {
  return [
    defineMcpTool({
      name: 'execute_agent',
      title: 'Execute an agent',
      description:
        'Runs an agent over inputs (images, documents, audio, video by URL, file_id or data URL) with a prompt, a ' +
        'JSON schema (config.json_schema), skills (config.skills) and tools, as POST /v1/agent/execute. Waits for ' +
        'the run and returns the execution (response holds the answer); batch: true returns it enqueued at once, ' +
        'to poll with get_execution. Sends a progress notification per step.',
      input: executeBodySchema,
      output: executionOutput,
      // Stores an execution and bills it; a repeat runs again. Inputs by URL and upstream models reach outside.
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      needsAccount: true,
      async run(args, ctx) {
        const execution = await executions.execute(ctx.principal, toExecuteCommand(args), {
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
      run: async (args, ctx) => toExecutionWire(await executions.cancel(ctx.principal, args.id)),
    }),
    defineMcpTool({
      name: 'get_execution',
      title: 'Get an agent execution',
      description: 'The execution with this id, as GET /v1/agent/executions/{id} (poll batch runs).',
      input: z.object({ id: z.string().min(1).max(200) }),
      output: executionOutput,
      annotations: READ_ONLY,
      needsAccount: true,
      run: async (args, ctx) => toExecutionWire(await executions.get(ctx.principal, args.id)),
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
        return { items: list.map(toExecutionWire) };
      },
    }),
  ];
}
