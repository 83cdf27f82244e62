/**
 * The MCP authorization server's domain words: the one scope it grants, the tokens it hands out, and the OAuth
 * error a grant can fail with (RFC 6749 §5.2 codes), which the MCP adapter turns into the SDK's OAuth errors.
 */

/** The scope every grant carries: use of the `/mcp` tool server as the person who approved. */
export const MCP_SCOPE = 'mcp';

/** Prefixes of OAuth tokens, distinct from API keys (`prism_…`), so a bearer value says which it is. */
export const ACCESS_TOKEN_PREFIX = 'mcp_at_';
export const REFRESH_TOKEN_PREFIX = 'mcp_rt_';

/** The token endpoint's answer (RFC 6749 §5.1). */
export interface OAuthTokenSet {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
  refresh_token: string;
}

export type OAuthErrorCode =
  'invalid_request' | 'invalid_grant' | 'invalid_client' | 'invalid_scope' | 'invalid_target';

/** A refused authorization step; `message` is for a person (it reaches the client's error text). */
export class OAuthGrantError extends Error {
  constructor(
    readonly oauthCode: OAuthErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'OAuthGrantError';
  }
}
