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
 *
 * `--only worker`: large schemas that fit the budget (the structure worker pool's rows: they compile off the event
 * loop in this checkout, on it before). `--overhead <before-checkout>`: instead of curves, the work budget's
 * overhead on ordinary requests, as one ratio per kind: this checkout's server and the other's side by side on the
 * same machine at the same moment, requests alternating between them, median over the rounds.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { enumSchema, heavySchema, longDescriptionSchema, manySchemasZip } from '../test/helpers/budget-inputs';
import { frontMatterZip, selfReferencingSchema, stateGraphZip } from '../test/helpers/hostile-inputs';
import { renderReceiptImage } from '../test/helpers/media-fixtures';

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? (args[at + 1] ?? fallback) : fallback;
};
const ROOT = path.resolve(option('root', path.join(__dirname, '..')));
const TIMEOUT_MS = Number(option('timeout-s', '30')) * 1000;
/** `--only budget`: only the rows of issue 39's table (the per-request work budget); `--only worker`: the pool's. */
const ONLY = option('only', 'all');
const OVERHEAD_BEFORE = option('overhead', '');
const DATA = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-cost-'));

interface Server {
  url: string;
  child: ChildProcess;
}

async function start(root = ROOT, data = DATA, extraEnv: Record<string, string> = {}): Promise<Server> {
  const child = spawn(process.execPath, ['-r', './bin/register-ts.js', 'server.ts'], {
    cwd: root,
    env: {
      ...process.env,
      PRISM_DATA_DIR: data,
      PORT: '0',
      HOST: '127.0.0.1',
      PRISM_LOG_LEVEL: 'warn',
      ...extraEnv,
    },
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
  if (OVERHEAD_BEFORE !== '') return overhead(path.resolve(OVERHEAD_BEFORE));
  server = await start();
  console.log(
    `load average at the start: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  if (ONLY === 'worker') {
    await workerRows(await ownerKey());
    return finish();
  }
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

/**
 * Large schemas within the budget: compiled on a structure worker in this checkout, on the event loop before.
 * The chat has no image, so it is answered (400 missing_input) right after the schema check: its time is the
 * compile. Each request sends a schema not sent before (the compiled-schema cache would answer a repeat).
 */
async function workerRows(key: string): Promise<void> {
  let round = 0;
  const chat = (count: number, authorization?: string) => (url: string) =>
    fetch(`${url}/v1/compat/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      body: JSON.stringify({
        model: 'prism-1',
        messages: [{ role: 'user', content: 'Total 12.50' }],
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema: heavySchema(count, `r${round++}`) } },
      }),
    });
  for (const count of [120, 475, 1900]) {
    await measure('large schema, prism-1 chat (anonymous)', String(count), chat(count));
    await measure('large schema, prism-1 chat (with a key)', String(count), chat(count, `Bearer ${key}`));
  }
  // One after another, each its own: what stays in memory is the compiled-schema cache, bounded in bytes.
  await measure('12 large schemas one after another (anonymous)', '1900', async (url) => {
    for (let i = 0; i < 11; i += 1) await (await chat(1900)(url)).text();
    return chat(1900)(url);
  });
  // Several anonymous requests at once, each with its own large schema: they queue for the pool, not the loop.
  await measure('4 concurrent large schemas (anonymous)', '1900', async (url) => {
    const all = await Promise.all([0, 1, 2, 3].map(() => chat(1900)(url)));
    for (const res of all.slice(1)) await res.text();
    return all[0] as Response;
  });
}

/** Median of `values`. */
const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

/**
 * The budget's overhead on ordinary requests, in one run: this checkout's server and `beforeRoot`'s, alternating
 * request by request (so both see the same load), median per server, ratio after / before.
 */
async function overhead(beforeRoot: string): Promise<void> {
  const beforeData = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-cost-before-'));
  // Rate limits out of the way: the rounds are many more calls than a minute's default allowance.
  const unlimited = { PRISM_RATE_LIMIT_PER_MINUTE: '1000000', PRISM_RATE_LIMIT_PER_HOUR: '1000000' };
  const after = await start(ROOT, DATA, unlimited);
  const before = await start(beforeRoot, beforeData, unlimited);
  const image = `data:image/png;base64,${renderReceiptImage().toString('base64')}`;
  const schema = {
    type: 'object',
    properties: { merchant: { type: 'string' }, total: { type: 'number' }, date: { type: 'string' } },
  };
  // With the owner's key (an anonymous caller would meet its rate limit within the rounds).
  const keys = new Map([
    [after.url, fs.readFileSync(path.join(DATA, 'owner.key'), 'utf8').trim()],
    [before.url, fs.readFileSync(path.join(beforeData, 'owner.key'), 'utf8').trim()],
  ]);
  const headers = (url: string) => ({ 'content-type': 'application/json', authorization: `Bearer ${keys.get(url)}` });
  const gateway = (url: string) =>
    fetch(`${url}/v1/compat/chat/completions`, {
      method: 'POST',
      headers: headers(url),
      body: JSON.stringify({
        model: 'prism-1',
        messages: [{ role: 'user', content: 'Total 12.50' }],
        response_format: { type: 'json_schema', json_schema: { name: 'receipt', schema } },
      }),
    });
  const extraction = (url: string) =>
    fetch(`${url}/v1/compat/chat/completions`, {
      method: 'POST',
      headers: headers(url),
      body: JSON.stringify({
        model: 'prism-1',
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: image } }] }],
        response_format: { type: 'json_schema', json_schema: { name: 'receipt', schema } },
      }),
    });
  const kinds: [string, (url: string) => Promise<Response>, number][] = [
    ['gateway call (prism-1 chat with a schema, answered before the model: auth, budget, schema check)', gateway, 400],
    ['extraction (prism-1 chat, receipt image, 3-field schema)', extraction, 12],
  ];
  console.log(
    `load average before: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  for (const [what, send, rounds] of kinds) {
    for (const server of [after, before]) await (await send(server.url)).text(); // warm each
    const times: Record<'after' | 'before', number[]> = { after: [], before: [] };
    const statuses: Record<'after' | 'before', Record<number, number>> = { after: {}, before: {} };
    for (let i = 0; i < rounds; i += 1) {
      // Alternate which goes first, so neither always meets the other's leftovers.
      const order: ['after' | 'before', Server][] =
        i % 2 === 0
          ? [
              ['after', after],
              ['before', before],
            ]
          : [
              ['before', before],
              ['after', after],
            ];
      for (const [which, target] of order) {
        const started = performance.now();
        const res = await send(target.url);
        await res.text();
        times[which].push(performance.now() - started);
        statuses[which][res.status] = (statuses[which][res.status] ?? 0) + 1;
      }
    }
    const ratio = median(times.after) / median(times.before);
    console.log(
      `${what}: ${rounds} rounds, median after ${median(times.after).toFixed(2)} ms, ` +
        `before ${median(times.before).toFixed(2)} ms, ratio ${ratio.toFixed(3)} ` +
        `(statuses after ${JSON.stringify(statuses.after)}, before ${JSON.stringify(statuses.before)})`,
    );
  }
  console.log(
    `load average after: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  after.child.kill('SIGTERM');
  before.child.kill('SIGTERM');
  fs.rmSync(DATA, { recursive: true, force: true });
  fs.rmSync(beforeData, { recursive: true, force: true });
}

function finish(): void {
  server.child.kill('SIGTERM');
  console.log(
    `\nload average at the end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
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
