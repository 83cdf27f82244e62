/**
 * `createMcpServer`: an McpServer carrying Prism's tools, resources and prompts for one caller.
 *
 * The HTTP route builds one per request (stateless, see README §MCP) and the stdio command builds one for the
 * owner. Both go through the same tool list and the same dispatcher, so the two transports cannot drift.
 */
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type ListToolsResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { ExecutionsService } from '../services/executions/executions.types';
import type { FilesService } from '../services/files.service';
import type { HubService } from '../services/hub/hub.service';
import type { InputResolverDeps } from '../services/inputs/resolve-input';
import type { PredictionsService } from '../services/predictions/predictions.types';
import type { SkillsService } from '../services/skills/skills.service';
import { registerSkillPrompts, skillPromptHandlers, type SkillPrompt } from './mcp-prompts';
import { registerHubResources } from './mcp-resources';
import { registerSkillResources } from './mcp-skill-resources';
import { createToolDispatcher, registerTools, type McpCallScope, type McpTool, type ToolExtra } from './mcp-tool';
import { registryTools, type RegistryToolsDeps } from './registry-tools';
import { agentTools } from './tools/agents.mcp-tools';
import { extractTools, predictionTools } from './tools/extract.mcp-tools';
import { fileTools } from './tools/files.mcp-tools';
import { hubTools } from './tools/hub.mcp-tools';
import { skillTools } from './tools/skills.mcp-tools';

/** The services the MCP adapter calls. */
export interface McpServices {
  predictions: PredictionsService;
  files: FilesService;
  hub: HubService;
  inputs: InputResolverDeps;
  skills: SkillsService;
  executions: ExecutionsService;
  /** The agent runtime's tool registry, exposed as MCP tools too. */
  agents: RegistryToolsDeps;
  /** The built-in skills offered as prompts. */
  prompts: readonly SkillPrompt[];
}

/** Everything needed to build servers: the tool list is made once and shared by every request. */
export interface McpServerFactory {
  tools: readonly McpTool[];
  create(scope: McpCallScope): McpServer;
}

const INSTRUCTIONS =
  'Prism extracts structured JSON from images, documents, video and audio. Find a domain with list_hub_domains ' +
  '(or write a JSON schema), then call extract_image / extract_document / extract_video / extract_audio with a ' +
  'url, a file_id from upload_file, or base64 data. Errors come back as isError results whose text is ' +
  '{"error":{"code":…}}.';

export function createMcpServerFactory(services: McpServices, version: string): McpServerFactory {
  const tools: McpTool[] = [
    ...extractTools(services.predictions),
    ...predictionTools(services.predictions),
    ...hubTools(services.hub),
    ...fileTools({ files: services.files, inputs: services.inputs }),
    ...skillTools(services.skills),
    ...agentTools(services.executions),
    ...registryTools(services.agents),
  ];
  const names = new Set<string>();
  for (const tool of tools) {
    if (names.has(tool.name)) throw new Error(`MCP tool '${tool.name}' is defined twice`);
    names.add(tool.name);
  }
  const prompts = skillPromptHandlers(services.prompts);
  const dispatcher = createToolDispatcher(tools);
  // Every Server builds an Ajv instance unless given one (a few ms each); one shared validator serves them all.
  const jsonSchemaValidator = new AjvJsonSchemaValidator();
  const newServer = (): McpServer =>
    new McpServer({ name: 'prism', title: 'Prism', version }, { instructions: INSTRUCTIONS, jsonSchemaValidator });
  // The SDK turns every zod schema into JSON Schema on each tools/list (about 8 ms for this list); the list is the
  // same for every caller, so it is computed once, by the SDK itself (tools registered the SDK's way on a server
  // of its own), and served from memory.
  let listed: Promise<ListToolsResult> | null = null;
  return {
    tools,
    create(scope) {
      if (!listed) {
        const reference = newServer();
        registerTools(reference, tools, scope);
        listed = listToolsOnce(reference);
      }
      const cached = listed;
      const server = newServer();
      // Two handlers instead of one SDK registration per tool (see createToolDispatcher).
      server.server.registerCapabilities({ tools: {} });
      server.server.setRequestHandler(ListToolsRequestSchema, () => cached);
      server.server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
        dispatcher.call(request.params.name, request.params.arguments, extra as unknown as ToolExtra, scope),
      );
      registerHubResources(server, services.hub);
      registerSkillResources(server, services.skills, scope.principal);
      registerSkillPrompts(server, prompts);
      return server;
    },
  };
}

/** Asks a server for its tools/list answer over an in-memory pair, as a client would, then closes it. */
async function listToolsOnce(server: McpServer): Promise<ListToolsResult> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const answer = new Promise<ListToolsResult>((resolve, reject) => {
    clientSide.onmessage = (message) => {
      if ('result' in message) resolve(message.result as ListToolsResult);
      else reject(new Error('tools/list failed on the in-memory server'));
    };
  });
  await clientSide.start();
  await clientSide.send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
  try {
    return await answer;
  } finally {
    await server.close();
  }
}
