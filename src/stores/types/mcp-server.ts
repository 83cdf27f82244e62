/** What the MCP servers service may ask of persistence: an organisation's registered remote MCP servers. */
import type { McpServerOAuthStatus, McpServerRecord } from '../../domain/mcp-server';

/** What an OAuth sign-in step changes on a server: its sealed grant, its status, its pending state. */
export interface McpServerOAuthUpdate {
  secretSealed: string | null;
  oauthStatus: McpServerOAuthStatus;
  oauthStateHash: string | null;
  oauthStateExpiresAt: Date | null;
}

export interface McpServerStore {
  /** @returns false when the organisation already has a server of that name (nothing written). */
  insert(record: McpServerRecord): Promise<boolean>;
  list(orgId: string): Promise<McpServerRecord[]>;
  get(orgId: string, id: string): Promise<McpServerRecord | null>;
  /** The organisation's servers of these names (those that exist). */
  findByNames(orgId: string, names: readonly string[]): Promise<McpServerRecord[]>;
  /** @returns whether the server exists (and was updated). */
  updateOAuth(orgId: string, id: string, update: McpServerOAuthUpdate): Promise<boolean>;
  /**
   * The server whose pending sign-in has this state hash and has not expired by `now`, with that state cleared in
   * the same statement (so a state is taken once, by one replica); null for none.
   */
  takeOAuthState(stateHash: string, now: Date): Promise<McpServerRecord | null>;
  /**
   * Takes the lease on refreshing the server's OAuth grant for `owner` until `until`, if no other holder's lease is
   * still running at `now` (one statement: a compare-and-swap, so of two replicas asking at once one gets it).
   */
  claimRefresh(orgId: string, id: string, owner: string, now: Date, until: Date): Promise<boolean>;
  /**
   * Writes `update` (when given) and gives up the lease, only while `owner` still holds it.
   * @returns whether `owner` held it (false: nothing was written).
   */
  finishRefresh(orgId: string, id: string, owner: string, update: McpServerOAuthUpdate | null): Promise<boolean>;
  /** @returns whether a record was removed. */
  delete(orgId: string, id: string): Promise<boolean>;
}
