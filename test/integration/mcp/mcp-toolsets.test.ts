/**
 * Toolsets and protocol details of `/mcp`, with the MCP SDK client (and raw JSON-RPC where the detail is on the
 * wire): the lean default list and its size, selection by query and header, unknown toolsets, anonymous callers
 * shown only what they can call, a call into an unselected toolset; no `listChanged` on a stateless server, -32002
 * for an unknown resource, -32700 for malformed JSON, annotations, errors naming the tool's own parameters, file ids
 * described as UUIDs, and `read_skill_file` reaching the built-in skills; tool-call rate limits by tier.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MCP_TOOLSETS } from '../../../src/mcp/mcp-toolsets';
import { connectMcp, toolError, toolOutput } from '../../helpers/mcp-client';
import { call, startTestApp, type TestApp } from '../../helpers/test-app';

const MCP_HEADERS = { accept: 'application/json, text/event-stream' };
const LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
const DEFAULT_TOOLS = [
  'extract_image',
  'extract_document',
  'extract_video',
  'extract_audio',
  'get_prediction',
  'upload_file',
  'get_file',
  'list_files',
  'execute_agent',
  'get_execution',
  'run_skill',
];

/** The JSON-RPC message of a Streamable HTTP answer (SSE `data:` line or a JSON body). */
async function rpc(res: Response): Promise<Record<string, unknown>> {
  const text = await res.text();
  const data = text.split('\n').find((line) => line.startsWith('data: '));
  return JSON.parse(data ? data.slice(6) : text) as Record<string, unknown>;
}

describe('MCP toolsets and protocol details', () => {
  let app: TestApp;
  let key: string;
  let all: Client;

  beforeAll(async () => {
    app = await startTestApp();
    key = await app.createKey('toolsets', 'pro');
    all = await connectMcp(app.url, `Bearer ${key}`, { toolsets: 'all' });
  });
  afterAll(async () => {
    await all.close();
    await app.close();
  });

  const callTool = (c: Client, name: string, args: Record<string, unknown>) =>
    c.callTool({ name, arguments: args }) as Promise<CallToolResult>;

  it('lists a default that does the job (extraction, files, run_skill, execute_agent) of at most 16 KB', async () => {
    const res = await call(`${app.url}/mcp`, { key, json: LIST, headers: MCP_HEADERS });
    const answer = await rpc(res);
    const result = answer.result as { tools: { name: string }[] };
    expect(result.tools.map((t) => t.name)).toEqual(DEFAULT_TOOLS);
    const bytes = Buffer.byteLength(JSON.stringify(result));
    expect(bytes).toBeLessThanOrEqual(16 * 1024);
    // Nothing the SDK writes by default that says nothing: no $schema, no taskSupport "forbidden"; the long tools
    // say they may be called as tasks (2025-11-25 experimental tasks, mcp-legacy-tasks.ts).
    expect(JSON.stringify(result)).not.toMatch(/\$schema|"forbidden"|9007199254740991/);
    const tasks = (result.tools as { name: string; execution?: { taskSupport?: string } }[])
      .filter((t) => t.execution?.taskSupport === 'optional')
      .map((t) => t.name);
    expect(tasks.sort()).toEqual(['execute_agent', 'extract_audio', 'extract_document', 'extract_video', 'run_skill']);
  });

  it('selects toolsets per connection by ?toolsets= or the X-MCP-Toolsets header; all is every tool', async () => {
    const names = async (query: string, headers: Record<string, string> = {}) => {
      const res = await call(`${app.url}/mcp${query}`, { key, json: LIST, headers: { ...MCP_HEADERS, ...headers } });
      return ((await rpc(res)).result as { tools: { name: string }[] }).tools.map((t) => t.name);
    };
    expect(await names('?toolsets=skills')).toEqual([
      'list_skills',
      'lookup_skill',
      'get_skill',
      'create_skill',
      'update_skill',
      'download_skill',
    ]);
    expect(await names('', { 'x-mcp-toolsets': 'agents' })).toEqual([
      'execute_agent',
      'resume_execution',
      'cancel_execution',
      'get_execution',
      'list_executions',
    ]);
    const registry = app.container.agents.tools.list().map((t) => t.name);
    expect(await names('?toolsets=agent_tools')).toEqual(registry);
    // execute_agent and get_execution sit in both agents and run; each is listed once.
    expect((await all.listTools()).tools).toHaveLength(DEFAULT_TOOLS.length + 2 + 6 + 3 + registry.length);
    expect(await names('?toolsets=run')).toEqual(['execute_agent', 'get_execution', 'run_skill']);
    expect(MCP_TOOLSETS).toHaveLength(7);
  });

  it('refuses an unknown toolset naming it, and says which toolset a call outside the selection needs', async () => {
    const res = await call(`${app.url}/mcp?toolsets=files,nope`, { key, json: LIST, headers: MCP_HEADERS });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string; data: { code: string; param: string } } };
    expect(body.error.message).toMatch(/Unknown MCP toolset 'nope'/);
    expect(body.error.data).toMatchObject({ code: 'unknown_toolset', param: 'toolsets' });

    const lean = await connectMcp(app.url, `Bearer ${key}`);
    try {
      const refused = await callTool(lean, 'list_skills', {});
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toMatch(/'skills' toolset.*add skills to \?toolsets=/);
    } finally {
      await lean.close();
    }
  });

  it('shows anonymous callers only the tools they can call', async () => {
    const anonymous = await connectMcp(app.url, 'Bearer prism', { toolsets: 'all' });
    try {
      const listed = (await anonymous.listTools()).tools.map((t) => t.name);
      expect(listed).toEqual(
        expect.arrayContaining(['list_hub_domains', 'get_domain_schema', 'list_skills', 'lookup_hub_domain']),
      );
      for (const hidden of [
        'extract_image',
        'upload_file',
        'list_files',
        'execute_agent',
        'create_skill',
        'ocr_image',
      ]) {
        expect(listed).not.toContain(hidden);
      }
      // Every tool it is shown, it can call (no "needs an account").
      const shown = (await anonymous.listTools()).tools;
      for (const tool of shown.filter((t) => t.name === 'list_hub_domains' || t.name === 'list_skills')) {
        expect((await callTool(anonymous, tool.name, {})).isError).toBeFalsy();
      }
    } finally {
      await anonymous.close();
    }
  });

  it('advertises no listChanged on a stateless server, and answers -32002 for an unknown resource', async () => {
    const capabilities = all.getServerCapabilities();
    expect(capabilities?.resources).toBeDefined();
    expect(capabilities?.resources?.listChanged).toBeUndefined();
    expect(capabilities?.tools?.listChanged).toBeUndefined();
    expect(capabilities?.prompts?.listChanged).toBeUndefined();
    for (const uri of ['hub://domains/no.such/schema', 'prism://skills/nope/1/SKILL.md', 'file:///etc/passwd']) {
      await expect(all.readResource({ uri })).rejects.toMatchObject({ code: -32002 });
    }
    // A known one still reads.
    const read = await all.readResource({ uri: 'hub://domains/document.invoice/schema' });
    expect(read.contents).toHaveLength(1);
  });

  it('answers malformed JSON with -32700 (Parse error)', async () => {
    const res = await fetch(`${app.url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: '{"jsonrpc": "2.0", "id": 1, "method": ',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
  });

  it('marks render_page, sample_video_frames and write_artifact non-destructive, and describes file ids as UUIDs', async () => {
    const { tools } = await all.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const name of ['render_page', 'sample_video_frames', 'write_artifact']) {
      expect(byName.get(name)?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    }
    const fileIdOf = (name: string) =>
      (byName.get(name)?.inputSchema.properties as Record<string, { description?: string }>).file_id?.description;
    expect(fileIdOf('extract_document')).toMatch(/UUID/);
    expect(fileIdOf('get_file')).toMatch(/UUID/);
    expect(JSON.stringify(tools)).not.toMatch(/file-…/);
    // Each extract tool has only its own kind's options.
    const props = (name: string) => Object.keys(byName.get(name)?.inputSchema.properties ?? {});
    expect(props('extract_document')).toContain('page_indices');
    expect(props('extract_image')).not.toContain('page_indices');
    expect(props('extract_video')).toContain('video_max_frames');
    expect(props('extract_audio')).not.toContain('video_max_frames');
  });

  it('names the tool parameter (data), not the REST field (images), in errors', async () => {
    const bad = toolError(await callTool(all, 'extract_image', { domain: 'document.receipt', data: '%%% not base64' }));
    expect(bad).toMatchObject({ code: 'invalid_media', param: 'data' });
    const upload = toolError(await callTool(all, 'upload_file', { data: '%%% not base64' }));
    expect(upload).toMatchObject({ code: 'invalid_media', param: 'data' });
    const two = toolError(
      await callTool(all, 'extract_image', {
        domain: 'document.receipt',
        data: 'aGVsbG8=',
        url: 'https://x.test/a.png',
      }),
    );
    expect(two.code).toBe('too_many_inputs');
    expect(String(two.message)).toMatch(/`data`/);
    expect(String(two.message)).not.toMatch(/images/);
  });

  it('reads the built-in skills with read_skill_file (list, and a file of one)', async () => {
    const listed = toolOutput(await callTool(all, 'read_skill_file', {}));
    expect((listed.skills as { name: string }[]).map((s) => s.name)).toEqual(
      expect.arrayContaining(['invoice', 'receipt']),
    );
    const read = toolOutput(await callTool(all, 'read_skill_file', { skill: 'invoice', path: 'SKILL.md' }));
    expect(read.file).toMatchObject({
      skill: 'invoice',
      path: 'SKILL.md',
      text: expect.stringMatching(/^---/) as unknown,
    });
    const missing = toolError(await callTool(all, 'read_skill_file', { skill: 'no-such-skill', path: 'SKILL.md' }));
    expect(missing.code).toBe('skill_not_found');
  });
});

describe('MCP tool-call rate limits', () => {
  /** The hub is in an anonymous caller's default, and asked for by the others (their default is extraction, files, run). */
  const HUB = { toolsets: 'hub' };
  const hub = (c: Client) => c.callTool({ name: 'list_hub_domains', arguments: {} }) as Promise<CallToolResult>;
  const callsAllowed = async (c: Client, tries: number): Promise<number> => {
    for (let i = 0; i < tries; i += 1) {
      const result = await hub(c);
      if (result.isError) {
        expect(toolError(result)).toMatchObject({ code: 'rate_limit_exceeded', status: 429 });
        return i;
      }
    }
    return tries;
  };

  it('follow the caller tier (settings), apart from the gateway budget; 0 is no limit', async () => {
    const app = await startTestApp({
      PRISM_MCP_CALLS_PER_MINUTE: 'anonymous=2,free=3,pro=0',
      PRISM_RATE_LIMIT_PER_MINUTE: '1',
    });
    const clients = [
      await connectMcp(app.url, 'Bearer prism'),
      await connectMcp(app.url, `Bearer ${await app.createKey('rl-free', 'free')}`, HUB),
      await connectMcp(app.url, `Bearer ${await app.createKey('rl-pro', 'pro')}`, HUB),
    ];
    try {
      const [anonymous, free, pro] = clients as [Client, Client, Client];
      expect(await callsAllowed(anonymous, 5)).toBe(2);
      expect(await callsAllowed(free, 5)).toBe(3);
      const refused = toolError(await hub(free));
      // Retry-After counts the seconds left in the window (as x-ratelimit-reset-requests does), at most its minute.
      expect(refused).toMatchObject({ tier: 'free' });
      expect(refused.retry_after).toBeGreaterThanOrEqual(1);
      expect(refused.retry_after).toBeLessThanOrEqual(60);
      expect(String(refused.message)).toMatch(/3 per 1 minute/);
      expect(await callsAllowed(pro, 8)).toBe(8);
      // Listing is not a call: it still works.
      expect((await free.listTools()).tools.length).toBeGreaterThan(0);
    } finally {
      for (const c of clients) await c.close();
      await app.close();
    }
  });

  it('leave the owner unthrottled in single-user mode, and still limit everyone else', async () => {
    const app = await startTestApp({
      PRISM_SINGLE_USER: '1',
      PRISM_MCP_CALLS_PER_MINUTE: 'anonymous=1,free=1,pro=1,enterprise=1',
    });
    const owner = await connectMcp(app.url, `Bearer ${app.ownerKey}`, HUB);
    const other = await connectMcp(app.url, `Bearer ${await app.createKey('rl-other', 'enterprise')}`, HUB);
    try {
      expect(await callsAllowed(owner, 6)).toBe(6);
      expect(await callsAllowed(other, 3)).toBe(1);
    } finally {
      await owner.close();
      await other.close();
      await app.close();
    }
  });
});
