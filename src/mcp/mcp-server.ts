/**
 * `createMcpServer`: an McpServer carrying Prism's tools, resources and prompts for one caller.
 *
 * The HTTP route builds one per request (stateless, see docs/mcp.md) and the stdio command builds one for the
 * owner. Both go through the same tool list and the same dispatcher, so the two transports cannot drift.
 */
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type ListToolsResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { ExecutionsService } from '../services/executions/executions.types';
import type { FilesService } from '../services/files.service';
import type { HubService } from '../services/hub/hub.service';
import type { InputResolverDeps } from '../services/inputs/resolve-input';
import type { PredictionsService } from '../services/predictions/predictions.types';
import type { SkillsService } from '../services/skills/skills.service';
import { registerSkillPrompts, skillPromptHandlers, type SkillPrompt, type SkillPromptHandlers } from './mcp-prompts';
import { registerResources, resourceHandlers, type ResourceHandlers } from './mcp-resource-handlers';
import { hubResources } from './mcp-resources';
import { skillResources } from './mcp-skill-resources';
import {
  createToolDispatcher,
  isOffered,
  registerTools,
  type McpCallScope,
  type McpTool,
  type ToolCallObserver,
  type ToolExtra,
} from './mcp-tool';
import type { McpToolset } from './mcp-toolsets';
import type { LocalFiles } from './mcp-local-files';
import { INLINE_ICONS, type McpIcon } from './mcp-icon';
import { callerTasks, type CallerTasks } from './mcp-tasks';
import {
  LEGACY_TASKS_CAPABILITY,
  legacyTaskStore,
  serveTaskResults,
  startLegacyTask,
  withTaskSupport,
} from './mcp-legacy-tasks';
import { approvalCodec, type ApprovalState } from './mcp-approvals';
import type { RequestStateCodec } from '@modelcontextprotocol/server';
import { registryTools, type RegistryToolsDeps } from './registry-tools';
import { compactToolList } from './mcp-tool-list';
import { agentTools } from './tools/agents.mcp-tools';
import { extractTools, predictionTools } from './tools/extract.mcp-tools';
import { fileTools } from './tools/files.mcp-tools';
import { hubTools } from './tools/hub.mcp-tools';
import { runSkillTool } from './tools/run-skill.mcp-tool';
import { skillTools } from './tools/skills.mcp-tools';

/** The agent tools the default `run` toolset shares with `agents` (run_skill is its own). */
const RUN_TOOLS = new Set(['execute_agent', 'get_execution']);

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
  /** Prism's signing secret (PRISM_SECRET or the data folder's): seals approval request states (mcp-approvals.ts). */
  signingSecret: string;
}

/**
 * What one caller is served, as plain functions: the 2025 server (`create`, SDK v1) and the 2026-07-28 one
 * (mcp-modern-server.ts, SDK v2) are both built from these, so the two eras answer the same.
 */
export interface McpCallerParts {
  listTools(): Promise<ListToolsResult>;
  callTool(name: string, args: unknown, extra: ToolExtra): Promise<CallToolResult>;
  resources: ResourceHandlers;
  prompts: SkillPromptHandlers;
  /** Long tools as tasks (the 2026-07-28 tasks extension, mcp-tasks.ts). */
  tasks: CallerTasks;
  /** `resume_execution` for an approval answered in the 2026-07-28 era (mcp-approvals.ts), whatever the toolsets. */
  resume(args: Record<string, unknown>, extra: ToolExtra): Promise<CallToolResult>;
}

/** The server's name, title, version, icons and instructions, the same in both eras. */
export interface McpServerInfo {
  name: string;
  title: string;
  version: string;
  /** Inline (a data URL): the 2025 era and stdio; the HTTP 2026-07-28 era links to /mcp/icon.svg instead. */
  icons: McpIcon[];
  instructions: string;
}

/** Everything needed to build servers: the tool list is made once and shared by every request. */
export interface McpServerFactory {
  tools: readonly McpTool[];
  info: McpServerInfo;
  /** What `scope`'s caller is served (its toolsets' tools, those an anonymous caller can call, for one). */
  parts(scope: McpCallScope): McpCallerParts;
  /** A 2025-era server (SDK v1) for one caller. */
  create(scope: McpCallScope): McpServer;
  /** Seals the request state of approvals asked as `input_required` (the same key on every replica). */
  approvals: RequestStateCodec<ApprovalState>;
}

const INSTRUCTIONS =
  'Prism extracts structured JSON from images, documents, video and audio. Find a domain with list_hub_domains ' +
  '(or write a JSON schema), then call extract_image / extract_document / extract_video / extract_audio with a ' +
  'url, a file_id from upload_file, or base64 data. run_skill runs a skill by name (invoice, receipt, …) and ' +
  'execute_agent runs an agent; get_execution reads a run back. Errors come back as isError results whose text is ' +
  '{"error":{"code":…}}.';

/**
 * `localFiles` (prism mcp only) lets the extraction tools and upload_file read a local `path`; `onToolCall` is told
 * of every tool call answered (the HTTP server's metrics).
 */
export function createMcpServerFactory(
  services: McpServices,
  version: string,
  options: { localFiles?: LocalFiles; onToolCall?: ToolCallObserver } = {},
): McpServerFactory {
  const inSet = (toolset: McpToolset, list: McpTool[]): McpTool[] => list.map((tool) => ({ ...tool, toolset }));
  const tools: McpTool[] = [
    ...inSet('extraction', [
      ...extractTools(services.predictions, options.localFiles),
      ...predictionTools(services.predictions),
    ]),
    ...inSet('hub', hubTools(services.hub)),
    ...inSet('files', fileTools({ files: services.files, inputs: services.inputs, local: options.localFiles })),
    ...inSet('skills', skillTools(services.skills)),
    ...inSet('agents', agentTools(services.executions)).map((tool) =>
      RUN_TOOLS.has(tool.name) ? { ...tool, alsoIn: ['run' as const] } : tool,
    ),
    ...inSet('agent_tools', registryTools(services.agents)),
    ...inSet('run', [runSkillTool(services.executions)]),
  ];
  const names = new Set<string>();
  for (const tool of tools) {
    if (names.has(tool.name)) throw new Error(`MCP tool '${tool.name}' is defined twice`);
    names.add(tool.name);
  }
  const prompts = skillPromptHandlers(services.prompts);
  const dispatcher = createToolDispatcher(tools, options.onToolCall);
  // Every Server builds an Ajv instance unless given one (a few ms each); one shared validator serves them all.
  const jsonSchemaValidator = new AjvJsonSchemaValidator();
  const info: McpServerInfo = {
    name: 'prism',
    title: 'Prism',
    version,
    icons: INLINE_ICONS,
    instructions: INSTRUCTIONS,
  };
  const newServer = (taskStore?: TaskStore): McpServer =>
    new McpServer(
      { name: info.name, title: info.title, version, icons: INLINE_ICONS },
      {
        instructions: INSTRUCTIONS,
        jsonSchemaValidator,
        ...(taskStore ? { taskStore, capabilities: { tasks: LEGACY_TASKS_CAPABILITY } } : {}),
      },
    );
  // The SDK turns every zod schema into JSON Schema on each tools/list (about 8 ms for this list); the list is the
  // same for every caller, so it is computed once, by the SDK itself (tools registered the SDK's way on a server
  // of its own), and served from memory.
  let listed: Promise<ListToolsResult> | null = null;
  // The answer per (toolsets, anonymous or not): a handful of entries, each a filter of the full list.
  const views = new Map<string, Promise<ListToolsResult>>();
  const listFor = (scope: McpCallScope): Promise<ListToolsResult> => {
    if (!listed) {
      const reference = newServer();
      registerTools(reference, tools, scope);
      listed = listToolsOnce(reference).then(compactToolList);
    }
    const anonymous = scope.principal.kind === 'anonymous';
    const key = `${scope.toolsets.join(',')}|${anonymous}`;
    let view = views.get(key);
    if (!view) {
      const offered = new Set(
        tools
          .filter((t) => t.toolset !== undefined && isOffered(t, scope.toolsets))
          .filter((t) => !(anonymous && t.needsAccount))
          .map((t) => t.name),
      );
      view = listed.then((all) => ({ ...all, tools: all.tools.filter((t) => offered.has(t.name)) }));
      views.set(key, view);
    }
    return view;
  };
  const parts = (scope: McpCallScope): McpCallerParts => {
    const listed = listFor(scope);
    const callTool: McpCallerParts['callTool'] = (name, args, extra) => dispatcher.call(name, args, extra, scope);
    return {
      listTools: () => listed,
      callTool,
      tasks: callerTasks(callTool, services, scope.principal),
      resume: (args, extra) =>
        dispatcher.call('resume_execution', args, extra, { ...scope, toolsets: [...scope.toolsets, 'agents'] }),
      resources: resourceHandlers([hubResources(services.hub), skillResources(services.skills, scope.principal)]),
      prompts,
    };
  };
  return {
    tools,
    info,
    parts,
    approvals: approvalCodec(services.signingSecret),
    create(scope) {
      const served = parts(scope);
      // The 2025-11-25 experimental tasks, on the records the runs keep (mcp-legacy-tasks.ts).
      const taskStore = legacyTaskStore(services, scope.principal, served.tasks);
      const server = newServer(taskStore);
      // Two handlers instead of one SDK registration per tool (see createToolDispatcher).
      server.server.registerCapabilities({ tools: {} });
      server.server.setRequestHandler(ListToolsRequestSchema, async () =>
        withTaskSupport(await served.listTools(), served.tasks),
      );
      server.server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
        const { name, arguments: args, task } = request.params;
        const toolExtra = extra as unknown as ToolExtra;
        // A call that asks for a task (params.task) answers one; without it, the waiting call as always.
        if (task) return startLegacyTask(served.tasks, name, args, toolExtra);
        return served.callTool(name, args, toolExtra);
      });
      serveTaskResults(server, taskStore, served.tasks);
      registerResources(server, [hubResources(services.hub), skillResources(services.skills, scope.principal)]);
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
