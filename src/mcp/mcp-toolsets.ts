/**
 * MCP toolsets: the tools of `/mcp` and `prism mcp` in named groups a connection picks, so a model's context holds
 * only the tools the person wants (the whole list is ~40 tools; a lean default keeps `tools/list` under 16 KB).
 *
 * A connection names its toolsets in `?toolsets=a,b` on the `/mcp` URL or the `X-MCP-Toolsets` header (the query
 * wins), or `prism mcp --toolsets a,b`; `all` is every toolset, and the default is PRISM_MCP_TOOLSETS. An unknown
 * name is refused naming it, never dropped. Calling a tool whose toolset is off says which toolset to add.
 */
import type { Principal } from '../domain/account';
import { BadRequestError } from '../domain/errors';

export const MCP_TOOLSETS = ['extraction', 'files', 'hub', 'skills', 'agents', 'agent_tools', 'run'] as const;
export type McpToolset = (typeof MCP_TOOLSETS)[number];

/** What each toolset is, for errors and docs. */
export const TOOLSET_SUMMARY: Readonly<Record<McpToolset, string>> = {
  extraction: 'extract_image, extract_document, extract_video, extract_audio, get_prediction',
  files: 'upload_file, get_file, list_files',
  hub: 'list_hub_domains, get_domain_schema',
  skills: 'list_skills, lookup_skill, get_skill, create_skill, update_skill, download_skill',
  agents: 'execute_agent, resume_execution, cancel_execution, get_execution, list_executions',
  agent_tools: 'the agent runtime’s tools (ocr_image, read_document, render_page, fetch_url, …)',
  run: 'run_skill, execute_agent, get_execution',
};

/**
 * The default does the job an assistant comes for: extract, run a skill or an agent (and read the run back), and
 * move files; the hub domains stay readable as resources (`hub://domains/…`), and the hub tools by toolset. `run`
 * shares execute_agent and get_execution with `agents` (a tool may sit in more than one set).
 */
export const DEFAULT_MCP_TOOLSETS: readonly McpToolset[] = ['extraction', 'files', 'run'];

/**
 * `a,b` (spaces allowed) as toolsets; `all` selects every one; empty or absent gives `fallback`.
 * @throws BadRequestError `unknown_toolset` naming the first unknown name (`param` is where it came from).
 */
export function parseToolsets(
  value: string | undefined,
  fallback: readonly McpToolset[],
  param = 'toolsets',
): McpToolset[] {
  const names = (value ?? '')
    .split(',')
    .map((n) => n.trim().toLowerCase())
    .filter(Boolean);
  if (names.length === 0) return [...fallback];
  if (names.includes('all')) return [...MCP_TOOLSETS];
  for (const name of names) {
    if (!(MCP_TOOLSETS as readonly string[]).includes(name)) {
      throw new BadRequestError(
        `Unknown MCP toolset '${name}'. Toolsets: ${MCP_TOOLSETS.join(', ')}, or all.`,
        'unknown_toolset',
        param,
      );
    }
  }
  return MCP_TOOLSETS.filter((set) => names.includes(set));
}

/**
 * The default for a caller who names no toolsets: anonymous callers (`Bearer prism`) can call none of extraction,
 * files or run, so theirs adds the hub (the tools they can call, as before the default changed).
 */
export function defaultToolsetsFor(principal: Principal, fallback: readonly McpToolset[]): readonly McpToolset[] {
  if (principal.kind !== 'anonymous' || fallback.includes('hub')) return fallback;
  return MCP_TOOLSETS.filter((set) => set === 'hub' || fallback.includes(set));
}
