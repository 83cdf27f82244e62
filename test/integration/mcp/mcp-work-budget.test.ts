/**
 * `/mcp` requests run on the per-request work budget (issue 39), as API requests do: with the MCP SDK client against
 * the running app, an oversized JSON schema in an extract tool and a skill bundle with more schemas than the budget
 * allows come back as tool errors naming `work_budget_exceeded` and the limit that ran out (not an internal error,
 * not a stall); the budget is the configured keyed one for a key and counts every schema of one POST together;
 * the next POST gets a fresh budget. Small limits are configured so the inputs stay small.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { enumSchema, manySchemasZip } from '../../helpers/budget-inputs';
import { renderReceiptImage } from '../../helpers/media-fixtures';
import { connectMcp, toolError, toolOutput } from '../../helpers/mcp-client';
import { startTestApp, type TestApp } from '../../helpers/test-app';

/** Keyed callers may check 4 schemas and 300 enum values per request here (the defaults are far larger). */
const KEYED_LIMITS = 'schemas=4,enum_values=300';

// The extraction runs on the embedded engine; on a shared, loaded machine one run can take well over 30 s.
jest.setTimeout(120_000);

describe('/mcp requests run on the request work budget', () => {
  let app: TestApp;
  let client: Client;
  let key: string;
  let image: string;

  beforeAll(async () => {
    app = await startTestApp({ PRISM_WORK_BUDGET_KEYED: KEYED_LIMITS });
    key = await app.createKey('mcp-budget', 'pro');
    await app.container.services.accounts.addCredits('mcp-budget', 5);
    client = await connectMcp(app.url, `Bearer ${key}`, { toolsets: 'all' });
    image = `data:image/png;base64,${renderReceiptImage().toString('base64')}`;
  });
  afterAll(async () => {
    await client.close();
    await app.close();
  });

  const callTool = (name: string, args: Record<string, unknown>) =>
    client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
  const upload = async (zip: Buffer) =>
    String(toolOutput(await callTool('upload_file', { data: zip.toString('base64'), filename: 's.zip' })).id);

  it('refuses an extract json_schema over the keyed budget with a tool error naming the limit', async () => {
    const error = toolError(await callTool('extract_image', { data: image, json_schema: enumSchema(400) }));
    expect(error).toMatchObject({
      code: 'work_budget_exceeded',
      type: 'invalid_request_error',
      status: 413,
      param: 'enum_values',
      limit: 'enum_values',
      allowed: 300,
    });
    expect(String(error.message)).toContain('PRISM_WORK_BUDGET_KEYED');
    expect(String(error.message)).not.toMatch(/at .*\.(ts|js):\d+/);
  });

  it('counts every schema of a bundle against one budget: five schemas of one request are over four', async () => {
    const fileId = await upload(manySchemasZip(5, 3));
    const error = toolError(await callTool('create_skill', { file_id: fileId }));
    expect(error).toMatchObject({ code: 'work_budget_exceeded', param: 'schemas', allowed: 4 });
    // nothing was stored
    const listed = toolOutput(await callTool('list_skills', {}));
    expect(JSON.stringify(listed)).not.toContain('many-schemas');
  });

  it('gives each POST a fresh budget: a bundle within it is created after the refusals', async () => {
    const fileId = await upload(manySchemasZip(3, 3));
    const skill = toolOutput(await callTool('create_skill', { file_id: fileId }));
    expect(skill.name).toBe('many-schemas');
  });

  it('answers a JSON-RPC batch of calls on one budget: together over it, the later call is refused', async () => {
    const fileId = await upload(manySchemasZip(3, 3));
    const message = (id: number) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'create_skill', arguments: { file_id: fileId, name: `batch-${id}` } },
    });
    const res = await fetch(`${app.url}/mcp?toolsets=all`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
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
    const byId = new Map(results.map((r) => [r.id, r.result]));
    const outcomes = [byId.get(1), byId.get(2)].map((r) => (r?.isError ? toolError(r).code : 'created'));
    // three schemas each: the first fits in four, the second does not
    expect(outcomes.sort()).toEqual(['created', 'work_budget_exceeded']);
  });
});
