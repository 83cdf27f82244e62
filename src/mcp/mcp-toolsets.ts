/**
 * MCP toolsets: the tools of `/mcp` and `prism mcp` in named groups a connection picks, so a model's context holds
 * only the tools the person wants (the whole list is ~30 tools; a lean default keeps `tools/list` small).
 *
 * A connection names its toolsets in `?toolsets=a,b` on the `/mcp` URL or the `X-MCP-Toolsets` header (the query
 * wins), or `prism mcp --toolsets a,b`; `all` is every toolset, and the default is PRISM_MCP_TOOLSETS. An unknown
 * name is refused naming it, never dropped. Calling a tool whose toolset is off says which toolset to add.
 */
import { BadRequestError } from '../domain/errors';

export const MCP_TOOLSETS = ['extraction', 'files', 'hub', 'skills', 'agents', 'agent_tools'] as const;
export type McpToolset = (typeof MCP_TOOLSETS)[number];

/** What each toolset is, for errors and docs. */
export const TOOLSET_SUMMARY: Readonly<Record<McpToolset, string>> = {
  extraction: 'extract_image, extract_document, extract_video, extract_audio, get_prediction',
  files: 'upload_file, get_file, list_files',
  hub: 'list_hub_domains, get_domain_schema',
  skills: 'list_skills, lookup_skill, get_skill, create_skill, update_skill, download_skill',
  agents: 'execute_agent, resume_execution, cancel_execution, get_execution, list_executions',
  agent_tools: 'the agent runtime’s tools (ocr_image, read_document, render_page, fetch_url, …)',
};

export const DEFAULT_MCP_TOOLSETS: readonly McpToolset[] = ['extraction', 'files', 'hub'];

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
