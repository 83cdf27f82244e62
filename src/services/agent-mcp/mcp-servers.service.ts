/**
 * Remote MCP servers an organisation registers for its agents (`/v1/agent/mcp-servers`, docs/agents.md): checks
 * and stores them (the API key sealed with PRISM_SECRETS_KEY, never returned), and turns the servers a run names
 * (`config.mcp_servers`) into that run's extra tools (remote-tools.ts).
 *
 * A URL is checked when it is registered and again on every call (the SSRF-safe fetcher): private, loopback and
 * link-local addresses are refused unless PRISM_ALLOW_PRIVATE_URLS is set. A server registered with OAuth is signed
 * in to once by a person (oauth-sign-in.ts); its calls carry the access token, refreshed as needed.
 */
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../domain/account';
import { AppError, BadRequestError, ConflictError, NotFoundError } from '../../domain/errors';
import type { McpServerRecord } from '../../domain/mcp-server';
import type { Logger } from '../../lib/logger';
import { listRemoteTools, RemoteMcpError, type RemoteMcpTarget, type RemoteMcpTool } from '../../lib/remote-mcp-client';
import { checkPublicUrl, SafeFetchError } from '../../lib/safe-fetch';
import type { SecretBox } from '../../lib/secret-box';
import type { AnyToolDefinition } from '../../agents/sdk';
import type { McpServerStore } from '../../stores/types/mcp-server';
import { createMcpOAuth, oauthClientContext, type McpOAuth } from './oauth-sign-in';
import { remoteToolsOf, withRenewal, type RemoteCallBudget, type RemoteTargetSource } from './remote-tools';

export interface RegisterMcpServer {
  name: string;
  url: string;
  apiKey: string | null;
  apiKeyHeader: string | null;
  allowedTools: string[] | null;
  timeoutMs: number | null;
  /** Sign in with OAuth (a person opens the authorization URL the answer carries) instead of a key. */
  oauth: boolean;
  /**
   * The OAuth client its operator issued Prism, for an authorization server without dynamic registration (the
   * secret is for a confidential client; how it is sent, Basic or in the body, is what the server's metadata says).
   * Null: Prism registers itself.
   */
  oauthClient: { clientId: string; clientSecret: string | null } | null;
}

/** A registered server as callers see it: everything but the secrets (and a pending sign-in's state). */
export type McpServerView = Omit<
  McpServerRecord,
  'secretSealed' | 'oauthStateHash' | 'oauthStateExpiresAt' | 'oauthClientSecretSealed'
> & {
  hasSecret: boolean;
  hasClientSecret: boolean;
  /** Only in the answer that opens a sign-in: the URL a person opens to consent. */
  authorizationUrl?: string;
};

export interface McpServersService {
  /**
   * @throws BadRequestError (name, URL refused), ConflictError `mcp_server_exists`, 503 `secrets_unavailable` for a
   * key without PRISM_SECRETS_KEY.
   */
  register(principal: Principal, command: RegisterMcpServer, redirectUri: string): Promise<McpServerView>;
  /**
   * Opens (again) the OAuth sign-in of a server registered with OAuth: its view with `authorizationUrl`.
   * @throws 400 for a server registered without OAuth, 502 `oauth_sign_in_failed` when discovery or registration
   * with its authorization server fails.
   */
  startOAuth(principal: Principal, id: string, redirectUri: string): Promise<McpServerView>;
  /**
   * The callback a person's browser lands on: `state` (single-use, expiring) names the organisation's server.
   * @throws 400 `oauth_state_invalid`, 400 `oauth_sign_in_denied`, 502 `oauth_sign_in_failed`.
   */
  finishOAuth(query: { state: string; code: string | null; error: string | null }): Promise<McpServerView>;
  list(principal: Principal): Promise<McpServerView[]>;
  /** @throws NotFoundError `mcp_server_not_found` (also for other organisations' servers). */
  get(principal: Principal, id: string): Promise<McpServerView>;
  /** The tools the server lists now, as agents would see them (allow-list applied). */
  tools(principal: Principal, id: string): Promise<RemoteMcpTool[]>;
  delete(principal: Principal, id: string): Promise<void>;
  /** @throws BadRequestError `unknown_mcp_server` naming a server the organisation has not registered. */
  checkNames(orgId: string, names: readonly string[], param: string): Promise<void>;
  /**
   * The tools of the named servers for one run (`<server>__<tool>`), read from each server now. A server that
   * cannot be reached costs the run its tools, not the run: the failure is logged and reported in `unavailable`.
   */
  toolsForRun(orgId: string, names: readonly string[]): Promise<{ tools: AnyToolDefinition[]; unavailable: string[] }>;
}

export interface McpServersServiceDeps {
  store: McpServerStore;
  /** Null when PRISM_SECRETS_KEY is not set: servers with a key cannot be registered. */
  secrets: SecretBox | null;
  orgIdFor(principal: Principal): Promise<string>;
  settings: { allowPrivate: boolean; timeoutMs: number; maxBytes: number; maxCallsPerRun: number };
  logger: Logger;
}

const NAME = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;
const HEADER = /^[A-Za-z0-9-]{1,64}$/;
/** Names each run's servers by at most this many (each is read at the run's start). */
export const MAX_SERVERS_PER_RUN = 8;

export function createMcpServersService(deps: McpServersServiceDeps): McpServersService {
  const oauth: McpOAuth | null = deps.secrets
    ? createMcpOAuth({
        store: deps.store,
        secrets: deps.secrets,
        settings: { allowPrivate: deps.settings.allowPrivate, timeoutMs: deps.settings.timeoutMs },
        logger: deps.logger,
      })
    : null;
  const sourceOf = targetSources(deps, oauth);

  const find = async (principal: Principal, id: string): Promise<McpServerRecord> => {
    const found = await deps.store.get(await deps.orgIdFor(principal), id);
    if (!found) throw new NotFoundError('mcp_server', id);
    return found;
  };

  return {
    register: (principal, command, redirectUri) => registerServer(deps, oauth, principal, command, redirectUri),

    async startOAuth(principal, id, redirectUri) {
      const server = await find(principal, id);
      if (server.auth !== 'oauth') {
        throw new BadRequestError(
          `MCP server '${server.name}' was registered without OAuth (auth: ${server.auth}).`,
          null,
          'id',
        );
      }
      if (!oauth) throw secretsUnavailable();
      const { authorizationUrl } = await oauth.start(server, redirectUri);
      return { ...viewOf((await deps.store.get(server.orgId, id)) ?? server), authorizationUrl };
    },

    async finishOAuth(query) {
      if (!oauth) throw secretsUnavailable();
      return viewOf(await oauth.finish(query));
    },

    async list(principal) {
      return (await deps.store.list(await deps.orgIdFor(principal))).map(viewOf);
    },

    async get(principal, id) {
      return viewOf(await find(principal, id));
    },

    async tools(principal, id) {
      const server = await find(principal, id);
      try {
        return allowedOf(server, await withRenewal(sourceOf(server), listRemoteTools));
      } catch (error) {
        throw unreachable(server, error);
      }
    },

    async delete(principal, id) {
      const orgId = await deps.orgIdFor(principal);
      if (!(await deps.store.delete(orgId, id))) throw new NotFoundError('mcp_server', id);
    },

    checkNames: (orgId, names, param) => checkServerNames(deps.store, orgId, names, param),

    toolsForRun: (orgId, names) => readToolsForRun(deps, sourceOf, orgId, names),
  };
}

/** What callers see of a record: everything but the secret and a pending sign-in's state. */
function viewOf({
  secretSealed,
  oauthStateHash: _h,
  oauthStateExpiresAt: _e,
  oauthClientSecretSealed,
  ...rest
}: McpServerRecord): McpServerView {
  return {
    ...rest,
    hasSecret: secretSealed !== null && rest.auth === 'api_key',
    hasClientSecret: oauthClientSecretSealed !== null,
  };
}

function allowedOf(server: McpServerRecord, tools: RemoteMcpTool[]): RemoteMcpTool[] {
  return server.allowedTools === null ? tools : tools.filter((t) => server.allowedTools?.includes(t.name));
}

/**
 * Where and how to call each server; the key or token is unsealed only here, for the call. An OAuth server is read
 * again for each call (its token may have been refreshed by another call).
 */
function targetSources(
  deps: McpServersServiceDeps,
  oauth: McpOAuth | null,
): (server: McpServerRecord) => RemoteTargetSource {
  const targetOf = async (server: McpServerRecord, rejected?: RemoteMcpTarget): Promise<RemoteMcpTarget> => {
    const headers: Record<string, string> = {};
    if (server.auth === 'oauth') {
      if (!oauth) throw secretsUnavailable();
      const stale = rejected?.headers.authorization?.replace(/^Bearer /, '');
      headers.authorization = `Bearer ${await oauth.accessToken(server, stale)}`;
    } else if (server.secretSealed !== null) {
      if (!deps.secrets) throw secretsUnavailable();
      const key = deps.secrets.open(server.secretSealed, server.id);
      if (server.apiKeyHeader) headers[server.apiKeyHeader] = key;
      else headers.authorization = `Bearer ${key}`;
    }
    return {
      url: server.url,
      headers,
      allowPrivate: deps.settings.allowPrivate,
      timeoutMs: server.timeoutMs,
      maxBytes: deps.settings.maxBytes,
    };
  };
  return (server) => {
    const latest = async () =>
      server.auth === 'oauth' ? ((await deps.store.get(server.orgId, server.id)) ?? server) : server;
    return {
      current: async () => targetOf(await latest()),
      renew: async (rejected) => (server.auth === 'oauth' ? targetOf(await latest(), rejected) : null),
    };
  };
}

async function registerServer(
  deps: McpServersServiceDeps,
  oauth: McpOAuth | null,
  principal: Principal,
  command: RegisterMcpServer,
  redirectUri: string,
): Promise<McpServerView> {
  checkRegistration(deps, command);
  try {
    await checkPublicUrl(command.url, deps.settings.allowPrivate);
  } catch (error) {
    const reason = error instanceof SafeFetchError ? error.message : 'invalid URL';
    throw new BadRequestError(`url refused: ${reason}.`, 'url_not_allowed', 'url');
  }
  if (command.apiKeyHeader !== null && !HEADER.test(command.apiKeyHeader)) {
    throw new BadRequestError('api_key_header must be an HTTP header name.', null, 'api_key_header');
  }
  const orgId = await deps.orgIdFor(principal);
  const id = randomUUID();
  const record: McpServerRecord = {
    id,
    orgId,
    name: command.name,
    url: command.url,
    auth: command.oauth ? 'oauth' : command.apiKey === null ? 'none' : 'api_key',
    secretSealed: command.apiKey === null || !deps.secrets ? null : deps.secrets.seal(command.apiKey, id),
    apiKeyHeader: command.apiKey === null ? null : command.apiKeyHeader,
    allowedTools: command.allowedTools === null ? null : [...new Set(command.allowedTools)],
    timeoutMs: command.timeoutMs ?? deps.settings.timeoutMs,
    oauthStatus: command.oauth ? 'pending' : null,
    oauthStateHash: null,
    oauthStateExpiresAt: null,
    oauthClientId: command.oauthClient?.clientId ?? null,
    oauthClientSecretSealed:
      command.oauthClient?.clientSecret && deps.secrets
        ? deps.secrets.seal(command.oauthClient.clientSecret, oauthClientContext(id))
        : null,
    createdAt: new Date(),
  };
  if (!(await deps.store.insert(record))) {
    throw new ConflictError(`An MCP server named '${command.name}' is already registered.`, 'mcp_server_exists');
  }
  if (!command.oauth || !oauth) return viewOf(record);
  try {
    const { authorizationUrl } = await oauth.start(record, redirectUri);
    return { ...viewOf(record), authorizationUrl };
  } catch (error) {
    // A server whose sign-in cannot even start is not kept: registering it again is the retry.
    await deps.store.delete(orgId, id);
    throw error;
  }
}

/** The checks of a registration made before its URL is checked. */
function checkRegistration(deps: McpServersServiceDeps, command: RegisterMcpServer): void {
  if (!NAME.test(command.name) || command.name.length > 32) {
    throw new BadRequestError(
      `MCP server name '${command.name}' must be snake_case letters and digits (at most 32): it prefixes its ` +
        "tools' names (`<name>__<tool>`).",
      null,
      'name',
    );
  }
  if (command.oauth && command.apiKey !== null) {
    throw new BadRequestError('A server signs in with an api_key or with OAuth, not both.', null, 'auth');
  }
  if (command.oauthClient !== null && !command.oauth) {
    throw new BadRequestError('An OAuth client id is for auth type oauth.', null, 'auth.client_id');
  }
  if ((command.apiKey !== null || command.oauth) && !deps.secrets) throw secretsUnavailable();
}

async function checkServerNames(
  store: McpServerStore,
  orgId: string,
  names: readonly string[],
  param: string,
): Promise<void> {
  if (names.length > MAX_SERVERS_PER_RUN) {
    throw new BadRequestError(`A run may name at most ${MAX_SERVERS_PER_RUN} MCP servers.`, null, param);
  }
  const found = new Set((await store.findByNames(orgId, names)).map((s) => s.name));
  const missing = [...new Set(names)].filter((n) => !found.has(n));
  if (missing.length > 0) {
    throw new BadRequestError(
      `Unknown MCP server${missing.length > 1 ? 's' : ''}: ${missing.map((n) => `'${n}'`).join(', ')}. ` +
        'Register it with POST /v1/agent/mcp-servers first.',
      'unknown_mcp_server',
      param,
    );
  }
}

async function readToolsForRun(
  deps: McpServersServiceDeps,
  sourceOf: (server: McpServerRecord) => RemoteTargetSource,
  orgId: string,
  names: readonly string[],
): Promise<{ tools: AnyToolDefinition[]; unavailable: string[] }> {
  if (names.length === 0) return { tools: [], unavailable: [] };
  const servers = await deps.store.findByNames(orgId, names.slice(0, MAX_SERVERS_PER_RUN));
  const budget: RemoteCallBudget = { left: deps.settings.maxCallsPerRun, max: deps.settings.maxCallsPerRun };
  const tools: AnyToolDefinition[] = [];
  const unavailable: string[] = [];
  for (const name of names) {
    const server = servers.find((s) => s.name === name);
    if (!server) {
      unavailable.push(`${name}: not registered`);
      continue;
    }
    try {
      const source = sourceOf(server);
      const listed = allowedOf(server, await withRenewal(source, listRemoteTools));
      tools.push(...remoteToolsOf(server.name, source, listed, budget, deps.logger));
    } catch (error) {
      const reason = unreachable(server, error).message;
      deps.logger.warn('an MCP server of a run could not be read', { server: server.name, reason });
      unavailable.push(`${name}: ${reason}`);
    }
  }
  return { tools, unavailable };
}

function secretsUnavailable(): AppError {
  return new AppError(503, {
    message:
      'This server cannot keep API keys: its operator has not set PRISM_SECRETS_KEY (the key that encrypts them).',
    type: 'service_unavailable',
    code: 'secrets_unavailable',
  });
}

function unreachable(server: McpServerRecord, error: unknown): AppError {
  if (error instanceof AppError) return error;
  const reason = error instanceof RemoteMcpError ? error.message : 'it could not be read';
  return new AppError(502, {
    message: `MCP server '${server.name}' could not be used: ${reason}`,
    type: 'upstream_error',
    code: 'upstream_error',
  });
}
