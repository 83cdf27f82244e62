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
import { parseInput } from '../../wire/validation';
import { userOf } from '../request-context';

export const OAUTH_CALLBACK_PATH = '/v1/agent/mcp-servers/oauth/callback';

export function mcpServersRoutes(servers: McpServersService, options: { publicUrl: string | undefined }): Router {
  const router = Router();
  /** Where the authorization server sends the person back: this deployment's public URL, or the request's origin. */
  const redirectUriFor = (req: Request): string =>
    `${options.publicUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`}${OAUTH_CALLBACK_PATH}`;

  router.post('/agent/mcp-servers', async (req, res) => {
    const body = parseInput(registerMcpServerBodySchema, req.body, 'body');
    const registered = await servers.register(userOf(req), toRegisterMcpServer(body), redirectUriFor(req));
    res.status(201).json(toMcpServerWire(registered));
  });

  router.get('/agent/mcp-servers/oauth/callback', async (req, res) => {
    const query = parseInput(oauthCallbackQuerySchema, req.query, 'query');
    const server = await servers.finishOAuth({
      state: query.state,
      code: query.code ?? null,
      error: query.error ?? null,
    });
    res.json(toMcpServerWire(server));
  });

  router.post('/agent/mcp-servers/:id/oauth/start', async (req, res) => {
    const { id } = parseInput(mcpServerIdParamsSchema, req.params, 'path');
    res.json(toMcpServerWire(await servers.startOAuth(userOf(req), id, redirectUriFor(req))));
  });

  router.get('/agent/mcp-servers', async (req, res) => {
    res.json({ object: 'list', data: (await servers.list(userOf(req))).map(toMcpServerWire) });
  });

  router.get('/agent/mcp-servers/:id', async (req, res) => {
    const { id } = parseInput(mcpServerIdParamsSchema, req.params, 'path');
    res.json(toMcpServerWire(await servers.get(userOf(req), id)));
  });

  router.get('/agent/mcp-servers/:id/tools', async (req, res) => {
    const { id } = parseInput(mcpServerIdParamsSchema, req.params, 'path');
    const principal = userOf(req);
    const server = await servers.get(principal, id);
    const tools = await servers.tools(principal, id);
    res.json({ object: 'list', data: tools.map((tool) => toRemoteToolWire(server, tool)) });
  });

  router.delete('/agent/mcp-servers/:id', async (req, res) => {
    const { id } = parseInput(mcpServerIdParamsSchema, req.params, 'path');
    await servers.delete(userOf(req), id);
    res.json({ id, object: 'mcp_server', deleted: true });
  });

  return router;
}
