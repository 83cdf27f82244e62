/** What the MCP servers service may ask of persistence: an organisation's registered remote MCP servers. */
import type { McpServerRecord } from '../../domain/mcp-server';

export interface McpServerStore {
  /** @returns false when the organisation already has a server of that name (nothing written). */
  insert(record: McpServerRecord): Promise<boolean>;
  list(orgId: string): Promise<McpServerRecord[]>;
  get(orgId: string, id: string): Promise<McpServerRecord | null>;
  /** The organisation's servers of these names (those that exist). */
  findByNames(orgId: string, names: readonly string[]): Promise<McpServerRecord[]>;
  /** @returns whether a record was removed. */
  delete(orgId: string, id: string): Promise<boolean>;
}
