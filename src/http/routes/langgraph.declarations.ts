/**
 * The LangGraph Platform API's routes (docs/langgraph.md), declared once (src/http/api/route-declaration.ts): the
 * request schemas the handlers parse with, and the answers in the shapes `@langchain/langgraph-sdk` reads
 * (assistants, threads, thread states, runs, crons, store items), so /openapi.json lists them beside Prism's own.
 * Paths are relative to `/v1/langgraph`, where app.ts mounts the router.
 */
import { z } from 'zod';
import { declare } from '../api/route-declaration';

const tag = 'LangGraph';
const record = z.record(z.string(), z.unknown());
const page = {
  limit: z.coerce.number().int().min(1).max(1000).default(10),
  offset: z.coerce.number().int().min(0).default(0),
};
const configSchema = z.looseObject({ configurable: record.optional() });
const checkpointRef = z.looseObject({ checkpoint_id: z.string().max(200).nullish() });
const nodes = z.union([z.literal('*'), z.array(z.string().max(200)).max(100)]).nullish();
const strategy = z.enum(['reject', 'interrupt', 'rollback', 'enqueue']);

export const searchSchema = z.object({
  graph_id: z.string().max(200).nullish(),
  name: z.string().max(200).nullish(),
  metadata: record.nullish(),
  status: z.string().max(40).nullish(),
  ids: z.array(z.string().max(200)).max(1000).nullish(),
  ...page,
});

export const assistantBodySchema = z.object({
  assistant_id: z.string().max(200).nullish(),
  graph_id: z.string().max(200).nullish(),
  name: z.string().max(200).nullish(),
  description: z.string().max(2000).nullish(),
  config: configSchema.nullish(),
  context: record.nullish(),
  metadata: record.nullish(),
  if_exists: z.string().max(40).nullish(),
});

export const runBodySchema = z.looseObject({
  assistant_id: z.string().min(1).max(200),
  input: record.nullish(),
  command: z.looseObject({ resume: z.unknown().optional() }).nullish(),
  metadata: record.nullish(),
  config: configSchema.nullish(),
  checkpoint_id: z.string().max(200).nullish(),
  checkpoint: checkpointRef.nullish(),
  interrupt_before: nodes,
  interrupt_after: nodes,
  webhook: z.string().max(2000).nullish(),
  multitask_strategy: strategy.nullish(),
  if_not_exists: z.enum(['create', 'reject']).nullish(),
  stream_mode: z.union([z.string(), z.array(z.string())]).nullish(),
});

export const cronBodySchema = z.object({
  assistant_id: z.string().min(1).max(200).optional(),
  schedule: z.string().max(200).optional(),
  timezone: z.string().max(100).nullish(),
  end_time: z.string().max(64).nullish(),
  enabled: z.boolean().nullish(),
  on_run_completed: z.enum(['delete', 'keep']).nullish(),
  input: record.nullish(),
  metadata: record.nullish(),
  config: configSchema.nullish(),
  interrupt_before: nodes,
  interrupt_after: nodes,
  webhook: z.string().max(2000).nullish(),
  multitask_strategy: strategy.nullish(),
});
export const cronCreateSchema = cronBodySchema.extend({
  assistant_id: z.string().min(1).max(200),
  schedule: z.string().min(1).max(200),
});
export const cronSearchSchema = z.object({
  assistant_id: z.string().max(200).nullish(),
  thread_id: z.string().max(200).nullish(),
  enabled: z.boolean().nullish(),
  metadata: record.nullish(),
  sort_by: z.enum(['cron_id', 'assistant_id', 'thread_id', 'created_at', 'updated_at', 'next_run_date']).nullish(),
  sort_order: z.enum(['asc', 'desc']).nullish(),
  ...page,
});

const threadBodySchema = z.object({
  thread_id: z.string().max(200).nullish(),
  metadata: record.nullish(),
  if_exists: z.string().max(40).nullish(),
});
const stateUpdateSchema = z.object({
  values: z.unknown().optional(),
  checkpoint_id: z.string().max(200).nullish(),
  checkpoint: checkpointRef.nullish(),
  as_node: z.string().max(200).nullish(),
});
export const historyBodySchema = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(10),
  before: z.union([z.string().max(200), z.looseObject({ checkpoint_id: z.string().max(200) })]).nullish(),
  metadata: record.nullish(),
});
const historyQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(10),
  before: z.string().max(200).optional(),
});
const runListQuerySchema = z.object({ ...page, status: z.string().max(40).nullish() });
const cancelQuerySchema = z.object({
  action: z.enum(['interrupt', 'rollback']).optional(),
  wait: z.string().max(10).optional(),
});
const itemQuerySchema = z.object({ namespace: z.string().max(4000).default(''), key: z.string().min(1).max(512) });
const itemSearchSchema = z.object({
  namespace_prefix: z.array(z.string()).max(16).default([]),
  filter: record.nullish(),
  query: z.string().max(4000).nullish(),
  ...page,
});
const namespacesSchema = z.object({
  prefix: z.array(z.string()).max(16).nullish(),
  suffix: z.array(z.string()).max(16).nullish(),
  max_depth: z.number().int().min(1).max(16).nullish(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).default(0),
});

const idParams = z.object({ id: z.string().max(200) });
const checkpointParams = idParams.extend({ checkpoint: z.string().max(200) });
const runParams = idParams.extend({ run: z.string().max(200) });
const cronParams = z.object({ cron: z.string().max(200) });

// The answers, in the LangGraph Platform's shapes.
const stateValues = z.looseObject({ messages: z.array(z.looseObject({ type: z.string(), id: z.string() })) });
const assistantSchema = z.looseObject({
  assistant_id: z.string(),
  graph_id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  version: z.number(),
  config: z.looseObject({ configurable: record }),
  context: record,
  metadata: record,
  created_at: z.string(),
  updated_at: z.string(),
});
const threadSchema = z.looseObject({
  thread_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  metadata: record,
  status: z.enum(['idle', 'busy', 'interrupted', 'error']),
  values: stateValues,
  interrupts: record,
});
const checkpointSchema = z.looseObject({
  thread_id: z.string(),
  checkpoint_ns: z.string(),
  checkpoint_id: z.string().nullable(),
});
const threadStateSchema = z.looseObject({
  values: stateValues,
  next: z.array(z.string()),
  checkpoint: checkpointSchema,
  metadata: record,
  created_at: z.string().nullable(),
  parent_checkpoint: checkpointSchema.nullable(),
  tasks: z.array(record),
});
const runSchema = z.looseObject({
  run_id: z.string(),
  thread_id: z.string(),
  assistant_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  status: z.enum(['pending', 'running', 'error', 'success', 'timeout', 'interrupted']),
  metadata: record,
  multitask_strategy: strategy,
  kwargs: record,
  execution_id: z.string().nullable().describe('Prism: the execution that did the work'),
});
const cronSchema = z.looseObject({
  cron_id: z.string(),
  assistant_id: z.string(),
  thread_id: z.string().nullable(),
  schedule: z.string(),
  timezone: z.string().nullable(),
  end_time: z.string().nullable(),
  next_run_date: z.string().nullable(),
  enabled: z.boolean(),
  payload: record,
  metadata: record,
  created_at: z.string(),
  updated_at: z.string(),
});
const itemSchema = z.looseObject({
  namespace: z.array(z.string()),
  key: z.string(),
  value: record,
  created_at: z.string(),
  updated_at: z.string(),
  score: z.number().optional(),
});
/** A run's outcome as `wait` and `join` answer it: the thread's values, `__interrupt__` or `__error__`. */
const outcomeSchema = z.looseObject({
  messages: stateValues.shape.messages.optional(),
  __interrupt__: z.array(z.unknown()).optional(),
  __error__: z.looseObject({ error: z.string(), message: z.string() }).optional(),
});
const graphSchema = z.looseObject({
  nodes: z.array(z.looseObject({ id: z.string(), type: z.string(), data: z.unknown() })),
  edges: z.array(z.looseObject({ source: z.string(), target: z.string(), conditional: z.boolean().optional() })),
});
const schemasSchema = z.looseObject({
  graph_id: z.string(),
  assistant_id: z.string(),
  input_schema: record,
  output_schema: record,
  state_schema: record,
  config_schema: record,
  context_schema: record,
});
const countSchema = z.number().int().min(0).describe('How many match');
const STREAM = 'Server-sent events in the LangGraph Platform format: `metadata`, then the stream modes asked for';

const json = (description: string, schema: z.ZodType) => ({ 200: { description, schema } });
const empty = { 204: { description: 'Done; no body' } };
const stream = { 200: { description: STREAM, contentType: 'text/event-stream' as const } };

/** Assistants: Prism's agents, by name or id, with their versions. */
export const LANGGRAPH_ASSISTANT_ROUTES = {
  create: declare({
    method: 'post',
    path: '/assistants',
    tag,
    summary: 'Create an assistant (an agent; its prompt from `context.prompt`)',
    auth: 'key',
    body: assistantBodySchema,
    responses: json('The assistant', assistantSchema),
    errors: [400, 409],
  }),
  search: declare({
    method: 'post',
    path: '/assistants/search',
    tag,
    summary: 'Search assistants',
    auth: 'key',
    body: searchSchema,
    responses: json('The assistants', z.array(assistantSchema)),
  }),
  count: declare({
    method: 'post',
    path: '/assistants/count',
    tag,
    summary: 'Count assistants',
    auth: 'key',
    body: searchSchema,
    responses: json('How many match', countSchema),
  }),
  get: declare({
    method: 'get',
    path: '/assistants/:id',
    tag,
    summary: 'An assistant',
    auth: 'key',
    params: idParams,
    responses: json('The assistant', assistantSchema),
    errors: [404],
  }),
  update: declare({
    method: 'patch',
    path: '/assistants/:id',
    tag,
    summary: 'A new version of an assistant',
    auth: 'key',
    params: idParams,
    body: assistantBodySchema,
    responses: json('The new version', assistantSchema),
    errors: [400, 404],
  }),
  schemas: declare({
    method: 'get',
    path: '/assistants/:id/schemas',
    tag,
    summary: "An assistant's input, output, state and config schemas",
    auth: 'key',
    params: idParams,
    responses: json('The schemas', schemasSchema),
    errors: [404],
  }),
  graph: declare({
    method: 'get',
    path: '/assistants/:id/graph',
    tag,
    summary: "An assistant's graph: the agent and tools nodes",
    auth: 'key',
    params: idParams,
    responses: json('The graph', graphSchema),
    errors: [404],
  }),
  versions: declare({
    method: 'post',
    path: '/assistants/:id/versions',
    tag,
    summary: "An assistant's versions, newest first",
    auth: 'key',
    params: idParams,
    responses: json('The versions', z.array(assistantSchema)),
    errors: [404],
  }),
};

/** Threads, their state (checkpoints) and history. */
export const LANGGRAPH_THREAD_ROUTES = {
  create: declare({
    method: 'post',
    path: '/threads',
    tag,
    summary: 'Create a thread',
    auth: 'key',
    body: threadBodySchema,
    responses: json('The thread', threadSchema),
    errors: [400, 409],
  }),
  search: declare({
    method: 'post',
    path: '/threads/search',
    tag,
    summary: 'Search threads',
    auth: 'key',
    body: searchSchema,
    responses: json('The threads', z.array(threadSchema)),
  }),
  count: declare({
    method: 'post',
    path: '/threads/count',
    tag,
    summary: 'Count threads',
    auth: 'key',
    body: searchSchema,
    responses: json('How many match', countSchema),
  }),
  get: declare({
    method: 'get',
    path: '/threads/:id',
    tag,
    summary: 'A thread',
    auth: 'key',
    params: idParams,
    responses: json('The thread', threadSchema),
    errors: [404],
  }),
  patch: declare({
    method: 'patch',
    path: '/threads/:id',
    tag,
    summary: "Replace a thread's metadata",
    auth: 'key',
    params: idParams,
    body: z.object({ metadata: record.default({}) }),
    responses: json('The thread', threadSchema),
    errors: [404],
  }),
  remove: declare({
    method: 'delete',
    path: '/threads/:id',
    tag,
    summary: 'Delete a thread, its checkpoints and runs',
    auth: 'key',
    params: idParams,
    responses: empty,
    errors: [404],
  }),
  copy: declare({
    method: 'post',
    path: '/threads/:id/copy',
    tag,
    summary: 'Copy a thread with its checkpoints',
    auth: 'key',
    params: idParams,
    responses: json('The copy', threadSchema),
    errors: [404],
  }),
  state: declare({
    method: 'get',
    path: '/threads/:id/state',
    tag,
    summary: "A thread's state now",
    auth: 'key',
    params: idParams,
    responses: json('The state', threadStateSchema),
    errors: [404],
  }),
  stateAt: declare({
    method: 'get',
    path: '/threads/:id/state/:checkpoint',
    tag,
    summary: "A thread's state at a checkpoint",
    auth: 'key',
    params: checkpointParams,
    responses: json('The state', threadStateSchema),
    errors: [404],
  }),
  stateAtBody: declare({
    method: 'post',
    path: '/threads/:id/state/checkpoint',
    tag,
    summary: "A thread's state at the checkpoint the body names",
    auth: 'key',
    params: idParams,
    body: z.object({ checkpoint: checkpointRef }),
    responses: json('The state', threadStateSchema),
    errors: [404],
  }),
  update: declare({
    method: 'post',
    path: '/threads/:id/state',
    tag,
    summary: "Update a thread's state (a new checkpoint)",
    auth: 'key',
    params: idParams,
    body: stateUpdateSchema,
    responses: json('The new checkpoint', z.looseObject({ checkpoint: checkpointSchema })),
    errors: [400, 404, 409],
  }),
  history: declare({
    method: 'post',
    path: '/threads/:id/history',
    tag,
    summary: "A thread's states, newest first",
    auth: 'key',
    params: idParams,
    body: historyBodySchema,
    responses: json('The states', z.array(threadStateSchema)),
    errors: [404],
  }),
  historyByQuery: declare({
    method: 'get',
    path: '/threads/:id/history',
    tag,
    summary: "A thread's states, newest first (query form)",
    auth: 'key',
    params: idParams,
    query: historyQuerySchema,
    responses: json('The states', z.array(threadStateSchema)),
    errors: [404],
  }),
};

const start = (path: string, summary: string, responses: Parameters<typeof declare>[0]['responses']) =>
  declare({
    method: 'post',
    path,
    tag,
    summary,
    auth: 'key',
    ...(path.startsWith('/threads') ? { params: idParams } : {}),
    body: runBodySchema,
    responses,
    errors: [400, 402, 404, 409],
  });

/** Runs: on a thread or stateless, waited for, in the background or streamed; joined, listed, cancelled. */
export const LANGGRAPH_RUN_ROUTES = {
  waitOnThread: start('/threads/:id/runs/wait', 'Run on a thread and wait for its outcome', {
    200: { description: "The run's outcome: the thread's values", schema: outcomeSchema },
  }),
  wait: start('/runs/wait', 'Run on a new thread and wait for its outcome', {
    200: { description: "The run's outcome: the thread's values", schema: outcomeSchema },
  }),
  createOnThread: start('/threads/:id/runs', 'Start a run on a thread in the background', {
    200: { description: 'The run', schema: runSchema },
  }),
  create: start('/runs', 'Start a run on a new thread in the background', {
    200: { description: 'The run', schema: runSchema },
  }),
  streamOnThread: start('/threads/:id/runs/stream', 'Run on a thread and stream it', stream),
  stream: start('/runs/stream', 'Run on a new thread and stream it', stream),
  list: declare({
    method: 'get',
    path: '/threads/:id/runs',
    tag,
    summary: "A thread's runs",
    auth: 'key',
    params: idParams,
    query: runListQuerySchema,
    responses: json('The runs', z.array(runSchema)),
    errors: [404],
  }),
  get: declare({
    method: 'get',
    path: '/threads/:id/runs/:run',
    tag,
    summary: 'A run',
    auth: 'key',
    params: runParams,
    responses: json('The run', runSchema),
    errors: [404],
  }),
  remove: declare({
    method: 'delete',
    path: '/threads/:id/runs/:run',
    tag,
    summary: 'Delete a run',
    auth: 'key',
    params: runParams,
    responses: empty,
    errors: [404, 409],
  }),
  join: declare({
    method: 'get',
    path: '/threads/:id/runs/:run/join',
    tag,
    summary: 'Wait for a run to end: its outcome',
    auth: 'key',
    params: runParams,
    responses: json("The run's outcome: the thread's values", outcomeSchema),
    errors: [404],
  }),
  joinStream: declare({
    method: 'get',
    path: '/threads/:id/runs/:run/stream',
    tag,
    summary: "A run's values now and when it ends (server-sent events)",
    auth: 'key',
    params: runParams,
    responses: stream,
    errors: [404],
  }),
  cancel: declare({
    method: 'post',
    path: '/threads/:id/runs/:run/cancel',
    tag,
    summary: 'Cancel a run (`action=rollback` also drops what it did; `wait=1` waits for it to stop)',
    auth: 'key',
    params: runParams,
    query: cancelQuerySchema,
    responses: { 202: { description: 'Cancelling', schema: z.looseObject({}).describe('Empty') } },
    errors: [404, 409],
  }),
};

/** Crons: runs on a schedule, on a thread or on a new one each time. */
export const LANGGRAPH_CRON_ROUTES = {
  create: declare({
    method: 'post',
    path: '/runs/crons',
    tag,
    summary: 'Schedule runs on a new thread each time',
    auth: 'key',
    body: cronCreateSchema,
    responses: json('The cron', cronSchema),
    errors: [400, 404],
  }),
  createOnThread: declare({
    method: 'post',
    path: '/threads/:id/runs/crons',
    tag,
    summary: 'Schedule runs on a thread',
    auth: 'key',
    params: idParams,
    body: cronCreateSchema,
    responses: json('The cron', cronSchema),
    errors: [400, 404],
  }),
  search: declare({
    method: 'post',
    path: '/runs/crons/search',
    tag,
    summary: 'Search crons',
    auth: 'key',
    body: cronSearchSchema,
    responses: json('The crons', z.array(cronSchema)),
  }),
  count: declare({
    method: 'post',
    path: '/runs/crons/count',
    tag,
    summary: 'Count crons',
    auth: 'key',
    body: cronSearchSchema,
    responses: json('How many match', countSchema),
  }),
  update: declare({
    method: 'patch',
    path: '/runs/crons/:cron',
    tag,
    summary: 'Change a cron',
    auth: 'key',
    params: cronParams,
    body: cronBodySchema,
    responses: json('The cron', cronSchema),
    errors: [400, 404],
  }),
  remove: declare({
    method: 'delete',
    path: '/runs/crons/:cron',
    tag,
    summary: 'Delete a cron',
    auth: 'key',
    params: cronParams,
    responses: empty,
    errors: [404],
  }),
};

/** The long-term store: items by namespace and key, searched by filter or by meaning. */
export const LANGGRAPH_STORE_ROUTES = {
  put: declare({
    method: 'put',
    path: '/store/items',
    tag,
    summary: 'Put an item (`namespace`, `key`, `value`, optional `index` and `ttl`)',
    auth: 'key',
    body: record,
    responses: empty,
    errors: [400],
  }),
  get: declare({
    method: 'get',
    path: '/store/items',
    tag,
    summary: 'An item (`namespace` dotted)',
    auth: 'key',
    query: itemQuerySchema,
    responses: json('The item', itemSchema),
    errors: [404],
  }),
  remove: declare({
    method: 'delete',
    path: '/store/items',
    tag,
    summary: 'Delete an item (`namespace`, `key` in the body)',
    auth: 'key',
    body: record,
    responses: empty,
    errors: [400],
  }),
  search: declare({
    method: 'post',
    path: '/store/items/search',
    tag,
    summary: 'Search items under a namespace prefix, by filter or by `query` (meaning)',
    auth: 'key',
    body: itemSearchSchema,
    responses: json('The items', z.looseObject({ items: z.array(itemSchema) })),
  }),
  namespaces: declare({
    method: 'post',
    path: '/store/namespaces',
    tag,
    summary: 'The namespaces in use',
    auth: 'key',
    body: namespacesSchema,
    responses: json('The namespaces', z.looseObject({ namespaces: z.array(z.array(z.string())) })),
  }),
};
