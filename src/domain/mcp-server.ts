/**
 * A remote MCP server an organisation registered for its agents (docs/agents.md, "Remote MCP servers"): where it
 * is, how Prism signs in to it, which of its tools agents may call and how long one call may take. The secret is
 * kept sealed (lib/secret-box.ts); no record shape that leaves the service carries it.
 */
export type McpServerAuth = 'none' | 'api_key' | 'oauth';

/** Where an OAuth server's sign-in stands: started (no tokens yet), signed in, or lost (a refresh was refused). */
export type McpServerOAuthStatus = 'pending' | 'signed_in' | 'needs_sign_in';

export interface McpServerRecord {
  id: string;
  orgId: string;
  /** Unique per organisation; the prefix of its tools' names in a run (`<name>__<tool>`). */
  name: string;
  url: string;
  auth: McpServerAuth;
  /**
   * Sealed with PRISM_SECRETS_KEY (context: the record's id): the API key, or for `oauth` the grant as JSON (client,
   * tokens, PKCE verifier; agent-mcp/oauth-grant.ts); null without one.
   */
  secretSealed: string | null;
  /** The header the key is sent in; null: `Authorization: Bearer <key>`. */
  apiKeyHeader: string | null;
  /** The tools agents may call; null: every tool the server lists. */
  allowedTools: string[] | null;
  /** The limit of one call (connect, call, answer). */
  timeoutMs: number;
  /** Null unless `auth` is `oauth`. */
  oauthStatus: McpServerOAuthStatus | null;
  /** SHA-256 (hex) of a started sign-in's `state`, and when it expires (single-use; null when none is pending). */
  oauthStateHash: string | null;
  oauthStateExpiresAt: Date | null;
  /**
   * The client id the server's operator issued Prism (a pre-registered OAuth client, for an authorization server
   * without dynamic registration); null: Prism registers itself when a sign-in starts.
   */
  oauthClientId: string | null;
  /** That client's secret, sealed (context: `<id>#oauth-client`); null for a public client or none. */
  oauthClientSecretSealed: string | null;
  createdAt: Date;
}
