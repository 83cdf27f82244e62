/**
 * The API's routes for its reference: each mounted route with the zod schemas its handler validates with (the same
 * objects, imported, so the document cannot disagree with validation) and a line saying what it does. A test
 * compares this list with the routes express has mounted, both ways.
 */
import type { z } from 'zod';
import {
  createAgentBodySchema,
  executeBodySchema,
  executionIdParamsSchema,
  listExecutionsQuerySchema,
  lookupAgentBodySchema,
  resumeBodySchema,
} from '../../wire/agents.schemas';
import { artifactsQuerySchema } from '../../wire/artifacts.schemas';
import {
  mcpServerIdParamsSchema,
  oauthCallbackQuerySchema,
  registerMcpServerBodySchema,
} from '../../wire/mcp-servers.schemas';
import { chatBodySchema } from '../../wire/chat.schemas';
import { chatMessagesQuerySchema, listChatsQuerySchema } from '../../wire/chats.schemas';
import {
  evaluationListQuerySchema,
  evaluationMetricsQuerySchema,
  evaluationOptimizeBodySchema,
  evaluationParamsSchema,
  evaluationPreviewQuerySchema,
  evaluationRerunBodySchema,
  evaluationResultsQuerySchema,
  evaluationRunBodySchema,
} from '../../wire/evaluations.schemas';
import {
  feedbackEntityParamsSchema,
  feedbackListQuerySchema,
  feedbackSubmitBodySchema,
} from '../../wire/feedback.schemas';
import {
  fileIdParamsSchema,
  listFilesQuerySchema,
  md5ParamsSchema,
  presignedUrlBodySchema,
  publicUrlQuerySchema,
  uploadQuerySchema,
} from '../../wire/files.schemas';
import {
  documentSchemaBodySchema,
  fileGenerateBodySchema,
  imageGenerateBodySchema,
  imageSchemaBodySchema,
  listPredictionsQuerySchema,
  predictionIdParamsSchema,
} from '../../wire/predictions.schemas';
import {
  createSkillBodySchema,
  downloadQuerySchema,
  listSkillsQuerySchema,
  lookupSkillBodySchema,
  skillIdParamsSchema,
  updateSkillBodySchema,
} from '../../wire/skills.schemas';
import { kindExecuteBodySchema } from '../../wire/kind-execute.schemas';
import { embeddingsBodySchema, modelParamsSchema } from '../routes/compat.routes';
import { decisionBodySchema } from '../routes/decisions.routes';
import { schemaBodySchema } from '../routes/hub.routes';
import {
  adminAuditQuerySchema,
  adminBudgetBodySchema,
  adminCreateKeyBodySchema,
  adminCreateOrgBodySchema,
  adminCreditsBodySchema,
  adminKeyIdParamsSchema,
  adminKeysQuerySchema,
  adminOrgParamsSchema,
  adminSpendQuerySchema,
  adminUpdateKeyBodySchema,
} from '../routes/admin.routes';

type Schema = z.ZodType;

export interface ApiRoute {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** Express syntax (`/v1/files/:file_id`). */
  path: string;
  tag: string;
  summary: string;
  /** `key`: needs an API key; `open`: answers anonymous callers (a key that is sent is still checked). */
  auth: 'key' | 'open';
  body?: Schema;
  /** A body that is not JSON: a multipart upload or raw bytes. */
  rawBody?: 'multipart' | 'binary';
  query?: Schema;
  params?: Schema;
  /** What a success answers when it is not JSON. */
  produces?: 'text/event-stream' | 'text/plain' | 'application/octet-stream';
}

const files = (prefix: string, tag: string): ApiRoute[] => [
  {
    method: 'post',
    path: `${prefix}/files`,
    tag,
    summary: 'Upload a file (multipart, field `file`)',
    auth: 'key',
    query: uploadQuerySchema,
    rawBody: 'multipart',
  },
  { method: 'get', path: `${prefix}/files`, tag, summary: 'List files', auth: 'key', query: listFilesQuerySchema },
  {
    method: 'post',
    path: `${prefix}/files/presigned-url`,
    tag,
    summary: 'Get a signed URL to PUT a file to',
    auth: 'key',
    body: presignedUrlBodySchema,
  },
  {
    method: 'get',
    path: `${prefix}/files/verify-upload/:file_id`,
    tag,
    summary: 'Check a presigned upload arrived',
    auth: 'key',
    params: fileIdParamsSchema,
  },
  {
    method: 'get',
    path: `${prefix}/files/hash/:file_hash`,
    tag,
    summary: 'Find a file by its MD5',
    auth: 'key',
    params: md5ParamsSchema,
  },
  {
    method: 'put',
    path: `${prefix}/files/:file_id/upload`,
    tag,
    summary: 'The presigned upload target (signed URL, no key)',
    auth: 'open',
    params: fileIdParamsSchema,
    rawBody: 'binary',
  },
  {
    method: 'get',
    path: `${prefix}/files/:file_id/content`,
    tag,
    summary: "A file's bytes (with a key, or a signed public URL)",
    auth: 'open',
    params: fileIdParamsSchema,
    produces: 'application/octet-stream',
  },
  {
    method: 'get',
    path: `${prefix}/files/:file_id`,
    tag,
    summary: 'Get a file record',
    auth: 'key',
    params: fileIdParamsSchema,
    query: publicUrlQuerySchema,
  },
  {
    method: 'delete',
    path: `${prefix}/files/:file_id`,
    tag,
    summary: 'Delete a file (pro and enterprise)',
    auth: 'key',
    params: fileIdParamsSchema,
  },
];

const gateway = (prefix: string): ApiRoute[] => {
  const tag = prefix === '/v1/compat' ? 'Gateway' : 'Gateway (/v1/openai alias)';
  return [
    { method: 'get', path: `${prefix}/health`, tag, summary: 'Health', auth: 'open' },
    ...files(prefix, tag),
    { method: 'get', path: `${prefix}/models`, tag, summary: 'List the models', auth: 'open' },
    {
      method: 'get',
      path: `${prefix}/models/:model`,
      tag,
      summary: 'One model',
      auth: 'open',
      params: modelParamsSchema,
    },
    {
      method: 'post',
      path: `${prefix}/chat/completions`,
      tag,
      summary: 'Chat completion (JSON, or server-sent events with `stream: true`)',
      auth: 'open',
      body: chatBodySchema,
    },
    {
      method: 'post',
      path: `${prefix}/embeddings`,
      tag,
      summary: 'Embeddings',
      auth: 'open',
      body: embeddingsBodySchema,
    },
    {
      method: 'post',
      path: `${prefix}/audio/transcriptions`,
      tag,
      summary:
        'Transcribe audio on a transcription model (multipart: `file`, `model`, `response_format`, ...; JSON or text, ' +
        'server-sent events with `stream`)',
      auth: 'open',
      rawBody: 'multipart',
    },
    {
      method: 'get',
      path: `${prefix}/decisions`,
      tag,
      summary: 'How to open the WebSocket decision stream',
      auth: 'open',
    },
    {
      method: 'post',
      path: `${prefix}/decisions`,
      tag,
      summary: 'Answer typed questions about one frame',
      auth: 'open',
      body: decisionBodySchema,
    },
  ];
};

const generate = (kind: 'document' | 'video' | 'audio'): ApiRoute => ({
  method: 'post',
  path: `/v1/${kind}/generate`,
  tag: 'Extraction',
  summary: `Extract from a ${kind} (a file id or URL)`,
  auth: 'key',
  body: fileGenerateBodySchema,
});

const feedback = (prefix: string): ApiRoute[] => [
  {
    method: 'post',
    path: `${prefix}/submit`,
    tag: 'Feedback',
    summary: 'Feedback on a prediction, execution or chat',
    auth: 'key',
    body: feedbackSubmitBodySchema,
  },
  {
    method: 'get',
    path: `${prefix}/:entity_id`,
    tag: 'Feedback',
    summary: 'The feedback on one entity',
    auth: 'key',
    params: feedbackEntityParamsSchema,
    query: feedbackListQuerySchema,
  },
];

export const API_ROUTES: readonly ApiRoute[] = [
  { method: 'get', path: '/health', tag: 'Operations', summary: 'The process answers', auth: 'open' },
  {
    method: 'get',
    path: '/ready',
    tag: 'Operations',
    summary: 'Ready to serve: storage answers and models are loaded (503 otherwise)',
    auth: 'open',
  },
  {
    method: 'get',
    path: '/metrics',
    tag: 'Operations',
    summary: 'Prometheus metrics',
    auth: 'open',
    produces: 'text/plain',
  },
  { method: 'get', path: '/openapi.json', tag: 'Operations', summary: 'This document', auth: 'open' },
  ...gateway('/v1/compat'),
  ...gateway('/v1/openai'),
  { method: 'get', path: '/v1/health', tag: 'Health', summary: 'Health (and a check of your key)', auth: 'open' },
  { method: 'get', path: '/v1/hub/info', tag: 'Hub', summary: "The hub's version", auth: 'open' },
  { method: 'get', path: '/v1/hub/domains', tag: 'Hub', summary: 'The domains', auth: 'open' },
  {
    method: 'post',
    path: '/v1/hub/schema',
    tag: 'Hub',
    summary: "A domain's JSON schema",
    auth: 'open',
    body: schemaBodySchema,
  },
  { method: 'get', path: '/v1/domains', tag: 'Hub', summary: 'The domains (older route)', auth: 'open' },
  {
    method: 'post',
    path: '/v1/schema',
    tag: 'Hub',
    summary: "A domain's JSON schema (older route)",
    auth: 'open',
    body: schemaBodySchema,
  },
  { method: 'get', path: '/v1/models', tag: 'Hub', summary: 'The structured models (older route)', auth: 'open' },
  {
    method: 'get',
    path: '/v1/skills',
    tag: 'Skills',
    summary: 'List skills',
    auth: 'open',
    query: listSkillsQuerySchema,
  },
  {
    method: 'post',
    path: '/v1/skills/lookup',
    tag: 'Skills',
    summary: 'Find a skill by id, name, or name and version',
    auth: 'open',
    body: lookupSkillBodySchema,
  },
  {
    method: 'post',
    path: '/v1/skills/create',
    tag: 'Skills',
    summary: 'Create a skill from a zip, a prompt or a chat',
    auth: 'key',
    body: createSkillBodySchema,
  },
  {
    method: 'post',
    path: '/v1/skills/:skill_id/update',
    tag: 'Skills',
    summary: 'A new version of a skill',
    auth: 'key',
    params: skillIdParamsSchema,
    body: updateSkillBodySchema,
  },
  {
    method: 'get',
    path: '/v1/skills/:skill_id/download',
    tag: 'Skills',
    summary: "A signed link to a skill's zip",
    auth: 'open',
    params: skillIdParamsSchema,
    query: downloadQuerySchema,
  },
  {
    method: 'get',
    path: '/v1/skills/:skill_id/content',
    tag: 'Skills',
    summary: "A skill's zip",
    auth: 'open',
    params: skillIdParamsSchema,
    produces: 'application/octet-stream',
  },
  {
    method: 'get',
    path: '/v1/skills/:skill_id',
    tag: 'Skills',
    summary: 'One skill',
    auth: 'open',
    params: skillIdParamsSchema,
  },
  ...files('/v1', 'Files'),
  {
    method: 'post',
    path: '/v1/image/generate',
    tag: 'Extraction',
    summary: 'Extract from images (base64, data URLs or URLs)',
    auth: 'key',
    body: imageGenerateBodySchema,
  },
  generate('document'),
  generate('video'),
  generate('audio'),
  {
    method: 'post',
    path: '/v1/image/schema',
    tag: 'Extraction',
    summary: 'Propose a JSON schema for images',
    auth: 'key',
    body: imageSchemaBodySchema,
  },
  {
    method: 'post',
    path: '/v1/document/schema',
    tag: 'Extraction',
    summary: 'Propose a JSON schema for a document',
    auth: 'key',
    body: documentSchemaBodySchema,
  },
  {
    method: 'get',
    path: '/v1/predictions',
    tag: 'Extraction',
    summary: 'List predictions',
    auth: 'key',
    query: listPredictionsQuerySchema,
  },
  {
    method: 'get',
    path: '/v1/predictions/:id',
    tag: 'Extraction',
    summary: 'One prediction',
    auth: 'key',
    params: predictionIdParamsSchema,
  },
  {
    method: 'get',
    path: '/v1/predictions/:id/domain',
    tag: 'Extraction',
    summary: "A prediction's domain",
    auth: 'key',
    params: predictionIdParamsSchema,
  },
  { method: 'get', path: '/v1/agent', tag: 'Agents', summary: 'List agents', auth: 'key' },
  {
    method: 'post',
    path: '/v1/agent/lookup',
    tag: 'Agents',
    summary: 'Find an agent',
    auth: 'key',
    body: lookupAgentBodySchema,
  },
  {
    method: 'get',
    path: '/v1/agents/:id',
    tag: 'Agents',
    summary: 'One agent',
    auth: 'key',
    params: executionIdParamsSchema,
  },
  {
    method: 'post',
    path: '/v1/agent/create',
    tag: 'Agents',
    summary: 'Create an agent',
    auth: 'key',
    body: createAgentBodySchema,
  },
  {
    method: 'post',
    path: '/v1/agent/execute',
    tag: 'Agents',
    summary: 'Run an agent (an execution)',
    auth: 'key',
    body: executeBodySchema,
  },
  ...(['image', 'document', 'audio', 'video'] as const).map((kind): ApiRoute => ({
    method: 'post',
    path: `/v1/${kind}/execute`,
    tag: 'Agents',
    summary: `Run a named agent (or skill) on one ${kind} (the VLM Run SDKs' execute)`,
    auth: 'key',
    body: kindExecuteBodySchema,
  })),
  {
    method: 'get',
    path: '/v1/agent/executions',
    tag: 'Agents',
    summary: 'List executions',
    auth: 'key',
    query: listExecutionsQuerySchema,
  },
  {
    method: 'get',
    path: '/v1/agent/executions/:id',
    tag: 'Agents',
    summary: 'One execution',
    auth: 'key',
    params: executionIdParamsSchema,
  },
  {
    method: 'get',
    path: '/v1/agent/executions/:id/events',
    tag: 'Agents',
    summary: "An execution's run events (SSE; Last-Event-ID resumes)",
    auth: 'key',
    params: executionIdParamsSchema,
  },
  {
    method: 'post',
    path: '/v1/agent/executions/:id/resume',
    tag: 'Agents',
    summary: 'Resume a paused execution (approve, reject, edit, answer)',
    auth: 'key',
    params: executionIdParamsSchema,
    body: resumeBodySchema,
  },
  {
    method: 'post',
    path: '/v1/agent/executions/:id/cancel',
    tag: 'Agents',
    summary: 'Cancel a paused or running execution',
    auth: 'key',
    params: executionIdParamsSchema,
  },
  {
    method: 'post',
    path: '/v1/agent/mcp-servers',
    tag: 'Agents',
    summary:
      'Register a remote MCP server for agents (its key is stored encrypted, never returned; with auth.type ' +
      'oauth the answer carries the authorization_url a person opens to sign in)',
    auth: 'key',
    body: registerMcpServerBodySchema,
  },
  {
    method: 'post',
    path: '/v1/agent/mcp-servers/:id/oauth/start',
    tag: 'Agents',
    summary: 'Open (again) the OAuth sign-in of a registered MCP server: its authorization_url',
    auth: 'key',
    params: mcpServerIdParamsSchema,
  },
  {
    method: 'get',
    path: '/v1/agent/mcp-servers/oauth/callback',
    tag: 'Agents',
    summary: "Where a person's browser lands after consenting: exchanges the code (state: single-use, expiring)",
    auth: 'open',
    query: oauthCallbackQuerySchema,
  },
  { method: 'get', path: '/v1/agent/mcp-servers', tag: 'Agents', summary: 'List registered MCP servers', auth: 'key' },
  {
    method: 'get',
    path: '/v1/agent/mcp-servers/:id',
    tag: 'Agents',
    summary: 'One registered MCP server',
    auth: 'key',
    params: mcpServerIdParamsSchema,
  },
  {
    method: 'get',
    path: '/v1/agent/mcp-servers/:id/tools',
    tag: 'Agents',
    summary: "A registered MCP server's tools as agents see them (read from the server now)",
    auth: 'key',
    params: mcpServerIdParamsSchema,
  },
  {
    method: 'delete',
    path: '/v1/agent/mcp-servers/:id',
    tag: 'Agents',
    summary: 'Delete a registered MCP server',
    auth: 'key',
    params: mcpServerIdParamsSchema,
  },
  {
    method: 'get',
    path: '/v1/artifacts',
    tag: 'Artifacts',
    summary: "An execution's or session's artifacts",
    auth: 'key',
    query: artifactsQuerySchema,
  },
  {
    method: 'get',
    path: '/v1/artifacts/list',
    tag: 'Artifacts',
    summary: "An execution's or session's artifacts",
    auth: 'key',
    query: artifactsQuerySchema,
  },
  {
    method: 'get',
    path: '/v1/artifacts/:sessionId/:objectId',
    tag: 'Artifacts',
    summary: "One artifact's bytes",
    auth: 'key',
    produces: 'application/octet-stream',
  },
  {
    method: 'get',
    path: '/v1/chat',
    tag: 'Chat',
    summary: 'List chat threads',
    auth: 'key',
    query: listChatsQuerySchema,
  },
  {
    method: 'get',
    path: '/v1/chat/messages',
    tag: 'Chat',
    summary: "A thread's messages",
    auth: 'key',
    query: chatMessagesQuerySchema,
  },
  ...feedback('/v1/feedback'),
  ...feedback('/v1/experimental/feedback'),
  {
    method: 'post',
    path: '/v1/evaluations/run',
    tag: 'Evaluations',
    summary: 'Evaluate a skill or model on stored items',
    auth: 'key',
    body: evaluationRunBodySchema,
  },
  {
    method: 'post',
    path: '/v1/evaluations/optimize',
    tag: 'Evaluations',
    summary: 'A new skill version from an evaluation',
    auth: 'key',
    body: evaluationOptimizeBodySchema,
  },
  {
    method: 'post',
    path: '/v1/evaluations/rerun',
    tag: 'Evaluations',
    summary: 'Re-run an evaluation with another skill',
    auth: 'key',
    body: evaluationRerunBodySchema,
  },
  {
    method: 'get',
    path: '/v1/evaluations',
    tag: 'Evaluations',
    summary: 'List evaluation runs',
    auth: 'key',
    query: evaluationListQuerySchema,
  },
  {
    method: 'get',
    path: '/v1/evaluations/preview',
    tag: 'Evaluations',
    summary: 'The items an evaluation would read',
    auth: 'key',
    query: evaluationPreviewQuerySchema,
  },
  {
    method: 'get',
    path: '/v1/evaluations/metrics',
    tag: 'Evaluations',
    summary: 'Scores over time',
    auth: 'key',
    query: evaluationMetricsQuerySchema,
  },
  { method: 'get', path: '/v1/evaluations/summary-stats', tag: 'Evaluations', summary: 'Totals', auth: 'key' },
  {
    method: 'get',
    path: '/v1/evaluations/unique-sources',
    tag: 'Evaluations',
    summary: 'The sources evaluations can read',
    auth: 'key',
  },
  {
    method: 'get',
    path: '/v1/evaluations/:run_id',
    tag: 'Evaluations',
    summary: 'One evaluation run',
    auth: 'key',
    params: evaluationParamsSchema,
  },
  {
    method: 'get',
    path: '/v1/evaluations/:run_id/results',
    tag: 'Evaluations',
    summary: "A run's results",
    auth: 'key',
    params: evaluationParamsSchema,
    query: evaluationResultsQuerySchema,
  },
  {
    method: 'delete',
    path: '/v1/evaluations/:run_id',
    tag: 'Evaluations',
    summary: 'Delete an evaluation run',
    auth: 'key',
    params: evaluationParamsSchema,
  },
  // The operator's API (docs/admin.md): a superuser key of the owner organisation only.
  ...adminApiRoutes(),
];

function adminApiRoutes(): ApiRoute[] {
  const tag = 'Admin';
  const auth = 'key';
  return [
    { method: 'get', path: '/v1/admin/organisations', tag, auth, summary: 'List organisations and their balances' },
    {
      method: 'post',
      path: '/v1/admin/organisations',
      tag,
      auth,
      summary: 'Create an organisation',
      body: adminCreateOrgBodySchema,
    },
    {
      method: 'post',
      path: '/v1/admin/organisations/:org/credits',
      tag,
      auth,
      summary: "Top up an organisation's wallet",
      params: adminOrgParamsSchema,
      body: adminCreditsBodySchema,
    },
    {
      method: 'put',
      path: '/v1/admin/organisations/:org/budget',
      tag,
      auth,
      summary: "Set or clear an organisation's budget and its reset period (beside its wallet)",
      params: adminOrgParamsSchema,
      body: adminBudgetBodySchema,
    },
    {
      method: 'get',
      path: '/v1/admin/keys',
      tag,
      auth,
      summary: 'List keys (never the secrets), with expiry, budget and spend',
      query: adminKeysQuerySchema,
    },
    {
      method: 'post',
      path: '/v1/admin/keys',
      tag,
      auth,
      summary: 'Create a key with a tier, expiry, allowed models and a budget (the secret is shown once)',
      body: adminCreateKeyBodySchema,
    },
    { method: 'get', path: '/v1/admin/keys/:id', tag, auth, summary: 'One key', params: adminKeyIdParamsSchema },
    {
      method: 'patch',
      path: '/v1/admin/keys/:id',
      tag,
      auth,
      summary: "Change a key's expiry or allowed models (null clears)",
      params: adminKeyIdParamsSchema,
      body: adminUpdateKeyBodySchema,
    },
    {
      method: 'post',
      path: '/v1/admin/keys/:id/revoke',
      tag,
      auth,
      summary: 'Revoke a key: it gets 401 from the next call on',
      params: adminKeyIdParamsSchema,
    },
    {
      method: 'post',
      path: '/v1/admin/keys/:id/rotate',
      tag,
      auth,
      summary: 'Replace a key by a new secret with the same policy; the old key is revoked',
      params: adminKeyIdParamsSchema,
    },
    {
      method: 'put',
      path: '/v1/admin/keys/:id/budget',
      tag,
      auth,
      summary: "Set or clear a key's budget and its reset period",
      params: adminKeyIdParamsSchema,
      body: adminBudgetBodySchema,
    },
    {
      method: 'get',
      path: '/v1/admin/spend',
      tag,
      auth,
      summary: 'Spend by key, model or day (JSON, or CSV with format=csv or Accept: text/csv)',
      query: adminSpendQuerySchema,
    },
    {
      method: 'get',
      path: '/v1/admin/audit',
      tag,
      auth,
      summary: 'The audit log of admin actions, newest first',
      query: adminAuditQuerySchema,
    },
  ];
}
