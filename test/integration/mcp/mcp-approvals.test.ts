/**
 * Approvals as questions at 2026-07-28: an agent run paused before a tool call answers a v2 client (form
 * elicitation declared) with `input_required`; the SDK asks its elicitation handler (the person) and retries; the
 * retry resumes the run (approve, or reject with a reason). The request state is sealed and bound to the caller:
 * replayed by another key, or altered, it is refused before anything runs. A client without elicitation gets the
 * paused execution and its resume_execution note, as 2025 clients do.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { renderReceiptImage } from '../../helpers/media-fixtures';
import { toolOutput } from '../../helpers/mcp-client';
import { connectModern, MODERN } from '../../helpers/mcp-modern-client';
import { call, startTestApp, type TestApp } from '../../helpers/test-app';

jest.setTimeout(120_000);

interface Elicited {
  message: string;
  requestedSchema: { properties: Record<string, unknown> };
}

describe('MCP approvals as input_required (2026-07-28)', () => {
  let app: TestApp;
  let key: string;
  let args: Record<string, unknown>;

  beforeAll(async () => {
    app = await startTestApp();
    key = await app.createKey('mcp-approvals', 'pro');
    await app.container.services.accounts.addCredits('mcp-approvals', 5);
    const receipt = `data:image/png;base64,${renderReceiptImage().toString('base64')}`;
    args = {
      inputs: { receipt },
      config: {
        prompt: 'Extract the receipt fields',
        json_schema: { type: 'object', properties: { company: { type: ['string', 'null'] } } },
        require_approval: ['ocr_image'],
      },
    };
  });
  afterAll(async () => {
    await app.close();
  });

  /** A v2 client pinned to 2026-07-28 whose elicitation handler is `person`. */
  const connectAsking = async (person: (asked: Elicited) => Record<string, unknown>): Promise<Client> => {
    const client = new Client(
      { name: 'prism-approver', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: MODERN } }, capabilities: { elicitation: { form: {} } } },
    );
    client.setRequestHandler('elicitation/create', (request) => person(request.params as unknown as Elicited) as never);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
      }),
    );
    return client;
  };

  it('asks the person, and the retried call resumes the approved run to its end', async () => {
    const asked: Elicited[] = [];
    const client = await connectAsking((question) => {
      asked.push(question);
      return { action: 'accept', content: { decision: 'approve' } };
    });
    try {
      const execution = toolOutput(
        (await client.callTool({ name: 'execute_agent', arguments: args }, { timeout: 110_000 })) as CallToolResult,
      );
      expect(asked.length).toBeGreaterThanOrEqual(1);
      expect(asked[0]?.message).toMatch(/ocr_image/);
      expect(Object.keys(asked[0]?.requestedSchema.properties ?? {})).toEqual(['decision', 'reason', 'arguments']);
      expect(execution.status).toBe('completed');
      const steps = JSON.stringify(execution.steps);
      expect(steps).toContain('ocr_image');
    } finally {
      await client.close();
    }
  });

  it('resumes a rejected call with the reason, and the run carries on without it', async () => {
    const client = await connectAsking(() => ({
      action: 'accept',
      content: { decision: 'reject', reason: 'not this image' },
    }));
    try {
      const execution = toolOutput(
        (await client.callTool({ name: 'execute_agent', arguments: args }, { timeout: 110_000 })) as CallToolResult,
      );
      expect(['completed', 'failed']).toContain(execution.status);
      expect(JSON.stringify(execution.steps)).toContain('not this image');
    } finally {
      await client.close();
    }
  });

  it('refuses the request state replayed by another caller or altered, before anything runs', async () => {
    const client = await connectAsking(() => ({ action: 'accept', content: { decision: 'approve' } }));
    let state: string;
    try {
      const first = (await client.callTool(
        { name: 'execute_agent', arguments: args },
        { allowInputRequired: true, timeout: 110_000 },
      )) as unknown as { resultType: string; requestState: string; inputRequests: Record<string, unknown> };
      expect(first.resultType).toBe('input_required');
      expect(Object.keys(first.inputRequests)).toEqual(['approval']);
      state = first.requestState;
    } finally {
      await client.close();
    }
    const replay = async (bearer: string, requestState: string) => {
      const res = await call(`${app.url}/mcp`, {
        key: bearer,
        headers: {
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': MODERN,
          'mcp-method': 'tools/call',
          'mcp-name': 'execute_agent',
        },
        json: {
          jsonrpc: '2.0',
          id: 9,
          method: 'tools/call',
          params: {
            name: 'execute_agent',
            arguments: args,
            inputResponses: { approval: { action: 'accept', content: { decision: 'approve' } } },
            requestState,
            _meta: {
              'io.modelcontextprotocol/protocolVersion': MODERN,
              'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
              'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
            },
          },
        },
      });
      const text = await res.text();
      const data = text.split('\n').find((line) => line.startsWith('data: '));
      return JSON.parse(data ? data.slice(6) : text) as { error?: { code: number; message: string } };
    };
    const other = await app.createKey('mcp-approvals', 'pro');
    const stolen = await replay(other, state);
    expect(stolen.error).toMatchObject({ code: -32602, message: 'Invalid or expired requestState' });
    const altered = await replay(key, `${state.slice(0, -4)}AAAA`);
    expect(altered.error).toMatchObject({ code: -32602, message: 'Invalid or expired requestState' });
    // The run still waits for its person: nothing was resumed.
    const id = (
      JSON.parse(Buffer.from(state.split('.')[1] ?? '', 'base64url').toString()) as { p: { execution_id: string } }
    ).p.execution_id;
    const record = (await (await call(`${app.url}/v1/agent/executions/${id}`, { key })).json()) as { status: string };
    expect(record.status).toBe('paused');
  });

  it('gives a client without elicitation the paused execution and its resume_execution note', async () => {
    const client = await connectModern(app.url, `Bearer ${key}`, { mode: 'pin' });
    try {
      const result = (await client.callTool({ name: 'execute_agent', arguments: args })) as CallToolResult;
      expect((result.structuredContent as { status: string }).status).toBe('paused');
      expect(JSON.stringify(result.content)).toMatch(/resume_execution/);
    } finally {
      await client.close();
    }
  });
});
