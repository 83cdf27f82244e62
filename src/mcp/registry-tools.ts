/**
 * The agent runtime's tool registry (`tools/`, through `src/agents/sdk.ts`) as MCP tools. Each registry tool goes
 * through the same `registerTools` wrapper as the service-level tools and runs through `registry.invoke`, the one
 * place the agent loop also runs it, with a ToolContext carrying the caller, the MCP cancel signal and progress.
 */
import type { ToolRegistry } from '../agents/tool-registry';
import type { ToolContextFactory } from '../services/tool-context';
import type { McpTool } from './mcp-tool';

/** Registry tools an anonymous caller may use: they only read the public hub catalogue. */
const PUBLIC_REGISTRY_TOOLS: ReadonlySet<string> = new Set(['lookup_hub_domain']);

export interface RegistryToolsDeps {
  registry: ToolRegistry;
  toolContext: ToolContextFactory;
}

export function registryTools({ registry, toolContext }: RegistryToolsDeps): McpTool[] {
  return registry.list().map((tool) => {
    const { title, ...annotations } = tool.annotations;
    return {
      name: tool.name,
      title: title ?? tool.name,
      description: tool.description,
      input: tool.inputSchema,
      output: tool.outputSchema,
      annotations,
      needsAccount: !PUBLIC_REGISTRY_TOOLS.has(tool.name),
      run: (args, ctx) =>
        registry.invoke(
          tool.name,
          args,
          toolContext.create(ctx.principal, {
            signal: ctx.signal,
            progress: (update) => ctx.progress(update.progress, update.total, update.message),
          }),
        ),
    };
  });
}
