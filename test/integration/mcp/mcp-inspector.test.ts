/**
 * The MCP Inspector CLI (2.12, `mcp-inspector --cli`) against the running app: a third-party client lists the tools,
 * calls one with a key, gets exit 5 for an `isError` result, and exit 3 (auth required) for an unknown key.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startTestApp, type TestApp } from '../../helpers/test-app';

const INSPECTOR = path.resolve(__dirname, '..', '..', '..', 'node_modules', '.bin', 'mcp-inspector');

interface InspectorRun {
  code: number;
  json: Record<string, unknown>;
}

function inspector(url: string, args: string[]): Promise<InspectorRun> {
  return new Promise((resolve, reject) => {
    execFile(
      INSPECTOR,
      ['--cli', `${url}/mcp`, '--transport', 'http', '--format', 'json', ...args],
      { timeout: 60_000, env: { ...process.env, NO_COLOR: '1' } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        const text = `${stdout}`.trim() || `${stderr}`.trim();
        try {
          resolve({ code, json: JSON.parse(text.split('\n')[0] ?? '') as Record<string, unknown> });
        } catch {
          reject(new Error(`inspector printed no JSON (exit ${code}): ${text.slice(0, 300)}`));
        }
      },
    );
  });
}

// The Inspector needs Node 22, so it is not a dev dependency (Prism supports Node 20): install it to run this suite.
const describeWithInspector = fs.existsSync(INSPECTOR) ? describe : describe.skip;

describeWithInspector('MCP Inspector CLI (skipped unless `npm i --no-save @modelcontextprotocol/inspector`)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('lists the tools and calls one with a key', async () => {
    const auth = ['--header', `Authorization: Bearer ${app.ownerKey}`];
    const listed = await inspector(app.url, ['--method', 'tools/list', ...auth]);
    expect(listed.code).toBe(0);
    const tools = (listed.json.result as { tools: { name: string }[] }).tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['extract_document', 'get_domain_schema', 'upload_file']));

    const called = await inspector(app.url, [
      '--method',
      'tools/call',
      '--tool-name',
      'get_domain_schema',
      '--tool-arg',
      'domain=document.invoice',
      ...auth,
    ]);
    expect(called.code).toBe(0);
    const result = called.json.result as { structuredContent: Record<string, unknown>; isError?: boolean };
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent).toMatchObject({ domain: 'document.invoice' });
    expect(typeof result.structuredContent.schema_version).toBe('string');
  });

  it('reports an account-only tool called anonymously as a tool error, and an unknown key as auth required', async () => {
    const anonymous = await inspector(app.url, [
      '--method',
      'tools/call',
      '--tool-name',
      'list_files',
      '--header',
      'Authorization: Bearer prism',
    ]);
    expect(anonymous.code).toBe(5);
    const badKey = await inspector(app.url, ['--method', 'tools/list', '--header', 'Authorization: Bearer prism_nope']);
    expect(badKey.code).toBe(3);
    expect(badKey.json).toMatchObject({ error: { code: 'auth_required' } });
  });
});
