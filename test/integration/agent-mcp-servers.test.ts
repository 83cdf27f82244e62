/**
 * Remote MCP servers as agent tools: an organisation registers a second MCP server (started here, the SDK's
 * McpServer behind a bearer key), an execution naming it calls its tool through the upstream planner's tool call
 * and the answer reaches the planner; arguments are checked against the server's schema before any call; a tool
 * that hangs fails its call at the server's timeout; a 50 MB answer is cut off at the byte cap; a call can wait for
 * approval like any tool; the key is never returned nor stored in clear. With PRISM_ALLOW_PRIVATE_URLS off (the
 * default) a loopback URL is refused, and without PRISM_SECRETS_KEY a key (or OAuth) cannot be registered. OAuth
 * sign-in has its own suite (agent-mcp-server-oauth.test.ts).
 */
import { randomBytes } from 'node:crypto';
import { startRemoteMcpServer, type RemoteMcpServer } from '../helpers/remote-mcp-server';
import type { ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, startTestApp, type TestApp } from '../helpers/test-app';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

interface StepWire {
  kind: string;
  name: string;
  arguments: Record<string, unknown> | null;
  error: string | null;
}
interface ExecutionWire {
  id: string;
  status: string;
  response: Record<string, unknown> | null;
  steps: StepWire[];
  usage: { message: string | null };
}

const TICKET_KEY = 'tk-very-secret-key-123';
const HUGE_BYTES = 50 * 1024 * 1024;

describe('remote MCP servers as agent tools', () => {
  let remote: RemoteMcpServer;
  let lab: UpstreamApp;
  let app: TestApp;
  let upstream: ScriptedUpstream;
  let key: string;
  let otherKey: string;

  beforeAll(async () => {
    remote = await startRemoteMcpServer({ key: TICKET_KEY, hugeBytes: HUGE_BYTES });
    lab = await startUpstreamApp(
      [
        {
          id: 'prism-orion-2',
          upstreamModel: 'planner-llm',
          parameters: ['tools', 'tool_choice', 'temperature'],
          pricing: { prompt: 1.0, completion: 1.0 },
        },
      ],
      {
        provider: 'vLLM',
        // The test's MCP server is on loopback: this deployment allows private addresses (as a closed network would).
        env: { PRISM_ALLOW_PRIVATE_URLS: '1', PRISM_SECRETS_KEY: randomBytes(32).toString('hex') },
      },
    );
    ({ app, upstream } = lab);
    key = await app.createKey('mcp-org');
    otherKey = await app.createKey('mcp-other');
    await app.container.services.accounts.addCredits('mcp-org', 5);
  });
  afterAll(async () => {
    await lab.close();
    await remote.close();
  });

  const register = (body: unknown, as = key) => call(`${app.url}/v1/agent/mcp-servers`, { key: as, json: body });
  const execute = async (body: unknown): Promise<ExecutionWire> =>
    (await (await call(`${app.url}/v1/agent/execute`, { key, json: body })).json()) as ExecutionWire;
  /** The planner calls `tool` with `args`, then answers from what it got. */
  const scriptCall = (tool: string, args: Record<string, unknown>) =>
    upstream.next(
      { kind: 'reply', toolCalls: [{ id: 'call_1', name: tool, arguments: JSON.stringify(args) }] },
      { kind: 'reply', content: '```json\n{"answer": "done"}\n```' },
    );
  const runWith = (servers: string[], extra: Record<string, unknown> = {}) =>
    execute({
      model: 'prism-orion-2',
      config: { prompt: 'What is the state of ticket T-42?', mcp_servers: servers, ...extra },
    });

  let ticketsId = '';

  it('registers a server with its key sealed: never returned, not stored in clear, other organisations see none', async () => {
    const res = await register({ name: 'tickets', url: remote.url, api_key: TICKET_KEY });
    expect(res.status).toBe(201);
    const server = (await res.json()) as Record<string, unknown>;
    ticketsId = server.id as string;
    expect(server).toMatchObject({ object: 'mcp_server', name: 'tickets', auth: 'api_key', has_api_key: true });
    expect(JSON.stringify(server)).not.toContain(TICKET_KEY);
    const listed = await (await call(`${app.url}/v1/agent/mcp-servers`, { key })).text();
    expect(listed).toContain(ticketsId);
    expect(listed).not.toContain(TICKET_KEY);
    const { orgId } = await app.container.services.accounts.addCredits('mcp-org', 0);
    const stored = await app.container.stores.mcpServers.get(orgId, ticketsId);
    expect(stored?.secretSealed).toMatch(/^v1\./);
    expect(stored?.secretSealed).not.toContain(TICKET_KEY);
    expect((await call(`${app.url}/v1/agent/mcp-servers/${ticketsId}`, { key: otherKey })).status).toBe(404);
    const both = await register({ name: 'both', url: remote.url, api_key: TICKET_KEY, auth: { type: 'oauth' } });
    expect(both.status).toBe(400);
    expect(((await both.json()) as { detail: { error: { param: string } } }).detail.error.param).toBe('auth');
    const notOAuth = await call(`${app.url}/v1/agent/mcp-servers/${ticketsId}/oauth/start`, { key, method: 'POST' });
    expect(notOAuth.status).toBe(400);
    // A server with no OAuth metadata cannot be signed in to: said, and not kept.
    const noOAuth = await register({ name: 'no_oauth', url: remote.url, auth: { type: 'oauth' } });
    expect(noOAuth.status).toBe(502);
    // A 5xx has the top-level `{error}` shape (docs/errors.md).
    const failed = ((await noOAuth.json()) as { error: { code: string; message: string } }).error;
    expect(failed.code).toBe('oauth_sign_in_failed');
    expect(failed.message).toMatch(/no dynamic client registration/);
    expect(await (await call(`${app.url}/v1/agent/mcp-servers`, { key })).text()).not.toContain('no_oauth');
    const again = await register({ name: 'tickets', url: remote.url });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { detail: { error: { code: string } } }).detail.error.code).toBe(
      'mcp_server_exists',
    );
  });

  it("lists the server's tools under namespaced names, read from the server with its key", async () => {
    const res = await call(`${app.url}/v1/agent/mcp-servers/${ticketsId}/tools`, { key });
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as { data: { name: string; input_schema: Record<string, unknown> }[] };
    expect(data.map((t) => t.name).sort()).toEqual(['tickets__hang', 'tickets__huge', 'tickets__lookup_ticket']);
    expect(JSON.stringify(data[0]?.input_schema ?? data)).toContain('properties');
  });

  it('runs an agent that calls a tool of the remote server and reads its answer', async () => {
    const seen = upstream.requests.length;
    const before = remote.calls.length;
    scriptCall('tickets__lookup_ticket', { id: 'T-42' });
    const run = await runWith(['tickets']);
    expect(run.status).toBe('completed');
    expect(run.response).toEqual({ answer: 'done' });
    expect(remote.calls.slice(before)).toEqual([{ name: 'lookup_ticket', args: { id: 'T-42' } }]);
    const [first, second] = upstream.requests.slice(seen);
    const offered = (first?.body.tools as { function: { name: string; parameters: { properties: object } } }[]).find(
      (t) => t.function.name === 'tickets__lookup_ticket',
    );
    expect(offered?.function.parameters.properties).toHaveProperty('id');
    const messages = second?.body.messages as { role: string; content: string }[];
    expect(messages.find((m) => m.role === 'tool')?.content).toContain('printer on floor 3 is jammed');
    const step = run.steps.find((s) => s.kind === 'tool');
    expect(step).toMatchObject({ name: 'tickets__lookup_ticket', arguments: { id: 'T-42' }, error: null });
  });

  it("checks arguments against the server's schema before calling it", async () => {
    const before = remote.calls.length;
    scriptCall('tickets__lookup_ticket', { id: 'not a ticket id' });
    const run = await runWith(['tickets']);
    expect(run.status).toBe('completed');
    expect(run.steps.find((s) => s.kind === 'tool')?.error).toMatch(
      /Invalid arguments for tool 'tickets__lookup_ticket'/,
    );
    expect(remote.calls.length).toBe(before);
  });

  it("fails a call that hangs at the server's timeout; the run goes on", async () => {
    expect((await register({ name: 'slow', url: remote.url, api_key: TICKET_KEY, timeout_s: 1 })).status).toBe(201);
    scriptCall('slow__hang', {});
    const run = await runWith(['slow']);
    expect(run.status).toBe('completed');
    expect(run.steps.find((s) => s.kind === 'tool')?.error).toMatch(
      /did not answer the call of 'hang'.*(1000 ms|timed out)/,
    );
  });

  it('cuts a 50 MB answer off at the byte cap', async () => {
    scriptCall('tickets__huge', {});
    const run = await runWith(['tickets']);
    expect(run.status).toBe('completed');
    expect(run.steps.find((s) => s.kind === 'tool')?.error).toMatch(/larger than 4194304 bytes/);
  });

  it('pauses before a remote tool named in require_approval and calls it once approved', async () => {
    const before = remote.calls.length;
    scriptCall('tickets__lookup_ticket', { id: 'T-7' });
    const paused = await runWith(['tickets'], { require_approval: ['tickets__lookup_ticket'] });
    expect(paused.status).toBe('paused');
    expect(remote.calls.length).toBe(before);
    const resumed = (await (
      await call(`${app.url}/v1/agent/executions/${paused.id}/resume`, { key, json: { action: 'approve' } })
    ).json()) as ExecutionWire;
    expect(resumed.status).toBe('completed');
    expect(remote.calls.slice(before)).toEqual([{ name: 'lookup_ticket', args: { id: 'T-7' } }]);
  });

  it('refuses an execution naming a server the organisation has not registered', async () => {
    const res = await call(`${app.url}/v1/agent/execute`, {
      key: otherKey,
      json: { model: 'prism-orion-2', config: { prompt: 'x', mcp_servers: ['tickets'] } },
    });
    expect(res.status).toBe(400);
    const { error } = ((await res.json()) as { detail: { error: { code: string; param: string } } }).detail;
    expect(error).toMatchObject({ code: 'unknown_mcp_server', param: 'config.mcp_servers' });
  });

  it('a server whose key is wrong leaves the run without its tools, said in the usage message', async () => {
    expect((await register({ name: 'wrongkey', url: remote.url, api_key: 'nope' })).status).toBe(201);
    upstream.next({ kind: 'reply', content: '```json\n{"answer": "no tools"}\n```' });
    const run = await runWith(['wrongkey']);
    expect(run.status).toBe('completed');
    expect(run.usage.message).toMatch(/MCP servers could not be used: wrongkey:/);
  });

  it('deletes a server', async () => {
    const res = await call(`${app.url}/v1/agent/mcp-servers/${ticketsId}`, { key, method: 'DELETE' });
    expect(res.status).toBe(200);
    expect((await call(`${app.url}/v1/agent/mcp-servers/${ticketsId}`, { key })).status).toBe(404);
  });
});

describe('remote MCP servers on a deployment that keeps to public addresses', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('refuses a loopback or private URL, and a key when no PRISM_SECRETS_KEY is set', async () => {
    for (const url of ['http://127.0.0.1:9/mcp', 'http://10.0.0.5/mcp', 'http://[::1]:9/mcp', 'file:///etc/passwd']) {
      const res = await call(`${app.url}/v1/agent/mcp-servers`, { key: app.ownerKey, json: { name: 'inside', url } });
      expect(res.status).toBe(400);
      const { error } = ((await res.json()) as { detail: { error: { code: string; param: string } } }).detail;
      expect(error).toMatchObject({ code: 'url_not_allowed', param: 'url' });
    }
    const keyed = await call(`${app.url}/v1/agent/mcp-servers`, {
      key: app.ownerKey,
      json: { name: 'keyed', url: 'https://mcp.example.com/mcp', api_key: 'k' },
    });
    expect(keyed.status).toBe(503);
    expect(((await keyed.json()) as { detail: { error: { code: string } } }).detail.error.code).toBe(
      'secrets_unavailable',
    );
    // OAuth tokens are sealed with the same key: without it, no OAuth server either (refused before any request).
    const oauth = await call(`${app.url}/v1/agent/mcp-servers`, {
      key: app.ownerKey,
      json: { name: 'signed', url: 'https://mcp.example.com/mcp', auth: { type: 'oauth' } },
    });
    expect(oauth.status).toBe(503);
    expect(((await oauth.json()) as { detail: { error: { code: string } } }).detail.error.code).toBe(
      'secrets_unavailable',
    );
  });
});
