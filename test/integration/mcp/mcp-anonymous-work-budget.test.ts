/**
 * The anonymous work budget on `/mcp` (issue 39): no tool an anonymous caller may use takes a schema, but every
 * tool call's arguments are caller structure the server checks, and they draw on the POST's budget (`bytes`).
 * With the MCP SDK client as `Bearer prism` against the running app and a small anonymous budget configured: a call
 * within it is answered, a call whose arguments are over it is a tool error naming `work_budget_exceeded`, `bytes`
 * and PRISM_WORK_BUDGET_ANONYMOUS (suggesting a key), the same call with a key is answered (the keyed budget), and
 * two calls of one JSON-RPC batch add up against one budget.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { connectMcp, toolError, toolOutput } from '../../helpers/mcp-client';
import { startTestApp, type TestApp } from '../../helpers/test-app';

/** An anonymous request may check 3,000 bytes of caller structure here (the default is 2 MiB). */
const ANONYMOUS_LIMITS = 'bytes=3000';

jest.setTimeout(60_000);

describe('/mcp without a key runs on the anonymous work budget', () => {
  let app: TestApp;
  let anonymous: Client;
  let keyed: Client;
  let skillName: string;

  beforeAll(async () => {
    app = await startTestApp({ PRISM_WORK_BUDGET_ANONYMOUS: ANONYMOUS_LIMITS });
    anonymous = await connectMcp(app.url, 'Bearer prism', { toolsets: 'skills' });
    keyed = await connectMcp(app.url, `Bearer ${await app.createKey('mcp-anon-budget', 'pro')}`, {
      toolsets: 'skills',
    });
    const listed = toolOutput((await anonymous.callTool({ name: 'list_skills', arguments: {} })) as CallToolResult);
    skillName = String((listed.items as { name: string }[])[0]?.name);
  });
  afterAll(async () => {
    await anonymous.close();
    await keyed.close();
    await app.close();
  });

  const lookup = (client: Client, padding: number) =>
    client.callTool({
      name: 'lookup_skill',
      // `note` is not an argument of the tool (the check drops it), but the caller sent it and it is checked.
      arguments: { name: skillName, note: 'n'.repeat(padding) },
    }) as Promise<CallToolResult>;

  it('answers an anonymous call within the budget', async () => {
    expect(toolOutput(await lookup(anonymous, 100)).name).toBe(skillName);
  });

  it('refuses an anonymous call whose arguments are over it, naming the limit and the setting', async () => {
    const error = toolError(await lookup(anonymous, 4000));
    expect(error).toMatchObject({
      code: 'work_budget_exceeded',
      type: 'invalid_request_error',
      status: 413,
      param: 'bytes',
      limit: 'bytes',
      allowed: 3000,
    });
    expect(String(error.message)).toContain('PRISM_WORK_BUDGET_ANONYMOUS');
    expect(String(error.message)).toContain('use an API key');
  });

  it('answers the same call with a key (the keyed budget applies)', async () => {
    expect(toolOutput(await lookup(keyed, 4000)).name).toBe(skillName);
  });

  it('counts the calls of one anonymous JSON-RPC batch against one budget', async () => {
    const message = (id: number) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'lookup_skill', arguments: { name: skillName, note: 'n'.repeat(2000) } },
    });
    const res = await fetch(`${app.url}/mcp?toolsets=skills`, {
      method: 'POST',
      headers: {
        authorization: 'Bearer prism',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify([message(1), message(2)]),
    });
    expect(res.status).toBe(200);
    const results = (await res.text())
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice('data: '.length)) as { id: number; result: CallToolResult });
    const outcomes = results.map((r) => (r.result.isError ? toolError(r.result).code : 'answered'));
    // about 2,000 bytes each: the first fits in 3,000, the second does not
    expect(outcomes.sort()).toEqual(['answered', 'work_budget_exceeded']);
  });
});
