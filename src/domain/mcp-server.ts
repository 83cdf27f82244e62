/**
 * A remote MCP server an organisation registered for its agents (docs/agents.md, "Remote MCP servers"): where it
 * is, how Prism signs in to it, which of its tools agents may call and how long one call may take. The secret is
 * kept sealed (lib/secret-box.ts); no record shape that leaves the service carries it.
 */
export type McpServerAuth = 'none' | 'api_key';

export interface McpServerRecord {
  id: string;
  orgId: string;
  /** Unique per organisation; the prefix of its tools' names in a run (`<name>__<tool>`). */
  name: string;
  url: string;
  auth: McpServerAuth;
  /** The API key, sealed with PRISM_SECRETS_KEY (context: the record's id); null without one. */
  secretSealed: string | null;
  /** The header the key is sent in; null: `Authorization: Bearer <key>`. */
  apiKeyHeader: string | null;
  /** The tools agents may call; null: every tool the server lists. */
  allowedTools: string[] | null;
  /** The limit of one call (connect, call, answer). */
  timeoutMs: number;
  createdAt: Date;
}
