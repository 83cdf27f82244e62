/**
 * Agent tools: run an agent execution and read executions back, the MCP face of `POST /v1/agent/execute` and
 * `GET /v1/agent/executions[/{id}]`. `execute_agent` takes the REST execute body and waits for the run (unless
 * `batch`), sending a progress notification per plan or tool step; cancelling the call cancels the run, which then
 * ends `failed` with a message saying so. `structuredContent` is the REST execution record.
 */
import { z } from 'zod';
import { SERVICE_TIERS } from '../../domain/execution';
import { STATUSES } from '../../domain/prediction';
import { executeBodySchema, toExecuteCommand, toExecutionWire } from '../../wire/agents.schemas';
import type { ExecutionsService } from '../../services/executions/executions.types';
import { defineMcpTool, type McpTool } from '../mcp-tool';

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
});

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
        return toExecutionWire(execution);
      },
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
