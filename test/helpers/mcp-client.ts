/**
 * Connects the MCP SDK client to a running test app's `/mcp` over Streamable HTTP, with an optional bearer header.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/**
 * `authorization` is the whole header value (`Bearer …`); leave it out for no header at all. `toolsets` goes in the
 * URL (`?toolsets=`); without it the connection gets the server's default toolsets.
 */
export async function connectMcp(
  baseUrl: string,
  authorization?: string,
  options: { toolsets?: string } = {},
): Promise<Client> {
  const client = new Client({ name: 'prism-test', version: '1.0.0' });
  const headers: Record<string, string> = authorization === undefined ? {} : { Authorization: authorization };
  const url = new URL(`${baseUrl}/mcp`);
  if (options.toolsets !== undefined) url.searchParams.set('toolsets', options.toolsets);
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  return client;
}

/** The `{error:{…}}` object of an `isError` tool result. */
export function toolError(result: CallToolResult): Record<string, unknown> {
  expect(result.isError).toBe(true);
  const [block] = result.content;
  if (block?.type !== 'text') throw new Error('tool error without a text block');
  return (JSON.parse(block.text) as { error: Record<string, unknown> }).error;
}

/** Asserts a successful result whose text copy equals its structured content, and returns that content. */
export function toolOutput(result: CallToolResult): Record<string, unknown> {
  const [block] = result.content;
  if (result.isError) throw new Error(`tool failed: ${block?.type === 'text' ? block.text : '?'}`);
  expect(block?.type).toBe('text');
  expect(JSON.parse(block?.type === 'text' ? block.text : 'null')).toEqual(result.structuredContent);
  return result.structuredContent as Record<string, unknown>;
}
