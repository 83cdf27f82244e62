/**
 * The MCP Inspector CLI (2.12, `mcp-inspector --cli`) against the running app, as a person uses it: with a key it
 * lists the tools and calls one (exit 5 for an `isError` result); with no key it signs in with OAuth (it prints the
 * authorization URL and opens the browser, the person approves on the consent page, its callback on 127.0.0.1
 * gets the code) and later runs reuse the stored sign-in; a wrong key, a revoked sign-in and no credential at all
 * each read as what they are (`--stored-auth-only`, the mode for scripts, prints the JSON error body Prism sent).
 *
 * The Inspector needs Node >= 22.19 and Prism runs on Node 20, so neither is a dependency: `sh
 * scripts/install-inspector.sh` puts a Node 22 and the Inspector in .cache/inspector (or $PRISM_INSPECTOR_DIR);
 * without them this suite is skipped with one line. Its home, token store and browser are the test's own.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { answerConsent } from '../../helpers/oauth-test-client';
import { startTestApp, type TestApp } from '../../helpers/test-app';

jest.setTimeout(120_000);

const DIR = process.env.PRISM_INSPECTOR_DIR ?? path.resolve(__dirname, '..', '..', '..', '.cache', 'inspector');
const NODE22 = path.join(DIR, 'node', 'bin', 'node');
const INSPECTOR = path.join(DIR, 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build');
const INSTALLED = fs.existsSync(NODE22) && fs.existsSync(path.join(INSPECTOR, 'index.js'));
if (!INSTALLED) console.warn('mcp-inspector: not installed (sh scripts/install-inspector.sh); skipped');

interface InspectorRun {
  code: number;
  json: Record<string, unknown>;
  stderr: string;
}

/** A free port on 127.0.0.1 for the Inspector's OAuth callback (its default, 6276, may be taken). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe(`MCP Inspector CLI${INSTALLED ? '' : ' (skipped: sh scripts/install-inspector.sh)'}`, () => {
  const maybe = INSTALLED ? it : it.skip;
  let app: TestApp;
  let key: string;
  let root: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    if (!INSTALLED) return;
    app = await startTestApp();
    key = await app.createKey('inspector-people', 'pro');
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-inspector-'));
    const browser = path.join(root, 'browser.sh');
    fs.writeFileSync(browser, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${path.join(root, 'browser.log')}'\n`, {
      mode: 0o755,
    });
    fs.mkdirSync(path.join(root, 'home'));
    env = {
      PATH: process.env.PATH ?? '',
      HOME: path.join(root, 'home'),
      NO_COLOR: '1',
      // No TTY here: let the CLI start the browser sign-in anyway, through this "browser" (xdg-open honours it).
      MCP_AUTO_OPEN_ENABLED: 'true',
      BROWSER: browser,
      MCP_OAUTH_CALLBACK_URL: `http://127.0.0.1:${await freePort()}/oauth/callback`,
      // No keychain on this machine: keep the tokens in a file under HOME, so a later run finds them.
      MCP_INSPECTOR_SECRET_STORE: 'file',
    };
  });
  afterAll(async () => {
    if (!INSTALLED) return;
    await app.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  /** Runs the CLI; `onStderr` sees its log as it comes (the sign-in URL). */
  function inspector(args: string[], onStderr: (text: string) => void = () => undefined): Promise<InspectorRun> {
    return new Promise((resolve, reject) => {
      let stderr = '';
      const child = execFile(
        NODE22,
        [path.join(INSPECTOR, 'index.js'), '--cli', `${app.url}/mcp`, '--format', 'json', ...args],
        { timeout: 90_000, env },
        (error, stdout) => {
          const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
          const text = `${stdout}`.trim() || stderr.trim();
          const line = text.split('\n').find((l) => l.startsWith('{')) ?? '';
          try {
            resolve({ code, json: JSON.parse(line) as Record<string, unknown>, stderr });
          } catch {
            reject(new Error(`inspector printed no JSON (exit ${code}): ${text.slice(0, 500)}`));
          }
        },
      );
      child.stdin?.end();
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
        onStderr(stderr);
      });
    });
  }

  const message = (run: InspectorRun): string => String((run.json.error as { message?: string }).message);

  maybe('lists the tools and calls one with a key', async () => {
    const auth = ['--header', `Authorization: Bearer ${key}`];
    const listed = await inspector(['--method', 'tools/list', ...auth]);
    expect(listed.code).toBe(0);
    const tools = (listed.json.result as { tools: { name: string }[] }).tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['extract_document', 'run_skill', 'upload_file']));

    const called = await inspector([
      '--method',
      'tools/call',
      '--tool-name',
      'get_domain_schema',
      '--tool-arg',
      'domain=document.invoice',
      ...auth,
      // The hub is not in a keyed caller's default (extraction, files, run): ask for it.
      '--header',
      'X-MCP-Toolsets: hub',
    ]);
    expect(called.code).toBe(0);
    const result = called.json.result as { structuredContent: Record<string, unknown>; isError?: boolean };
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent).toMatchObject({ domain: 'document.invoice' });
  });

  maybe('reports an account-only tool called anonymously as a tool error (exit 5)', async () => {
    const anonymous = await inspector([
      '--method',
      'tools/call',
      '--tool-name',
      'list_files',
      '--header',
      'Authorization: Bearer prism',
    ]);
    expect(anonymous.code).toBe(5);
  });

  maybe('says "Invalid API Key" for a wrong key, and what to send for no credential at all', async () => {
    const wrong = await inspector([
      '--method',
      'tools/list',
      '--stored-auth-only',
      '--header',
      'Authorization: Bearer prism_not_a_key',
    ]);
    expect(wrong.code).toBe(3);
    expect(wrong.json).toMatchObject({ error: { code: 'auth_required' } });
    expect(message(wrong)).toMatch(/"message":"Invalid API Key"/);

    const none = await inspector(['--method', 'tools/list', '--stored-auth-only']);
    expect(none.code).toBe(3);
    expect(message(none)).toMatch(/Authentication required: sign in with OAuth .*Bearer <Prism API key>/);
  });

  maybe(
    'signs in with OAuth (browser, consent page, its callback), reuses it, and says when it was revoked',
    async () => {
      const signer = await app.container.services.accounts.createKey({ org: 'inspector-people', name: 'for-oauth' });
      // The person: opens the URL the CLI prints, approves with `apiKey`, and the browser lands on the callback.
      const consent: { answered: Promise<void> | null } = { answered: null };
      const signIn =
        (apiKey: string) =>
        (text: string): void => {
          const printed = /Please navigate to: (\S+)/.exec(text)?.[1];
          if (!printed || consent.answered) return;
          consent.answered = (async () => {
            const back = await answerConsent(new URL(printed), { action: 'approve', apiKey });
            const landing = await fetch(back);
            expect(landing.status).toBe(200);
            expect(await landing.text()).toMatch(/OAuth complete/);
          })();
        };
      const signedIn = await inspector(['--method', 'tools/list'], signIn(signer.key));
      await consent.answered;
      consent.answered = null;
      expect(signedIn.code).toBe(0);
      expect((signedIn.json.result as { tools: unknown[] }).tools.length).toBeGreaterThan(0);
      // It asked the system browser to open the URL it printed.
      const opened = fs.readFileSync(path.join(root, 'browser.log'), 'utf8');
      expect(opened).toContain(`${app.url}/authorize?`);

      // A script's later run uses the stored sign-in, without a browser.
      const again = await inspector(['--method', 'tools/list', '--stored-auth-only']);
      expect(again.code).toBe(0);

      // The key the person signed in with is revoked: its tokens end, and the Inspector says why.
      await app.container.services.accounts.revokeKey(signer.keyId);
      const revoked = await inspector(['--method', 'tools/list', '--stored-auth-only']);
      expect(revoked.code).toBe(3);
      expect(revoked.json).toMatchObject({ error: { code: 'auth_required' } });
      // Its JSON says only "Unauthorized"; its log carries the token endpoint's reason for refusing the refresh.
      expect(revoked.stderr).toMatch(
        /invalid_grant.*The refresh token is unknown, expired or revoked\. Sign in again\./,
      );

      // Run as a person would (not script mode), it starts a new sign-in, and works again.
      expect((await inspector(['--method', 'tools/list'], signIn(key))).code).toBe(0);
      await (consent.answered as Promise<void> | null);
    },
  );
});
