/**
 * The nginx configuration of docs/deployment.md, run for real in front of two replicas: the block is read from the
 * page (so the page cannot drift from what was tested), pointed at the replicas and a free port. Through it a
 * streamed chat completion arrives chunk by chunk (nothing buffered: the upstream holds its last chunk until the
 * client has seen the first), a decision-stream WebSocket upgrades and answers, and uploads reach either replica
 * and are served by the other. Skips with one line when nginx is not installed (`apt-get install nginx-light`).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { connectStream } from '../helpers/decision-client';
import { startReplicas, type Replicas } from '../helpers/replicas';
import { startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, uploadFile } from '../helpers/test-app';
import { writeLabModelsFile } from '../helpers/upstream-app';

const ROOT = path.resolve(__dirname, '..', '..');
const nginxPath = ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx'].find((p) => fs.existsSync(p));

/** The ```nginx block of docs/deployment.md, its upstream servers and listen address replaced. */
export function deploymentNginxBlock(servers: string[], listen: string): string {
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'deployment.md'), 'utf8');
  const block = /```nginx\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!block) throw new Error('docs/deployment.md has no nginx block');
  const withServers = block.replace(
    /( *)server 127\.0\.0\.1:8081;\n\s*server 127\.0\.0\.1:8082;/,
    (_m, indent: string) => servers.map((s) => `${indent}server ${s};`).join('\n'),
  );
  if (withServers === block) throw new Error('the nginx block no longer lists the two example servers');
  return withServers.replace('listen 8080;', `listen ${listen};`);
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function startNginx(dir: string, http: string): Promise<ChildProcess> {
  for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) {
    fs.mkdirSync(path.join(dir, sub), { recursive: true });
  }
  const conf = [
    `pid ${dir}/nginx.pid;`,
    `error_log ${dir}/error.log warn;`,
    'worker_processes 1;',
    'events { worker_connections 256; }',
    'http {',
    '  access_log off;',
    ...['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(
      (s) => `  ${s === 'body' ? 'client_body' : s}_temp_path ${dir}/${s};`,
    ),
    http,
    '}',
    '',
  ].join('\n');
  fs.writeFileSync(path.join(dir, 'nginx.conf'), conf);
  const test = spawnSync(nginxPath as string, ['-t', '-p', dir, '-c', path.join(dir, 'nginx.conf')], {
    encoding: 'utf8',
  });
  if (test.status !== 0) throw new Error(`nginx -t failed:\n${test.stderr}`);
  return spawn(nginxPath as string, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-g', 'daemon off;'], {
    stdio: 'ignore',
  });
}

async function waitForPort(port: number): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`nothing listens on ${port}`);
}

if (!nginxPath) process.stderr.write('nginx balancer: skipped, nginx is not installed (apt-get install nginx-light)\n');

(nginxPath ? describe : describe.skip)('nginx in front of two replicas (docs/deployment.md)', () => {
  let upstream: ScriptedUpstream;
  let replicas: Replicas;
  let dir: string;
  let nginx: ChildProcess;
  let url: string;
  let key: string;

  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-nginx-'));
    const modelsFile = writeLabModelsFile(dir, upstream.baseUrl, [
      { id: 'lab-chat', upstreamModel: 'qwen-7b', parameters: ['stream', 'stream_options', 'max_tokens'] },
    ]);
    replicas = await startReplicas(2, { PRISM_MODELS_FILE: modelsFile, PRISM_TRUST_PROXY: 'loopback' });
    const port = await freePort();
    const servers = replicas.apps.map((a) => new URL(a.url).host);
    nginx = await startNginx(path.join(dir, 'nginx'), deploymentNginxBlock(servers, `127.0.0.1:${port}`));
    await waitForPort(port);
    url = `http://127.0.0.1:${port}`;
    key = await replicas.apps[0]!.createKey('balanced', 'pro');
    await replicas.apps[0]!.container.services.accounts.addCredits('balanced', 5);
  });
  afterAll(async () => {
    nginx?.kill('SIGTERM');
    await replicas?.close();
    await upstream?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('passes a streamed chat completion through chunk by chunk', async () => {
    let release!: () => void;
    const rest = new Promise<void>((resolve) => (release = resolve));
    upstream.next({ kind: 'stream', chunks: ['first ', { content: 'second', waitFor: rest }] });
    const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1/compat`, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'lab-chat',
      messages: [{ role: 'user', content: 'two words' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      // The second chunk exists only once the first has crossed nginx: a buffering proxy would hang here.
      if (text === 'first ') release();
    }
    expect(text).toBe('first second');
  });

  it('upgrades the decision-stream WebSocket', async () => {
    const client = await connectStream(url, key);
    try {
      client.send({
        type: 'session.create',
        questions: [{ id: 'has_text', question: 'Is there text?', type: 'boolean' }],
      });
      const created = await client.next('session.created');
      expect(created.session.questions.map((q) => q.id)).toEqual(['has_text']);
    } finally {
      await client.close();
    }
  });

  it('spreads requests over both replicas, each serving what the other stored', async () => {
    const ids: string[] = [];
    const answeredBy = new Set<string>();
    for (let i = 0; i < 4; i += 1) {
      const res = await uploadFile(url, key, `balanced ${i}`, { filename: `b${i}.txt` });
      expect(res.status).toBe(201);
      answeredBy.add(res.headers.get('x-prism-replica') ?? '');
      ids.push(((await res.json()) as { id: string }).id);
    }
    expect([...answeredBy].sort()).toEqual(replicas.apps.map((a) => new URL(a.url).host).sort());
    for (const app of replicas.apps) {
      for (const [i, id] of ids.entries()) {
        const res = await call(`${app.url}/v1/files/${id}/content`, { key });
        expect(await res.text()).toBe(`balanced ${i}`);
      }
    }
  });
});
