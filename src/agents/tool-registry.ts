/**
 * The one list of tools: the agent loop, program replay and the MCP server all read it.
 *
 * `select` is how `config.tools` picks tools by exact name (an unknown name is a 400 naming it); `invoke` is the
 * single place a tool runs, so every caller gets the same input parsing, output check and error wording.
 */
import { z } from 'zod';
import { AppError, BadRequestError } from '../domain/errors';
import type { AnyToolDefinition, PlannerToolSpec, ToolContext } from './sdk';

export interface ToolRegistry {
  /** Every tool, in registration order. */
  list(): AnyToolDefinition[];
  get(name: string): AnyToolDefinition | undefined;
  /**
   * The tools named, in the order given; null or undefined selects every tool.
   * @throws BadRequestError `unknown_tool` naming each unknown name (`param` is `paramName`).
   */
  select(names: readonly string[] | null | undefined, paramName?: string): AnyToolDefinition[];
  /** Name, description and JSON schema of the arguments, for planners. */
  specs(tools: readonly AnyToolDefinition[]): PlannerToolSpec[];
  /**
   * Parses `args` with the tool's input schema, runs it and checks the result against its output schema.
   * @throws BadRequestError `unknown_tool` / `invalid_tool_input`; AppErrors thrown by the handler pass through.
   */
  invoke(name: string, args: unknown, ctx: ToolContext): Promise<Record<string, unknown>>;
}

export function createToolRegistry(tools: readonly AnyToolDefinition[]): ToolRegistry {
  const byName = new Map<string, AnyToolDefinition>();
  for (const tool of tools) {
    if (byName.has(tool.name)) throw new Error(`Tool '${tool.name}' is registered twice`);
    byName.set(tool.name, tool);
  }
  const specCache = new Map<string, PlannerToolSpec>();
  const cacheable = (tool: AnyToolDefinition): boolean => byName.get(tool.name) === tool;

  const unknown = (names: string[], param: string | null): BadRequestError =>
    new BadRequestError(
      `Unknown tool${names.length > 1 ? 's' : ''}: ${names.map((n) => `'${n}'`).join(', ')}. ` +
        `Available tools: ${[...byName.keys()].join(', ')}.`,
      'unknown_tool',
      param,
    );

  return {
    list: () => [...byName.values()],
    get: (name) => byName.get(name),

    select(names, paramName = 'config.tools') {
      if (names === null || names === undefined) return [...byName.values()];
      const missing = names.filter((n) => !byName.has(n));
      if (missing.length > 0) throw unknown(missing, paramName);
      return [...new Set(names)].map((n) => byName.get(n) as AnyToolDefinition);
    },

    specs(selected) {
      return selected.map((tool) => {
        // Tools of one run (remote MCP servers' tools) are not cached: another run's tool may share the name.
        let spec = cacheable(tool) ? specCache.get(tool.name) : undefined;
        if (!spec) {
          // A copy: the `$schema` removed is not taken off a remote server's schema object the tool keeps.
          const parameters: Record<string, unknown> = {
            ...(tool.parameters ?? z.toJSONSchema(tool.inputSchema, { io: 'input' })),
          };
          delete parameters.$schema;
          spec = { name: tool.name, description: tool.description, parameters };
          if (cacheable(tool)) specCache.set(tool.name, spec);
        }
        return spec;
      });
    },

    async invoke(name, args, ctx) {
      const tool = byName.get(name);
      if (!tool) throw unknown([name], null);
      return invokeTool(tool, args, ctx);
    },
  };
}

/**
 * Runs one tool as the registry does (input parsed, output checked): also for tools that belong to one run only
 * (a remote MCP server's tools), which are not in the registry.
 */
export async function invokeTool(
  tool: AnyToolDefinition,
  args: unknown,
  ctx: ToolContext,
): Promise<Record<string, unknown>> {
  const name = tool.name;
  const parsed = tool.inputSchema.safeParse(args ?? {});
  if (!parsed.success) {
    const detail = parsed.error.issues
      .map((i) => `${i.path.length > 0 ? i.path.join('.') : '(arguments)'}: ${i.message}`)
      .join('; ');
    throw new BadRequestError(`Invalid arguments for tool '${name}': ${detail}`, 'invalid_tool_input', name);
  }
  const result = await tool.handler(parsed.data, ctx);
  const checked = tool.outputSchema.safeParse(result);
  if (!checked.success) {
    // A tool that breaks its own contract is a bug in Prism, not the caller's fault.
    throw new AppError(500, {
      message: `Tool '${name}' returned output that does not match its schema`,
      type: 'internal_server_error',
      code: 'internal_error',
    });
  }
  return checked.data;
}
