/**
 * Cost curves of hostile inputs: input size → server time, event-loop block and memory, against a real
 * server process, for docs/security.md. Not part of CI (the fuzz and cost suite, test/integration/cost-bounds.test.ts,
 * asserts the bounds); run it to see the curves, or against another checkout to compare:
 *
 *   node --import tsx scripts/cost-curves.ts [--root <checkout>] [--timeout-s 30]
 *
 * `--root` runs that checkout's server (`node -r ./bin/register-ts.js server.ts`, its node_modules) with the inputs
 * generated here (test/helpers/hostile-inputs.ts). Per input: the request's wall time, the slowest `/v1/health`
 * answer while it ran (how long the event loop was blocked), and the process's resident-memory growth (peak RSS,
 * reset before each input through /proc/<pid>/clear_refs). A request that outlives the timeout is reported as such
 * and the server is restarted on the same data folder.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { enumSchema, longDescriptionSchema, manySchemasZip } from '../test/helpers/budget-inputs';
import { frontMatterZip, selfReferencingSchema, stateGraphZip } from '../test/helpers/hostile-inputs';
import { renderReceiptImage } from '../test/helpers/media-fixtures';

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? (args[at + 1] ?? fallback) : fallback;
};
const ROOT = path.resolve(option('root', path.join(__dirname, '..')));
const TIMEOUT_MS = Number(option('timeout-s', '30')) * 1000;
/** `--only budget`: only the rows of issue 39's table (the per-request work budget). */
const ONLY = option('only', 'all');
const DATA = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-cost-'));

interface Server {
  url: string;
  child: ChildProcess;
}

async function start(): Promise<Server> {
  const child = spawn(process.execPath, ['-r', './bin/register-ts.js', 'server.ts'], {
    cwd: ROOT,
    env: { ...process.env, PRISM_DATA_DIR: DATA, PORT: '0', HOST: '127.0.0.1', PRISM_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start:\n${stderr}`)), 60_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /listening on (http:\/\/[\d.:]+)/.exec(stderr);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
  });
  return { url, child };
}

const kb = (pid: number, field: string): number =>
  Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);

interface Row {
  input: string;
  size: string;
  status: string;
  ms: number;
  healthMs: number;
  rssGrowthMb: number;
}

let server: Server;
const rows: Row[] = [];

async function measure(input: string, size: string, send: (url: string) => Promise<Response>): Promise<void> {
  const pid = server.child.pid as number;
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    // peak RSS then counts from the process start
  }
  const rssBefore = kb(pid, 'VmRSS');
  let polling = true;
  let healthMs = 0;
  const poller = (async () => {
    while (polling) {
      const started = performance.now();
      await fetch(`${server.url}/v1/health`, { signal: AbortSignal.timeout(TIMEOUT_MS) })
        .then((r) => r.text())
        .catch(() => undefined);
      healthMs = Math.max(healthMs, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  const started = performance.now();
  let status: string;
  try {
    const res = await Promise.race([
      send(server.url),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), TIMEOUT_MS)),
    ]);
    await res.text();
    status = String(res.status);
  } catch (error) {
    status = (error as Error).message === 'timeout' ? `>${TIMEOUT_MS / 1000} s` : 'error';
  }
  const ms = performance.now() - started;
  polling = false;
  const peak = fs.existsSync(`/proc/${pid}`) ? kb(pid, 'VmHWM') : rssBefore;
  if (status.startsWith('>')) {
    server.child.kill('SIGKILL');
    await new Promise((resolve) => server.child.once('exit', resolve));
    server = await start();
  } else {
    await poller;
  }
  const row = { input, size, status, ms: Math.round(ms), healthMs: Math.round(healthMs), rssGrowthMb: 0 };
  row.rssGrowthMb = Math.round((peak - rssBefore) / 1024);
  rows.push(row);
  console.log(JSON.stringify(row));
}

async function ownerKey(): Promise<string> {
  return fs.readFileSync(path.join(DATA, 'owner.key'), 'utf8').trim();
}

async function main(): Promise<void> {
  server = await start();
  const key = await ownerKey();
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const inlineChat = (zip: Buffer) => (url: string) =>
    fetch(`${url}/v1/compat/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'prism-orion-1',
        messages: [{ role: 'user', content: 'Use the skill.' }],
        skills: [{ type: 'inline', source: { type: 'base64', data: zip.toString('base64') } }],
      }),
    });
  // The first agent chat loads the agent runtime: warm it so its one-off start is not counted as the input's cost.
  await (await inlineChat(frontMatterZip(10))(server.url)).text();
  await budgetRows(auth.authorization, inlineChat);
  if (ONLY === 'budget') return finish();
  for (const keys of [1000, 4000, 16_000, 30_000]) {
    await measure('front matter keys (anonymous chat, inline skill)', String(keys), inlineChat(frontMatterZip(keys)));
  }
  for (const states of [1000, 4000, 20_000]) {
    await measure('prism.yaml states (/v1/skills/create)', String(states), async (url) => {
      const form = new FormData();
      form.append('file', new Blob([stateGraphZip(states)]), 'skill.zip');
      const upload = await fetch(`${url}/v1/files`, {
        method: 'POST',
        headers: { authorization: auth.authorization },
        body: form,
      });
      const { id } = (await upload.json()) as { id: string };
      return fetch(`${url}/v1/skills/create`, { method: 'POST', headers: auth, body: JSON.stringify({ file_id: id }) });
    });
  }
  for (const width of [1, 2, 3, 4]) {
    await measure('self-referencing json_schema (/v1/agent/execute)', String(width), (url) =>
      fetch(`${url}/v1/agent/execute`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ inputs: {}, config: { prompt: 'Fill it.', json_schema: selfReferencingSchema(width) } }),
      }),
    );
  }
  for (const argBytes of [6_000, 60_000, 600_000]) {
    // Serialised before the measurement: building 60 MB here would block this process's health poller instead.
    const body = JSON.stringify(
      Array.from({ length: 100 }, (_, i) => ({
        jsonrpc: '2.0',
        id: i + 1,
        method: 'prompts/get',
        params: { name: 'receipt', arguments: { image: `https://example.com/${'a'.repeat(argBytes)}` } },
      })),
    );
    for (const who of ['anonymous', 'with a key'] as const) {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(who === 'with a key' ? { authorization: auth.authorization } : {}),
      };
      await measure(`MCP batch of 100 prompts/get, ${who} (argument bytes)`, String(argBytes), (url) =>
        fetch(`${url}/mcp`, { method: 'POST', headers, body }),
      );
    }
  }
  finish();
}

/** Issue 39's table: anonymous prism-1 chat with one long enum, one long description behind many $refs, a bundle. */
async function budgetRows(authorization: string, inlineChat: (zip: Buffer) => (url: string) => Promise<Response>) {
  const image = `data:image/png;base64,${renderReceiptImage().toString('base64')}`;
  const chat = (schema: Record<string, unknown>, key?: string) => (url: string) =>
    fetch(`${url}/v1/compat/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: key } : {}) },
      body: JSON.stringify({
        model: 'prism-1',
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: image } }] }],
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema } },
      }),
    });
  for (const values of [1500, 6000, 24_000]) {
    await measure('prism-1 chat, one enum (anonymous)', String(values), chat(enumSchema(values)));
    await measure('prism-1 chat, one enum (with a key)', String(values), chat(enumSchema(values), authorization));
  }
  for (const refs of [100, 400, 1990]) {
    await measure(
      'long $defs description (20 KB) x refs (anonymous)',
      String(refs),
      chat(longDescriptionSchema(20_000, refs)),
    );
  }
  for (const schemas of [10, 40, 600]) {
    await measure(
      'inline skill, schemas of 200 properties (anonymous)',
      String(schemas),
      inlineChat(manySchemasZip(schemas, 200)),
    );
  }
}

function finish(): void {
  server.child.kill('SIGTERM');
  console.log('\n| input | size | status | time ms | slowest health ms | peak RSS growth MB |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const r of rows) {
    console.log(`| ${r.input} | ${r.size} | ${r.status} | ${r.ms} | ${r.healthMs} | ${r.rssGrowthMb} |`);
  }
  fs.rmSync(DATA, { recursive: true, force: true });
}

main().catch((error: unknown) => {
  console.error(error);
  server?.child.kill('SIGKILL');
  process.exit(1);
});
