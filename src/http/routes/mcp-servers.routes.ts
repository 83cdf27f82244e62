/**
 * Remote MCP servers for agents (`/v1/agent/mcp-servers`, docs/agents.md): register, list, one, its tools, delete.
 * Org-scoped in the service; each handler parses, calls one service, sends. No answer carries a key.
 */
import { Router } from 'express';
import type { McpServersService } from '../../services/agent-mcp/mcp-servers.service';
import {
  mcpServerIdParamsSchema,
  registerMcpServerBodySchema,
  toMcpServerWire,
  toRegisterMcpServer,
  toRemoteToolWire,
} from '../../wire/mcp-servers.schemas';
import { parseInput } from '../../wire/validation';
import { userOf } from '../request-context';

export function mcpServersRoutes(servers: McpServersService): Router {
  const router = Router();

  router.post('/agent/mcp-servers', async (req, res) => {
    const body = parseInput(registerMcpServerBodySchema, req.body, 'body');
    res.status(201).json(toMcpServerWire(await servers.register(userOf(req), toRegisterMcpServer(body))));
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
