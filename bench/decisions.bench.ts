/**
 * Decision stream benchmarks, against Prism in its own process (as deployed), with `ws` clients in this one:
 * - one session, closed loop (the next frame leaves when the previous decision arrives): sustained frames/s;
 * - one session, open loop at 100 frames/s (a camera does not wait): how many are decided, how many dropped, and
 *   the p50/p95 decision latency the server reports and the round trip the client sees;
 * - one session on a key with a budget (and its organisation with one), closed loop: frames/s against the owner
 *   key's in the same run, the cost of holding the budgets a slice of frames at a time (budget-slices.ts);
 * - ten sessions, closed loop, at once: each session's frames/s, to show the server shares fairly.
 * Frames are 640×480 JPEGs of a textured scene with text (two, alternating, so the change measure has work);
 * the questions are the five cheap measures (text present, text lines, brightness, dominant colour, change).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createCanvas } from '@napi-rs/canvas';
import sharp from 'sharp';
import WebSocket from 'ws';
import type { GroupReport } from './harness';

const ROOT = path.resolve(__dirname, '..');
const DURATION_MS = 5000;
const OPEN_LOOP_FPS = 100;
/** Sessions at once in the fairness case. */
const TEN = 10;

const QUESTIONS = [
  { id: 'text', question: 'Is there text?', type: 'boolean' },
  { id: 'lines', question: 'How many lines of text are there?', type: 'integer' },
  { id: 'level', question: 'How bright is it?', type: 'number' },
  { id: 'colour', question: 'What is the dominant colour?', type: 'enum', options: ['red', 'green', 'white', 'grey'] },
  { id: 'moved', question: 'How much changed since the previous frame?', type: 'number' },
];

/** A camera-like 640×480 JPEG: gradient, shapes, fine texture and a caption. */
async function sceneFrame(shift: number): Promise<Buffer> {
  const canvas = createCanvas(640, 480);
  const ctx = canvas.getContext('2d');
  const gradient = ctx.createLinearGradient(0, 0, 640, 480);
  gradient.addColorStop(0, '#6a8caf');
  gradient.addColorStop(1, '#d8d2c0');
  ctx.fillStyle = gradient;
  ctx.fillRect(0, 0, 640, 480);
  ctx.fillStyle = '#3b5d2a';
  ctx.fillRect(60 + shift, 220, 180, 200);
  ctx.fillStyle = '#a0342c';
  ctx.beginPath();
  ctx.arc(450 - shift, 180, 80, 0, Math.PI * 2);
  ctx.fill();
  ctx.fillStyle = '#111';
  ctx.font = '28px DejaVu Sans';
  ctx.fillText('GATE 4  departures 10:45', 40, 60);
  const png = canvas.toBuffer('image/png');
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  for (let i = 0; i < data.length; i += 1) {
    data[i] = Math.max(0, Math.min(255, (data[i] as number) + ((i * 2654435761) % 13) - 6));
  }
  return sharp(data, { raw: { width: info.width, height: info.height, channels: 3 } })
    .jpeg({ quality: 80 })
    .toBuffer();
}

async function startPrism(dataDir: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, ['-r', './bin/register-ts.js', 'server.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PRISM_DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      PRISM_LOG_LEVEL: 'warn',
      PRISM_DECISION_PER_MINUTE: '1000000',
      PRISM_DECISION_PER_HOUR: '10000000',
      // Ten sessions on the owner key: the per-caller cap (6 by default, docs/decisions.md) is raised for them.
      PRISM_DECISION_CALLER_STREAMS: String(TEN),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /listening on (http:\/\/[\d.:]+)/.exec(stderr);
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`prism exited with ${code}: ${stderr}`)));
  });
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

interface Session {
  ws: WebSocket;
  /** Frames sent on the connection so far: the server numbers frames by connection (`seq`). */
  sent: number;
  /** Called with each decision or drop: seq, server latency (null for a drop). */
  onReply: (handler: (seq: number, latencyMs: number | null) => void) => void;
}

async function openSession(url: string, key: string): Promise<Session> {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/compat/decisions/stream`, {
    headers: { authorization: `Bearer ${key}` },
  });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  let handler: (seq: number, latencyMs: number | null) => void = () => undefined;
  const created = new Promise<void>((resolve, reject) => {
    ws.on('message', (data: Buffer) => {
      const event = JSON.parse(data.toString('utf8')) as { type: string; seq?: number; latency_ms?: number };
      if (event.type === 'session.created') resolve();
      else if (event.type === 'decision') handler(event.seq as number, event.latency_ms as number);
      else if (event.type === 'frame.dropped') handler(event.seq as number, null);
      else reject(new Error(`unexpected event: ${data.toString('utf8')}`));
    });
  });
  ws.send(JSON.stringify({ type: 'session.create', questions: QUESTIONS }));
  await created;
  return { ws, sent: 0, onReply: (h) => (handler = h) };
}

/** A key of a new organisation with credits, a daily budget of its own and an organisation budget (the admin API). */
async function budgetedKey(url: string, ownerKey: string): Promise<string> {
  const admin = async (route: string, method: string, body: unknown): Promise<Record<string, unknown>> => {
    const res = await fetch(`${url}/v1/admin${route}`, {
      method,
      headers: { authorization: `Bearer ${ownerKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`admin ${route}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, unknown>;
  };
  await admin('/organisations', 'POST', { name: 'bench-budgeted', tier: 'pro' });
  await admin('/organisations/bench-budgeted/credits', 'POST', { amount_usd: 100 });
  await admin('/organisations/bench-budgeted/budget', 'PUT', { budget_usd: 100, budget_period: 'daily' });
  const created = await admin('/keys', 'POST', { org: 'bench-budgeted', budget_usd: 100, budget_period: 'daily' });
  return String(created.key);
}

/** Closes a session and waits for the close handshake: the server frees the caller's stream place only then. */
async function closeSession(session: Session): Promise<void> {
  await new Promise((resolve) => {
    session.ws.once('close', resolve);
    session.ws.close();
  });
}

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

/** Sends a frame whenever the previous one is answered, for `ms`; returns decided frames per second. */
async function closedLoop(session: Session, frames: Buffer[], ms: number): Promise<number> {
  let decided = 0;
  let seq = 0;
  const started = performance.now();
  await new Promise<void>((resolve) => {
    const sendNext = (): void => {
      if (performance.now() - started >= ms) return resolve();
      session.ws.send(frames[seq % frames.length] as Buffer, { binary: true });
      seq += 1;
      session.sent += 1;
    };
    session.onReply((_seq, latency) => {
      if (latency !== null) decided += 1;
      sendNext();
    });
    sendNext();
  });
  return decided / ((performance.now() - started) / 1000);
}

/** Sends `fps` frames a second for `ms` regardless of replies; latencies are the server's and the round trip. */
async function openLoop(session: Session, frames: Buffer[], fps: number, ms: number) {
  const sentAt = new Map<number, number>();
  const serverMs: number[] = [];
  const roundTripMs: number[] = [];
  let dropped = 0;
  let sent = 0;
  const total = Math.round((fps * ms) / 1000);
  const done = new Promise<void>((resolve) => {
    let replies = 0;
    session.onReply((seq, latency) => {
      if (latency === null) dropped += 1;
      else {
        serverMs.push(latency);
        roundTripMs.push(performance.now() - (sentAt.get(seq) ?? 0));
      }
      replies += 1;
      if (replies === total) resolve();
    });
  });
  const started = performance.now();
  // Paced by the clock, not by a chain of timers, so timer slack does not lower the rate.
  while (sent < total) {
    const due = started + (sent * 1000) / fps;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    sent += 1;
    session.sent += 1;
    sentAt.set(session.sent, performance.now());
    session.ws.send(frames[sent % frames.length] as Buffer, { binary: true });
  }
  await done;
  return {
    sent,
    decided: serverMs.length,
    dropped,
    serverP50: percentile(serverMs, 50),
    serverP95: percentile(serverMs, 95),
    roundTripP50: percentile(roundTripMs, 50),
    roundTripP95: percentile(roundTripMs, 95),
  };
}

export async function decisionBenchmarks(): Promise<GroupReport> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-bench-decide-'));
  const prism = await startPrism(dataDir);
  const notes: string[] = [];
  const figures: Record<string, number> = {};
  try {
    const key = fs.readFileSync(path.join(dataDir, 'owner.key'), 'utf8').trim();
    const frames = [await sceneFrame(0), await sceneFrame(40)];
    const single = await openSession(prism.url, key);
    await closedLoop(single, frames, 1000); // warm-up
    const fps = await closedLoop(single, frames, DURATION_MS);
    const paced = await openLoop(single, frames, OPEN_LOOP_FPS, DURATION_MS);
    // Closed before the ten open: the server frees the caller's place when the socket is gone.
    await closeSession(single);
    figures['one_session_frames_per_s'] = fps;
    figures['open_loop_server_p50_ms'] = paced.serverP50;
    notes.push(
      `decision stream, one session, 640x480 JPEG (${(frames[0] as Buffer).length} bytes), 5 questions: ` +
        `closed loop ${fps.toFixed(1)} frames/s; open loop at ${OPEN_LOOP_FPS}/s: ${paced.decided}/${paced.sent} decided, ` +
        `${paced.dropped} dropped, server latency p50 ${paced.serverP50.toFixed(2)} ms p95 ${paced.serverP95.toFixed(2)} ms, ` +
        `round trip p50 ${paced.roundTripP50.toFixed(2)} ms p95 ${paced.roundTripP95.toFixed(2)} ms`,
    );

    // The same closed loop on a key whose budget and organisation's budget are held, and on the owner key again.
    const budgeted = await openSession(prism.url, await budgetedKey(prism.url, key));
    await closedLoop(budgeted, frames, 1000); // warm-up
    const withBudget = await closedLoop(budgeted, frames, DURATION_MS);
    await closeSession(budgeted);
    const owner = await openSession(prism.url, key);
    const withoutBudget = await closedLoop(owner, frames, DURATION_MS);
    await closeSession(owner);
    figures['budgeted_key_frames_per_s'] = withBudget;
    figures['budgeted_over_owner_ratio'] = withBudget / withoutBudget;
    notes.push(
      `decision stream, one session on a key with a budget and an organisation budget: ${withBudget.toFixed(1)} ` +
        `frames/s against ${withoutBudget.toFixed(1)} on the owner key (no budget) just after ` +
        `(ratio ${(withBudget / withoutBudget).toFixed(2)})`,
    );

    const sessions = await Promise.all(Array.from({ length: TEN }, () => openSession(prism.url, key)));
    const rates = await Promise.all(sessions.map((s) => closedLoop(s, frames, DURATION_MS)));
    for (const s of sessions) s.ws.close();
    const mean = rates.reduce((a, b) => a + b, 0) / rates.length;
    const lowest = Math.min(...rates);
    figures['ten_sessions_total_frames_per_s'] = mean * rates.length;
    figures['ten_sessions_lowest_share_of_mean'] = lowest / mean;
    notes.push(
      `decision stream, ten sessions at once (closed loop): ${rates.map((r) => r.toFixed(1)).join(', ')} frames/s; ` +
        `total ${(mean * rates.length).toFixed(1)}, mean ${mean.toFixed(1)}, lowest ${lowest.toFixed(1)} ` +
        `(${((lowest / mean) * 100).toFixed(0)} % of the mean)`,
    );
  } finally {
    await prism.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return { notes, figures };
}
