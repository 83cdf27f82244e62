/**
 * The agent runtime's tool registry (`tools/`, through `src/agents/sdk.ts`) as MCP tools. Each registry tool goes
 * through the same `registerTools` wrapper as the service-level tools and runs through `registry.invoke`, the one
 * place the agent loop also runs it, with a ToolContext carrying the caller, the MCP cancel signal and progress.
 *
 * An MCP call is not an agent run, so no skills are "enabled" for it: `read_skill_file` there reads the skills the
 * caller can see (their organisation's and the built-in public ones), the one named, or all of them to list.
 */
import type { ToolRegistry } from '../agents/tool-registry';
import type { Principal } from '../domain/account';
import type { ParsedSkill } from '../domain/skill';
import type { SkillsService } from '../services/skills/skills.service';
import type { ToolContextFactory } from '../services/tool-context';
import type { McpTool } from './mcp-tool';

/** Registry tools an anonymous caller may use: they only read the public hub catalogue. */
const PUBLIC_REGISTRY_TOOLS: ReadonlySet<string> = new Set(['lookup_hub_domain']);

/** Most skills `read_skill_file` lists when no skill is named. */
const LISTED_SKILLS = 100;

export interface RegistryToolsDeps {
  registry: ToolRegistry;
  toolContext: ToolContextFactory;
  skills: SkillsService;
}

export function registryTools({ registry, toolContext, skills }: RegistryToolsDeps): McpTool[] {
  /** The skills `read_skill_file` may read for this caller: the named one, else every one they can see. */
  const visibleSkills = async (principal: Principal, args: unknown): Promise<ParsedSkill[]> => {
    const named = (args as { skill?: unknown } | null)?.skill;
    if (typeof named === 'string' && named !== '') {
      return [await skills.resolve(principal, { kind: 'id', id: named, version: 'latest' })];
    }
    const latest = await skills.list(principal, {
      limit: LISTED_SKILLS,
      offset: 0,
      orderBy: 'name',
      descending: false,
      grouped: true,
    });
    return Promise.all(latest.map((s) => skills.resolve(principal, { kind: 'id', id: s.id, version: s.skillVersion })));
  };
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
      async run(args, ctx) {
        const enabled = tool.name === 'read_skill_file' ? await visibleSkills(ctx.principal, args) : undefined;
        return registry.invoke(
          tool.name,
          args,
          toolContext.create(ctx.principal, {
            signal: ctx.signal,
            progress: (update) => ctx.progress(update.progress, update.total, update.message),
            ...(enabled ? { skills: enabled } : {}),
          }),
        );
      },
    };
  });
}
