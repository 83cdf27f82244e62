/**
 * `createMcpServer`: an McpServer carrying Prism's tools, resources and prompts for one caller.
 *
 * The HTTP route builds one per request (stateless, see README §MCP) and the stdio command builds one for the
 * owner. Both go through the same tool list and the same `registerTools`, so the two transports cannot drift.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Container } from '../container';
import type { FilesService } from '../services/files.service';
import type { HubService } from '../services/hub/hub.service';
import type { InputResolverDeps } from '../services/predictions/inputs';
import type { PredictionsService } from '../services/predictions/predictions.service';
import { registerHubResources } from './mcp-resources';
import { registerTools, type McpCallScope, type McpTool } from './mcp-tool';
import { registryTools, type RegistryToolsDeps } from './registry-tools';
import { extractTools, predictionTools } from './tools/extract.tools';
import { fileTools } from './tools/files.tools';
import { hubTools } from './tools/hub.tools';

/** The services the MCP adapter calls. */
export interface McpServices {
  predictions: PredictionsService;
  files: FilesService;
  hub: HubService;
  inputs: InputResolverDeps;
  /** The agent runtime's tool registry, exposed as MCP tools too. */
  agents: RegistryToolsDeps;
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
    ...registryTools(services.agents),
  ];
  const names = new Set<string>();
  for (const tool of tools) {
    if (names.has(tool.name)) throw new Error(`MCP tool '${tool.name}' is defined twice`);
    names.add(tool.name);
  }
  return {
    tools,
    create(scope) {
      const server = new McpServer({ name: 'prism', title: 'Prism', version }, { instructions: INSTRUCTIONS });
      registerTools(server, tools, scope);
      registerHubResources(server, services.hub);
      return server;
    },
  };
}

/** The MCP adapter's view of the composition root: the services it calls, with inputs read as the API reads them. */
export function mcpServicesOf(container: Container): McpServices {
  const { files, predictions, hub } = container.services;
  return {
    predictions,
    files,
    hub,
    inputs: {
      openFile: async (principal, fileId) => {
        const { file, stream } = await files.openContent(principal, fileId);
        return { filename: file.filename, stream };
      },
      fetch: container.config.fetch,
    },
    agents: { registry: container.agents.tools, toolContext: container.agents.toolContext },
  };
}
