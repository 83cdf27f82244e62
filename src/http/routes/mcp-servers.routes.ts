/**
 * Remote MCP servers for agents (`/v1/agent/mcp-servers`, docs/agents.md): register, list, one, its tools, delete,
 * and the OAuth sign-in (start; the callback a person's browser lands on, which needs no key: its single-use state
 * names the organisation's server). Org-scoped in the service; each handler parses, calls one service, sends. No
 * answer carries a key or a token.
 */
import { Router, type Request } from 'express';
import type { McpServersService } from '../../services/agent-mcp/mcp-servers.service';
import {
  mcpServerIdParamsSchema,
  oauthCallbackQuerySchema,
  registerMcpServerBodySchema,
  toMcpServerWire,
  toRegisterMcpServer,
  toRemoteToolWire,
} from '../../wire/mcp-servers.schemas';
import { userOf } from '../request-context';
import { z } from 'zod';
import { declare, route } from '../api/route-declaration';
import { mcpServerListSchema, mcpServerSchema, remoteToolListSchema } from '../api/response-schemas';

const tag = 'Agents';
const serverList = z.looseObject({ object: z.literal('list'), data: mcpServerListSchema });

export const MCP_SERVER_ROUTES = {
  register: declare({
    method: 'post',
    path: '/agent/mcp-servers',
    tag,
    summary:
      'Register a remote MCP server for agents (its key is stored encrypted, never returned; with auth.type ' +
      'oauth the answer carries the authorization_url a person opens to sign in)',
    auth: 'key',
    body: registerMcpServerBodySchema,
    responses: { 201: { description: 'The server', schema: mcpServerSchema } },
    errors: [400, 409],
  }),
  callback: declare({
    method: 'get',
    path: '/agent/mcp-servers/oauth/callback',
    tag,
    summary: "Where a remote server's authorization server sends the person back (no key: the state is the proof)",
    auth: 'open',
    query: oauthCallbackQuerySchema,
    responses: { 200: { description: 'The server, signed in', schema: mcpServerSchema } },
    errors: [400, 404],
  }),
  startOAuth: declare({
    method: 'post',
    path: '/agent/mcp-servers/:id/oauth/start',
    tag,
    summary: 'Sign in to a remote server again (a new authorization_url)',
    auth: 'key',
    params: mcpServerIdParamsSchema,
    responses: { 200: { description: 'The server', schema: mcpServerSchema } },
    errors: [400, 404],
  }),
  list: declare({
    method: 'get',
    path: '/agent/mcp-servers',
    tag,
    summary: 'List registered MCP servers',
    auth: 'key',
    responses: { 200: { description: 'The servers', schema: serverList } },
  }),
  get: declare({
    method: 'get',
    path: '/agent/mcp-servers/:id',
    tag,
    summary: 'One registered MCP server',
    auth: 'key',
    params: mcpServerIdParamsSchema,
    responses: { 200: { description: 'The server', schema: mcpServerSchema } },
    errors: [404],
  }),
  tools: declare({
    method: 'get',
    path: '/agent/mcp-servers/:id/tools',
    tag,
    summary: "A registered server's tools, as agents call them",
    auth: 'key',
    params: mcpServerIdParamsSchema,
    responses: {
      200: {
        description: 'The tools',
        schema: z.looseObject({ object: z.literal('list'), data: remoteToolListSchema }),
      },
    },
    errors: [404, 502, 504],
  }),
  delete: declare({
    method: 'delete',
    path: '/agent/mcp-servers/:id',
    tag,
    summary: 'Remove a registered MCP server',
    auth: 'key',
    params: mcpServerIdParamsSchema,
    responses: {
      200: {
        description: 'Removed',
        schema: z.object({ id: z.string(), object: z.literal('mcp_server'), deleted: z.literal(true) }),
      },
    },
    errors: [404],
  }),
};

export const OAUTH_CALLBACK_PATH = '/v1/agent/mcp-servers/oauth/callback';

export function mcpServersRoutes(servers: McpServersService, options: { publicUrl: string | undefined }): Router {
  const router = Router();
  /** Where the authorization server sends the person back: this deployment's public URL, or the request's origin. */
  const redirectUriFor = (req: Request): string =>
    `${options.publicUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`}${OAUTH_CALLBACK_PATH}`;

  route(router, MCP_SERVER_ROUTES.register, async (req, res, input) => {
    const body = input.body();
    const registered = await servers.register(userOf(req), toRegisterMcpServer(body), redirectUriFor(req));
    res.status(201).json(toMcpServerWire(registered));
  });

  route(router, MCP_SERVER_ROUTES.callback, async (req, res, input) => {
    const query = input.query();
    const server = await servers.finishOAuth({
      state: query.state,
      code: query.code ?? null,
      error: query.error ?? null,
    });
    res.json(toMcpServerWire(server));
  });

  route(router, MCP_SERVER_ROUTES.startOAuth, async (req, res, input) => {
    const { id } = input.params();
    res.json(toMcpServerWire(await servers.startOAuth(userOf(req), id, redirectUriFor(req))));
  });

  route(router, MCP_SERVER_ROUTES.list, async (req, res) => {
    res.json({ object: 'list', data: (await servers.list(userOf(req))).map(toMcpServerWire) });
  });

  route(router, MCP_SERVER_ROUTES.get, async (req, res, input) => {
    const { id } = input.params();
    res.json(toMcpServerWire(await servers.get(userOf(req), id)));
  });

  route(router, MCP_SERVER_ROUTES.tools, async (req, res, input) => {
    const { id } = input.params();
    const principal = userOf(req);
    const server = await servers.get(principal, id);
    const tools = await servers.tools(principal, id);
    res.json({ object: 'list', data: tools.map((tool) => toRemoteToolWire(server, tool)) });
  });

  route(router, MCP_SERVER_ROUTES.delete, async (req, res, input) => {
    const { id } = input.params();
    await servers.delete(userOf(req), id);
    res.json({ id, object: 'mcp_server', deleted: true });
  });

  return router;
}
