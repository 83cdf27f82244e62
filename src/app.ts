/**
 * Builds the HTTP request listener from a container: the express application (middleware order, routers and the
 * error handler) behind the gateway fast lane, which takes chat completions before express sees them; and the
 * `upgrade` listener of the WebSocket decision stream.
 * It never listens and reads no environment, so tests and the server build it the same way.
 */
import type { RequestListener } from 'node:http';
import express, { type Express } from 'express';
import type { Container } from './container';
import { AuthenticationRequiredError } from './domain/errors';
import { authenticate } from './http/middleware/auth';
import { createGatewayFastLane } from './http/gateway-fast-lane';
import { createErrorResponder, errorHandler, JSON_TOO_DEEP, notFoundHandler } from './http/middleware/error-handler';
import { jsonBytesTooDeep } from './lib/json-bounds';
import { requestId } from './http/middleware/request-id';
import { filesRoutes } from './http/routes/files.routes';
import { healthRoutes } from './http/routes/health.routes';
import { opsRoutes } from './http/routes/ops.routes';
import { referenceRoutes } from './http/routes/reference.routes';
import { createCors } from './http/cors';
import { observeRequest } from './http/request-observer';
import { rateLimit } from './http/middleware/rate-limit';
import { compatRoutes } from './http/routes/compat.routes';
import { feedbackRoutes } from './http/routes/feedback.routes';
import { generateRoutes } from './http/routes/generate.routes';
import { hubRoutes, legacyHubRoutes } from './http/routes/hub.routes';
import { predictionsRoutes } from './http/routes/predictions.routes';
import { mcpServicesOf } from './container/mcp-services';
import { createMcpServerFactory } from './mcp/mcp-server';
import { mcpRoutes } from './mcp/mcp.routes';
import { requestBudget } from './http/middleware/request-budget';
import { setFallbackWorkLimits } from './lib/work-budget';
import { mcpOAuthRoutes } from './mcp/auth/oauth-server';
import { createMemoryRateLimitStore } from './backend/local/metering-stores';
import { DEFAULT_MCP_TOOLSETS, parseToolsets } from './mcp/mcp-toolsets';
import { createToolCallLimiter } from './mcp/mcp-rate-limits';
import { agentsRoutes } from './http/routes/agents.routes';
import { kindExecuteRoutes } from './http/routes/kind-execute.routes';
import { agentRunsRoutes } from './http/routes/agent-runs.routes';
import { mcpServersRoutes } from './http/routes/mcp-servers.routes';
import { adminRoutes } from './http/routes/admin.routes';
import { artifactsRoutes } from './http/routes/artifacts.routes';
import { decisionsRoutes } from './http/routes/decisions.routes';
import { createDecisionUpgrade, type DecisionUpgrade } from './ws/decision-upgrade';
import { skillsRoutes } from './http/routes/skills.routes';
import { langgraphRoutes } from './http/routes/langgraph.routes';
import { evaluationsRoutes } from './http/routes/evaluations.routes';
import { chatsRoutes } from './http/routes/chats.routes';

const GATEWAY_PREFIXES = ['/v1/compat', '/v1/openai'];

/** The listener to serve: the gateway fast lane first, express for everything it leaves. */
export function createRequestListener(container: Container): RequestListener {
  const app = createApp(container);
  const fastLane = createGatewayFastLane({
    auth: container.services.auth,
    limiter: container.gateway.limiter,
    compat: { chat: container.gateway.chat },
    respondError: createErrorResponder(container.logger, container.config.limits),
    maxJsonBytes: container.config.limits.maxJsonBytes,
    maxJsonDepth: container.config.limits.maxJsonDepth,
    workBudget: container.config.limits.workBudget,
    trustProxy: app.get('trust proxy fn') as (addr: string, index: number) => boolean,
  });
  const cors = createCors(container.config.server.corsOrigins);
  const observed = { logger: container.logger, metrics: container.metrics };
  return (req, res) => {
    observeRequest(req, res, observed);
    // Preflights are answered before authentication and the rate limits: they never use a caller's budget.
    if (cors(req, res)) return void Object.assign(req, { routePattern: 'preflight' });
    if (!fastLane(req, res)) app(req, res);
  };
}

/** The HTTP server's `upgrade` listener: the WebSocket decision stream, with the gateway's auth and budget. */
export function createUpgradeListener(container: Container): DecisionUpgrade {
  // express compiles `trust proxy` the same way for the request listener; a bare app does it here.
  const probe = express();
  probe.set('trust proxy', container.config.server.trustProxy);
  const { decisions } = container.config;
  return createDecisionUpgrade({
    auth: container.services.auth,
    limiter: container.gateway.limiter,
    service: container.gateway.decisions,
    respondError: createErrorResponder(container.logger, container.config.limits),
    trustProxy: probe.get('trust proxy fn') as (addr: string, index: number) => boolean,
    options: {
      maxFrameBytes: decisions.maxFrameBytes,
      idleTimeoutMs: decisions.idleTimeoutMs,
      maxBufferedBytes: decisions.maxBufferedBytes,
    },
    caps: { perCaller: decisions.streamsPerCaller, total: decisions.maxStreams },
    logger: container.logger,
  });
}

/** The owner organisation in single-user mode (looked up once), else null: its MCP tool calls are not limited. */
function ownerOrgIdOf(container: Container): () => Promise<string | null> {
  let owner: Promise<string | null> | null = null;
  return () => {
    if (!container.config.auth.singleUser) return Promise.resolve(null);
    owner ??= container.services.accounts.ownerPrincipal().then((p) => p?.orgId ?? null);
    return owner;
  };
}

/** The licence package.json names, for the API document's `info.license`. */
function packageLicence(): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('../package.json') as { license: string }).license;
}

export function createApp(container: Container): Express {
  const { config, services, logger } = container;
  const app = express();
  app.disable('x-powered-by');
  // API bodies change per call; ETags would only cost a hash of every body.
  app.set('etag', false);
  app.set('trust proxy', config.server.trustProxy);
  app.set('query parser', 'simple');

  app.use(requestId());
  app.use(
    opsRoutes({
      version: container.version,
      probeStorage: async () => void (await container.stores.accounts.countOrgs()),
      modelCount: () => container.gateway.catalogue.list().length,
      metrics: container.metrics,
    }),
  );
  app.use(referenceRoutes(container.version, packageLicence(), () => app));
  // Before the API's JSON parser: /mcp reads its own bodies, with a limit sized for base64 media.
  app.use(
    '/mcp',
    mcpRoutes({
      factory: createMcpServerFactory(mcpServicesOf(container), container.version, {
        onToolCall: (tool, outcome) => container.metrics.mcpToolCalls.inc({ tool, outcome }),
      }),
      auth: services.auth,
      oauth: config.mcp.oauth.enabled ? services.mcpOAuth : null,
      headerless: config.mcp.oauth.headerless,
      limiter: createToolCallLimiter(container.gateway.rateLimitStore, config.mcp.toolCalls, ownerOrgIdOf(container)),
      promptLimiter: container.gateway.limiter,
      logger,
      maxJsonBytes: config.mcp.maxJsonBytes,
      maxJsonDepth: config.limits.maxJsonDepth,
      allowedHosts: config.mcp.allowedHosts,
      defaultToolsets: parseToolsets(config.mcp.toolsets, DEFAULT_MCP_TOOLSETS, 'PRISM_MCP_TOOLSETS'),
      publicUrl: config.server.publicUrl,
      signals: container.signals,
      workBudget: config.limits.workBudget,
    }),
  );
  // The MCP OAuth endpoints (/authorize, /token, /register, /revoke, the metadata documents, the consent POST).
  if (config.mcp.oauth.enabled) {
    app.use(
      mcpOAuthRoutes({
        oauth: services.mcpOAuth,
        auth: services.auth,
        singleUser: config.auth.singleUser,
        ownerPrincipal: () => services.accounts.ownerPrincipal(),
        publicUrl: config.server.publicUrl,
        allowedHosts: config.mcp.allowedHosts,
        limitStore: createMemoryRateLimitStore({ maxKeys: 50_000 }),
        logger,
        allowPrivateUrls: config.fetch.allowPrivate,
      }),
    );
  }
  // Bodies are read after authentication, so a caller without a valid key gets 401, never a 422 about the body.
  const parseJson = express.json({
    limit: config.limits.maxJsonBytes,
    // Checked on the raw bytes before JSON.parse: nothing recursive ever sees a body nested past the limit.
    verify: (_req, _res, raw) => {
      if (jsonBytesTooDeep(raw, config.limits.maxJsonDepth)) throw Object.assign(new Error(), { type: JSON_TOO_DEEP });
    },
  });
  // Once the body is read, the rest of the request runs on its work budget (src/lib/work-budget.ts).
  const json = [parseJson, requestBudget(config.limits.workBudget)];
  setFallbackWorkLimits(config.limits.workBudget.keyed);

  const mainAuth = authenticate(services.auth, 'main');
  const gatewayAuth = authenticate(services.auth, 'gateway');
  const fileOptions = {
    maxUploadBytes: config.limits.maxUploadBytes,
    publicUrl: config.server.publicUrl,
    urlTtlSeconds: config.limits.urlTtlSeconds,
  };

  const limited = rateLimit(container.gateway.limiter);
  const compat = compatRoutes({
    catalogue: container.gateway.catalogue,
    chat: container.gateway.chat,
    embeddings: container.gateway.embeddings,
    transcriptions: container.gateway.transcriptions,
    maxTranscriptionBytes: config.limits.maxTranscriptionBytes,
  });
  const decisions = decisionsRoutes({ decisions: container.gateway.decisions });
  // Every route authenticates, the open ones included: anonymous callers pass, but a non-empty key that matches
  // no active key is a 401 everywhere and never falls back to anonymous (spec: Authentication rule 4).
  for (const prefix of GATEWAY_PREFIXES) {
    app.use(prefix, gatewayAuth);
    app.use(prefix, healthRoutes(container.version));
    app.use(`${prefix}/files`, json, filesRoutes(services.files, { ...fileOptions, surface: 'gateway' }));
    app.use(prefix, limited, json, compat, decisions);
  }

  app.use('/v1', mainAuth);
  // The hub and the older catalogue routes are open, as the spec declares no auth for them.
  app.use('/v1/hub', json, hubRoutes(services.hub));
  app.use('/v1/schema', json);
  app.use('/v1', legacyHubRoutes(services.hub, container.engine.models));
  // Skills are open too: guests list and look up public skills (POST /v1/skills/lookup); writes need a key.
  app.use('/v1/skills', json, skillsRoutes(services.skills, { publicUrl: config.server.publicUrl }));
  // Every POST on the main API needs a key: refuse a keyless one before its body is read or validated.
  app.use('/v1', (req, _res, next) => {
    next(req.method === 'POST' && req.principal?.kind !== 'user' ? new AuthenticationRequiredError() : undefined);
  });
  app.use('/v1', json);
  app.use('/v1', healthRoutes(container.version));
  app.use('/v1/files', filesRoutes(services.files, { ...fileOptions, surface: 'main' }));
  app.use('/v1', generateRoutes(services.predictions));
  app.use('/v1/predictions', predictionsRoutes(services.predictions, services.hub));
  app.use('/v1', agentsRoutes(container.agents.agents, container.agents.executions));
  app.use('/v1', agentRunsRoutes(container.agents.executions));
  app.use('/v1', mcpServersRoutes(container.agents.mcpServers, { publicUrl: config.server.publicUrl }));
  app.use('/v1', kindExecuteRoutes(container.agents.executions));
  app.use('/v1/artifacts', artifactsRoutes(services.artifacts));
  app.use('/v1/chat', chatsRoutes(services.chats));
  app.use('/v1/feedback', feedbackRoutes(services.feedback));
  app.use('/v1/experimental/feedback', feedbackRoutes(services.feedback));
  app.use('/v1/evaluations', evaluationsRoutes(container.evaluations.service));
  app.use('/v1/langgraph', langgraphRoutes(services.langgraph));
  app.use('/v1/admin', adminRoutes(services.admin));

  app.use(notFoundHandler());
  app.use(errorHandler(logger, config.limits));
  return app;
}
