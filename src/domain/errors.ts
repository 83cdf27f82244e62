/**
 * The one error hierarchy of the domain layer.
 *
 * Services throw these; adapters decide how they look on the wire. Each error says what went wrong with the stable
 * fields the spec names (`status`, `type`, `code`, `param`, the seconds to wait, whether an API key would help);
 * the HTTP error handler picks the body shape per surface and the headers (src/wire/error-body.ts), MCP
 * (src/mcp/mcp-errors.ts) and the WebSocket stream (src/ws/ws-error-event.ts) have translators of their own.
 */

/** Resources whose absence has its own `<resource>_not_found` code. */
export const NOT_FOUND_RESOURCES = [
  'file',
  'upload',
  'api_key',
  'organisation',
  'route',
  'prediction',
  'domain',
  'execution',
  'chat',
  'agent',
  'artifact',
  'skill',
  'evaluation',
  'mcp_server',
  // the LangGraph Platform API (docs/langgraph.md)
  'assistant',
  'thread',
  'run',
  'checkpoint',
  'store_item',
  'cron',
] as const;
export type NotFoundResource = (typeof NOT_FOUND_RESOURCES)[number];

/** Every stable `code` Prism puts in an error body; docs/errors.md explains each, and a test keeps them in sync. */
export const ERROR_CODES = [
  'missing_api_key',
  'invalid_api_key',
  // MCP OAuth (src/mcp/auth/bearer-auth.ts)
  'invalid_token',
  'auth_unavailable',
  'permission_denied',
  'tier_not_allowed',
  'payload_too_large',
  'upload_incomplete',
  'upload_already_completed',
  'unsupported_media_type',
  'request_aborted',
  'internal_error',
  'invalid_media',
  'invalid_document',
  'too_many_inputs',
  'missing_input',
  'url_not_allowed',
  'url_fetch_failed',
  'schema_invalid',
  'all_pages_failed',
  // agents (src/agents, tools/)
  'unknown_tool',
  'unknown_toolset',
  'invalid_tool_input',
  'agent_exists',
  // remote MCP servers as agent tools (src/services/agent-mcp)
  'mcp_server_exists',
  'unknown_mcp_server',
  'secrets_unavailable',
  'mcp_server_sign_in_required',
  'oauth_state_invalid',
  'oauth_sign_in_failed',
  'oauth_sign_in_denied',
  // paused runs (src/services/executions/execution-pauses.ts)
  'execution_not_paused',
  'execution_finished',
  // cancelling a prediction (src/services/predictions/prediction-cancel.ts)
  'prediction_finished',
  'prediction_not_cancellable',
  'invalid_decision',
  // hardening
  'malformed_body',
  'malformed_multipart',
  'guest_upload_quota',
  // skills (src/services/skills)
  'invalid_skill_bundle',
  'invalid_skill_source',
  // gateway (src/gateway)
  'capability_violation',
  'model_not_found',
  'model_not_serving',
  'ttft_timeout',
  'deadline_exceeded',
  'client_disconnected',
  'upstream_error',
  'upstream_rejected',
  'upstream_schema_violation',
  'upstream_unavailable',
  'rate_limit_exceeded',
  'queue_full',
  'insufficient_credits',
  'guest_spend_cap',
  // evaluations (src/services/evaluations)
  'evaluation_model_unavailable',
  // decision stream (src/ws)
  'invalid_message',
  'session_not_started',
  'session_already_started',
  // the per-request work budget (src/lib/work-budget.ts)
  'work_budget_exceeded',
  // the LangGraph Platform API (src/services/langgraph)
  'thread_busy',
  'invalid_schedule',
  // agent chats (src/services/chats/chat-turn-lanes.ts)
  'turn_interrupted',
  // the operator's API (src/services/admin)
  'model_not_allowed',
  'key_budget_exceeded',
  'org_budget_exceeded',
  'organisation_exists',
  'api_key_revoked',
  ...NOT_FOUND_RESOURCES.map((r) => `${r}_not_found` as const),
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** One FastAPI/pydantic-style validation issue. */
export interface ValidationIssue {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

export interface AppErrorInit {
  message: string;
  type: string;
  code?: ErrorCode | null;
  param?: string | null;
  /** Seconds to wait before retrying (HTTP renders it as `Retry-After`). */
  retryAfterSeconds?: number;
  /** An anonymous caller or guest would get past this with an API key (HTTP renders `X-Prism-Upgrade: api-key`). */
  suggestsApiKey?: boolean;
  /** Extra fields placed beside `message` in the error object (e.g. `tier` on 429). */
  extra?: Record<string, unknown>;
  issues?: ValidationIssue[];
}

/** Base class: an error whose status and stable fields are decided where it is thrown; its rendering is not. */
export class AppError extends Error {
  readonly type: string;
  readonly code: ErrorCode | null;
  readonly param: string | null;
  readonly retryAfterSeconds: number | undefined;
  readonly suggestsApiKey: boolean;
  readonly extra: Record<string, unknown>;
  readonly issues: ValidationIssue[];

  constructor(
    readonly status: number,
    init: AppErrorInit,
  ) {
    super(init.message);
    this.name = new.target.name;
    this.type = init.type;
    this.code = init.code ?? null;
    this.param = init.param ?? null;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.suggestsApiKey = init.suggestsApiKey ?? false;
    this.extra = init.extra ?? {};
    this.issues = init.issues ?? [];
  }
}

/** 400: the request is well-formed but cannot be served as asked. */
export class BadRequestError extends AppError {
  constructor(message: string, code: ErrorCode | null = null, param: string | null = null) {
    super(400, { message, type: 'invalid_request_error', code, param });
  }
}

/**
 * 400 `schema_invalid`: a JSON schema a caller sent cannot be used (not a schema, recursive, non-local `$ref`s, over
 * the size budget). Every route that takes a schema answers this for the same schema; `reason` is caller-facing.
 */
export class SchemaInvalidError extends AppError {
  constructor(param: string, reason: string) {
    super(400, {
      message: `${param} is not a usable JSON schema: ${reason}`,
      type: 'invalid_request_error',
      code: 'schema_invalid',
      param,
    });
  }
}

/** Which rule of skill-bundle unpacking a zip broke (named in the error body as `rule`). */
export type SkillBundleRule =
  | 'not_a_zip'
  | 'path_traversal'
  | 'absolute_path'
  | 'invalid_name'
  | 'symlink'
  | 'encrypted'
  | 'too_many_entries'
  | 'entry_too_large'
  | 'total_too_large'
  | 'compression_ratio'
  | 'duplicate_name'
  | 'missing_skill_md'
  | 'invalid_skill_md'
  | 'invalid_front_matter'
  | 'invalid_schema'
  | 'invalid_prism_yaml';

/** 400: a skill bundle broke an unpacking or format rule; the body names the entry and the rule. Nothing is stored. */
export class InvalidSkillBundleError extends AppError {
  constructor(
    readonly rule: SkillBundleRule,
    readonly entry: string | null,
    message: string,
  ) {
    super(400, {
      message:
        entry === null
          ? `Invalid skill bundle (${rule}): ${message}`
          : `Invalid skill bundle: entry '${entry}' (${rule}): ${message}`,
      type: 'invalid_request_error',
      code: 'invalid_skill_bundle',
      extra: { rule, entry },
    });
  }
}

/** 401: a non-empty bearer token that matches no active key. Never falls back to anonymous. */
export class InvalidApiKeyError extends AppError {
  constructor() {
    super(401, {
      message: 'Invalid API Key',
      type: 'authentication_error',
      code: 'invalid_api_key',
    });
  }
}

/** 401: the route needs an identified caller and none was given. */
export class AuthenticationRequiredError extends AppError {
  constructor() {
    super(401, {
      message: 'Authentication required: send "Authorization: Bearer <API key>".',
      type: 'authentication_error',
      code: 'missing_api_key',
    });
  }
}

/** 403: the caller is known but its tier or role does not allow this. */
export class PermissionDeniedError extends AppError {
  constructor(message: string, code: ErrorCode = 'permission_denied') {
    super(403, { message, type: 'permission_error', code });
  }
}

/** 404: no such resource in the caller's organisation (other organisations' resources look absent). */
export class NotFoundError extends AppError {
  /** @param hint a next step for the caller (e.g. the domain they probably meant), appended to the message. */
  constructor(resource: NotFoundResource, id: string, hint?: string) {
    const message = `${resource} '${id}' not found${hint ? `; ${hint}` : ''}`;
    super(404, { message, type: 'not_found_error', code: `${resource}_not_found` });
  }
}

/** 409: the resource is not in a state that allows the operation. */
export class ConflictError extends AppError {
  constructor(message: string, code: ErrorCode) {
    super(409, { message, type: 'invalid_request_error', code });
  }
}

/** 413: a body or upload over the configured size limit. */
export class PayloadTooLargeError extends AppError {
  constructor(limitBytes: number, what = 'Request body') {
    super(413, {
      message: `${what} is larger than the limit of ${formatBytes(limitBytes)}`,
      type: 'invalid_request_error',
      code: 'payload_too_large',
    });
  }
}

/**
 * 413 `work_budget_exceeded`: parsing, compiling or filling the caller's structure (schemas, bundles, YAML) needed
 * more work than the request's budget; `limit` names what ran out (`enum_values`, `string_chars`, ...).
 */
export class WorkBudgetExceededError extends AppError {
  constructor(message: string, limit: string, allowed: number, anonymous: boolean) {
    super(413, {
      message,
      type: 'invalid_request_error',
      code: 'work_budget_exceeded',
      param: limit,
      suggestsApiKey: anonymous,
      extra: { limit, allowed },
    });
  }
}

/** 422: input failed validation; `issues` become the `{detail:[…]}` body. */
export class RequestValidationError extends AppError {
  constructor(issues: ValidationIssue[]) {
    super(422, { message: 'Request validation failed', type: 'validation_error', issues });
  }
}

/** 502: every unit of work failed (e.g. every page of a document); nothing is billed. */
export class AllPagesFailedError extends AppError {
  constructor(message: string) {
    super(502, { message, type: 'upstream_error', code: 'all_pages_failed' });
  }
}

/** 499 (nginx's "client closed request"): the caller went away; nothing is rendered, work is abandoned. */
export class ClientDisconnectedError extends AppError {
  constructor() {
    super(499, {
      message: 'The client closed the connection',
      type: 'invalid_request_error',
      code: 'client_disconnected',
    });
  }
}

/** 503: a dependency is down; the caller should retry after `retryAfterSeconds`. */
export class ServiceUnavailableError extends AppError {
  constructor(message: string, code: ErrorCode, retryAfterSeconds: number) {
    super(503, { message, type: 'service_unavailable', code, retryAfterSeconds });
  }
}

/** Renders a byte count the way people read limits: 512 MiB, 32 KiB, 100 bytes. */
export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1 && value % 1024 === 0) {
    value /= 1024;
    unit += 1;
  }
  return `${value} ${units[unit]}`;
}
