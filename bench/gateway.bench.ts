/**
 * Gateway benchmarks: the latency and throughput the gateway adds over calling the (scripted) upstream directly,
 * with 50 concurrent clients, non-streaming and streaming, against two upstreams: one that answers at once (the
 * hop's CPU cost is all there is to measure) and one that takes UPSTREAM_SERVICE_MS before its first chunk, as a
 * fast real model would. Also the CPU each call costs the gateway process (from /proc, so it does not depend on
 * how the processes share the cores) next to two bare keep-alive proxies (on node:http and on undici, the gateway's
 * client), and the per-request cost of rate-limit
 * and billing bookkeeping with 10,000 distinct callers. The gateway runs with `--trace-gc-nvp`, so each case also
 * reports what its calls promoted to V8's old generation and how many full collections that caused: promoted
 * garbage is what makes young pauses long and full collections (the p99's worst stalls) frequent, and one stray
 * getter, AbortSignal or key-adding spread per call is enough to bring it back. Latencies are those of the steady
 * state: the measured calls follow the warm-up without the clients stopping. The direct calls and the gateway are
 * measured in interleaved rounds, so the host's drifting load falls on both alike and the "added" figures compare
 * like with like; then the two proxies, interleaved with each other. (Interleaving all four left the gateway idle for
 * seconds between its rounds, and after each idle spell it promoted three times as much: 172–184 KB per 1,000 calls
 * against 53–67 KB, a resume-from-idle effect, not the steady state.) A second run from idle reports what
 * the 50 clients' synchronised first calls add (each of the first ~50 calls waits for the ones ahead of it in the
 * gateway). The upstream, the gateway and the bare proxy each run in their own process (as in a deployment); this
 * process only generates load. On a 2-core machine the processes share the cores, which the proxied runs pay for
 * and the direct run does not.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { once } from 'node:events';
import readline from 'node:readline';
import { loadConfig } from '../src/config/config';
import { priceCall } from '../src/metering/billing';
import { createMemoryRateLimitStore } from '../src/backend/local/metering-stores';
import { createRateLimiter } from '../src/metering/rate-limiter';
import { startServer } from '../src/http-server';

/** The slower upstream's time to first chunk; real hosted models take 100 ms and more. */
const UPSTREAM_SERVICE_MS = 20;
const CONCURRENCY = 50;
const loadAgent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
/**
 * Calls per measured run. A p99 is set by rare events (a major GC every few seconds, the kernel's scheduling of
 * four processes on two cores): with 4,000 calls (under two seconds at 20 ms) a run held one such event or none,
 * and the added p99 of one build swung 5–20 ms between runs. 10,000 calls hold several.
 */
const REQUESTS = 10_000;
/** Calls before the measured ones (JIT, connection pools, the clients' synchronised start), not measured. */
const WARMUP_REQUESTS = 2_000;
/** The measured calls of each target are split into this many rounds, interleaved with the other targets'. */
const ROUNDS = 5;
/** Calls before each later round's measured ones: enough for the clients' synchronised first calls to spread out. */
const ROUND_WARMUP_REQUESTS = 300;
/** Linux reports process CPU time in ticks of 1/100 s. */
const CLOCK_TICKS_PER_S = 100;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

interface LoadResult {
  p50: number;
  p99: number;
  rps: number;
  /** CPU milliseconds the watched process spent per request; NaN where /proc is not available. */
  cpuMsPerCall: number;
}

/** What one run of `load` saw, kept raw so the rounds of an interleaved measurement can be pooled. */
interface LoadSample {
  latencies: number[];
  seconds: number;
  cpuMs: number;
}

/** User + system CPU time of a process in ms, from /proc/<pid>/stat (NaN elsewhere). */
function processCpuMs(pid: number | undefined): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
  } catch {
    return Number.NaN;
  }
}

/** What the gateway's garbage collector did while a tally was open, from its `--trace-gc-nvp` lines. */
interface GcTally {
  promotedBytes: number;
  youngCollections: number;
  fullCollections: number;
}

/** Reads `--trace-gc-nvp` lines (`… gc=s … promoted=123 …`) into the tally while one is open. */
function watchGc(output: NodeJS.ReadableStream): { open(): void; close(): GcTally } {
  const empty = (): GcTally => ({ promotedBytes: 0, youngCollections: 0, fullCollections: 0 });
  let tally: GcTally | null = null;
  readline.createInterface({ input: output }).on('line', (line) => {
    const kind = / gc=(\w+) /.exec(line)?.[1];
    if (!tally || kind === undefined) return;
    if (kind === 's') {
      tally.youngCollections += 1;
      tally.promotedBytes += Number(/ promoted=(\d+) /.exec(line)?.[1] ?? 0);
    } else if (kind === 'mc' || kind === 'ms') {
      tally.fullCollections += 1;
    }
  });
  return {
    open() {
      tally = empty();
    },
    close() {
      const closed = tally ?? empty();
      tally = null;
      return closed;
    },
  };
}

interface LoadOptions {
  /** Calls made before the measured ones, by the same clients without a pause (JIT, pools, and a staggered start). */
  warmup: number;
  measured?: number;
  /** The process whose CPU time per measured call is reported. */
  watchedPid?: number | undefined;
  /** Called as the first measured call is made. */
  onMeasureStart?: () => void;
}

/**
 * CONCURRENCY clients, each making its next call as soon as its last one ends. The measured calls follow the
 * warm-up without the clients stopping, so they see the load in its steady state: clients that start together
 * send their first calls in one burst, which the warm-up absorbs. `warmup: 0` measures from idle, burst included.
 */
async function load(send: () => Promise<void>, options: LoadOptions): Promise<LoadSample> {
  const { warmup, measured = REQUESTS, watchedPid } = options;
  const latencies: number[] = [];
  let issued = 0;
  let started = 0;
  let cpuBefore = Number.NaN;
  const worker = async (): Promise<void> => {
    while (issued < warmup + measured) {
      const index = issued;
      issued += 1;
      if (index === warmup) {
        started = performance.now();
        cpuBefore = processCpuMs(watchedPid);
        options.onMeasureStart?.();
      }
      const t0 = performance.now();
      await send();
      if (index >= warmup) latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return {
    latencies,
    seconds: (performance.now() - started) / 1000,
    cpuMs: processCpuMs(watchedPid) - cpuBefore,
  };
}

/** Percentiles, throughput and CPU per call over the pooled calls of one or more samples. */
function summarise(samples: LoadSample[]): LoadResult {
  const latencies = samples.flatMap((s) => s.latencies).sort((a, b) => a - b);
  const seconds = samples.reduce((sum, s) => sum + s.seconds, 0);
  const cpuMs = samples.reduce((sum, s) => sum + s.cpuMs, 0);
  return {
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    rps: latencies.length / seconds,
    cpuMsPerCall: cpuMs / latencies.length,
  };
}

interface Target {
  send: () => Promise<void>;
  watchedPid?: number | undefined;
  /** Called around each of the target's measured runs. */
  onMeasureStart?: () => void;
  onMeasureEnd?: () => Promise<void>;
}

/**
 * Measures the targets in ROUNDS rounds, each running every target in turn for REQUESTS / ROUNDS calls, and pools
 * each target's calls. The host's load drifts within minutes (neighbours on a shared machine moved every figure by
 * ~2× within an hour), and measuring the targets one after the other for several seconds each let that drift fall
 * on one and not another; interleaved, it falls on all of them alike. Each round's run starts with a short warm-up
 * (the first round's is longer) so the 50 clients' synchronised first calls after a switch are not measured.
 */
async function interleaved(targets: Target[]): Promise<LoadResult[]> {
  const samples: LoadSample[][] = targets.map(() => []);
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [i, target] of targets.entries()) {
      const sample = await load(target.send, {
        warmup: round === 0 ? WARMUP_REQUESTS : ROUND_WARMUP_REQUESTS,
        measured: REQUESTS / ROUNDS,
        watchedPid: target.watchedPid,
        ...(target.onMeasureStart ? { onMeasureStart: target.onMeasureStart } : {}),
      });
      await target.onMeasureEnd?.();
      samples[i]?.push(sample);
    }
  }
  return samples.map(summarise);
}

/** Starts a child process and resolves with the first line it prints. */
async function startChild(
  args: string[],
  env: NodeJS.ProcessEnv,
  waitFor: RegExp,
): Promise<{ child: ChildProcess; line: string }> {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines = readline.createInterface({
    input: waitFor.source.includes('listening') ? child.stderr : child.stdout,
  });
  for await (const line of lines) {
    if (waitFor.test(line)) {
      // Keep both pipes flowing (output is dropped) so a chatty child never blocks on a full pipe.
      child.stdout?.resume();
      child.stderr?.resume();
      return { child, line };
    }
  }
  throw new Error(`child ${args.join(' ')} exited before it was ready`);
}

export async function gatewayBenchmarks(): Promise<string[]> {
  const upstreamChild = await startChild(
    ['-r', './bin/register-ts.js', 'bench/upstream-child.ts', String(UPSTREAM_SERVICE_MS)],
    process.env,
    /^http/,
  );
  const upstream = { baseUrl: upstreamChild.line.trim() };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-bench-gw-'));
  const modelsFile = path.join(dir, 'models.yaml');
  fs.writeFileSync(
    modelsFile,
    `upstreams:\n  - { name: lab, base_url: "${upstream.baseUrl}", provider: bench }\nmodels:\n` +
      ['bench', 'bench-slow']
        .map(
          (id) =>
            `  - id: ${id}\n    engine: { kind: upstream, upstream: lab, model: ${id.replace('bench', 'bench-upstream')} }\n` +
            '    supported_parameters: [stream, stream_options, max_tokens]\n    pricing: { prompt: 1, completion: 1 }\n',
        )
        .join(''),
  );
  const gatewayEnv = {
    PRISM_DATA_DIR: path.join(dir, 'data'),
    PORT: '0',
    PRISM_LOG_LEVEL: 'warn',
    PRISM_MODELS_FILE: modelsFile,
    PRISM_RATE_LIMIT_PER_MINUTE: '100000000',
    PRISM_RATE_LIMIT_PER_HOUR: '100000000',
    PRISM_OWNER_CREDITS_USD: '100000',
  };
  // PRISM_BENCH_PROFILE_DIR=<dir> writes a CPU profile of the gateway process there (for finding where time goes).
  const profileDir = process.env.PRISM_BENCH_PROFILE_DIR;
  const profileArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  // PRISM_BENCH_GATEWAY_NODE_FLAGS="--flag …" adds node/V8 flags to the gateway process (for trying GC settings).
  const extraFlags = (process.env.PRISM_BENCH_GATEWAY_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const gatewayChild = await startChild(
    [...profileArgs, ...extraFlags, '--trace-gc-nvp', '-r', './bin/register-ts.js', 'server.ts'],
    { ...process.env, ...gatewayEnv },
    /listening on/,
  );
  const gatewayUrl = /listening on (\S+)/.exec(gatewayChild.line)?.[1] ?? '';
  const gatewayGc = watchGc(gatewayChild.child.stdout as NodeJS.ReadableStream);
  // Every child loads TypeScript as `npm start` does (tsx alone made a call ~30-40% dearer), so they compare fairly.
  const proxyChild = await startChild(
    ['-r', './bin/register-ts.js', 'bench/bare-proxy-child.ts', upstream.baseUrl, 'http'],
    process.env,
    /^http/,
  );
  const proxyUrl = proxyChild.line.trim();
  const undiciProxyChild = await startChild(
    ['-r', './bin/register-ts.js', 'bench/bare-proxy-child.ts', upstream.baseUrl, 'undici'],
    process.env,
    /^http/,
  );
  const undiciProxyUrl = undiciProxyChild.line.trim();
  const config = loadConfig({ ...gatewayEnv, PRISM_DATA_DIR: path.join(dir, 'bookkeeping') });
  const running = await startServer(config, { announce: () => undefined });
  // PRISM_BENCH_PIN=1 puts the measured processes (gateway, proxies; one runs at a time) on core 0 and the upstream
  // and this load generator on core 1, with `taskset` (Linux): their CPU per call then stops depending on how the
  // scheduler spreads four busy processes over two cores (the host's neighbours still move it).
  if (process.env.PRISM_BENCH_PIN === '1') {
    const pin = (pid: number | undefined, core: number): void => {
      execFileSync('taskset', ['-a', '-p', '-c', String(core), String(pid)], { stdio: 'ignore' });
    };
    for (const child of [gatewayChild, proxyChild, undiciProxyChild]) pin(child.child.pid, 0);
    pin(upstreamChild.child.pid, 1);
    pin(process.pid, 1);
  }
  const key = fs.readFileSync(path.join(dir, 'data', 'owner.key'), 'utf8').trim();
  const lines: string[] = [];
  try {
    const scenarios = [
      { label: 'instant upstream', gatewayModel: 'bench', upstreamModel: 'bench-upstream' },
      {
        label: `upstream answering in ${UPSTREAM_SERVICE_MS} ms`,
        gatewayModel: 'bench-slow',
        upstreamModel: 'bench-upstream-slow',
      },
    ];
    for (const scenario of scenarios) {
      for (const stream of [false, true]) {
        // The load generator uses node:http with keep-alive (not fetch) so it takes as little of the shared CPU as
        // it can.
        const post = (url: string, model: string) => {
          const payload = JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'hello' }] });
          const target = new URL(url);
          return () =>
            new Promise<void>((resolve, reject) => {
              const req = http.request(
                target,
                {
                  method: 'POST',
                  agent: loadAgent,
                  headers: {
                    authorization: `Bearer ${key}`,
                    'content-type': 'application/json',
                    'content-length': Buffer.byteLength(payload),
                  },
                },
                (res) => {
                  res.resume();
                  res.on('end', () =>
                    (res.statusCode ?? 500) >= 300 ? reject(new Error(`HTTP ${res.statusCode}`)) : resolve(),
                  );
                },
              );
              req.on('error', reject);
              req.end(payload);
            });
        };
        const direct = post(`${upstream.baseUrl}/chat/completions`, scenario.upstreamModel);
        const gateway = post(`${gatewayUrl}/v1/compat/chat/completions`, scenario.gatewayModel);
        const bare = post(`${proxyUrl}/chat/completions`, scenario.gatewayModel);
        const bareUndici = post(`${undiciProxyUrl}/chat/completions`, scenario.gatewayModel);
        const gc: GcTally = { promotedBytes: 0, youngCollections: 0, fullCollections: 0 };
        const [d, g] = await interleaved([
          { send: direct },
          {
            send: gateway,
            watchedPid: gatewayChild.child.pid,
            onMeasureStart: () => gatewayGc.open(),
            async onMeasureEnd() {
              // The GC lines of the run's last moments are still in the pipe; let them arrive before closing.
              await new Promise((resolve) => setTimeout(resolve, 200));
              const closed = gatewayGc.close();
              gc.promotedBytes += closed.promotedBytes;
              gc.youngCollections += closed.youngCollections;
              gc.fullCollections += closed.fullCollections;
            },
          },
        ]);
        const [b, u] = await interleaved([
          { send: bare, watchedPid: proxyChild.child.pid },
          { send: bareUndici, watchedPid: undiciProxyChild.child.pid },
        ]);
        if (!d || !g || !b || !u) throw new Error('interleaved() returns one result per target');
        const dIdle = summarise([await load(direct, { warmup: 0 })]);
        const gIdle = summarise([await load(gateway, { warmup: 0 })]);
        lines.push(
          `gateway ${stream ? 'streaming' : 'non-streaming'}, ${scenario.label}, ${CONCURRENCY} clients, ` +
            `${REQUESTS} requests: added p50 ${(g.p50 - d.p50).toFixed(2)} ms (direct ${d.p50.toFixed(2)}, ` +
            `gateway ${g.p50.toFixed(2)}), added p99 ${(g.p99 - d.p99).toFixed(2)} ms (direct ${d.p99.toFixed(2)}, ` +
            `gateway ${g.p99.toFixed(2)}), throughput ${(g.rps / d.rps).toFixed(2)}x of direct ` +
            `(${g.rps.toFixed(0)} vs ${d.rps.toFixed(0)} req/s); gateway CPU ${(g.cpuMsPerCall * 1000).toFixed(0)} µs ` +
            `per call (${(g.cpuMsPerCall / b.cpuMsPerCall).toFixed(2)}x a bare node:http proxy's, ` +
            `+${((g.cpuMsPerCall - b.cpuMsPerCall) * 1000).toFixed(0)} µs; ` +
            `${(g.cpuMsPerCall / u.cpuMsPerCall).toFixed(2)}x a bare undici proxy's, ` +
            `+${((g.cpuMsPerCall - u.cpuMsPerCall) * 1000).toFixed(0)} µs); ` +
            `bare proxies: node:http ${(b.rps / d.rps).toFixed(2)}x of direct (${b.rps.toFixed(0)} req/s, ` +
            `added p50 ${(b.p50 - d.p50).toFixed(2)} ms, added p99 ${(b.p99 - d.p99).toFixed(2)} ms, ` +
            `CPU ${(b.cpuMsPerCall * 1000).toFixed(0)} µs per call), undici ${(u.rps / d.rps).toFixed(2)}x of direct ` +
            `(added p50 ${(u.p50 - d.p50).toFixed(2)} ms, added p99 ${(u.p99 - d.p99).toFixed(2)} ms, ` +
            `CPU ${(u.cpuMsPerCall * 1000).toFixed(0)} µs per call); gateway GC: ` +
            `${(((gc.promotedBytes / REQUESTS) * 1000) / 1024).toFixed(0)} KB promoted per 1,000 calls, ` +
            `${gc.youngCollections} young and ${gc.fullCollections} full collections; from idle ` +
            `(the ${CONCURRENCY} clients starting together): added p50 ${(gIdle.p50 - dIdle.p50).toFixed(2)} ms, ` +
            `added p99 ${(gIdle.p99 - dIdle.p99).toFixed(2)} ms`,
        );
      }
    }

    const limiter = createRateLimiter(createMemoryRateLimitStore());
    const callers = Array.from({ length: 10_000 }, (_, i) => `user:${i}`);
    for (const c of callers) await limiter.check(c);
    const rounds = 200_000;
    let t0 = performance.now();
    for (let i = 0; i < rounds; i += 1) await limiter.check(callers[i % callers.length] as string);
    const limiterUs = ((performance.now() - t0) * 1000) / rounds;
    const orgId = (await running.container.services.accounts.ownerPrincipal())?.orgId ?? '';
    const wallets = running.container.stores.wallets;
    const debits = 20_000;
    t0 = performance.now();
    for (let i = 0; i < debits; i += 1) {
      const cost = priceCall({ prompt: 1, completion: 1 }, { promptTokens: 12, completionTokens: 4 });
      await wallets.credit(orgId, -cost.costMicros, 'bench');
    }
    const billingUs = ((performance.now() - t0) * 1000) / debits;
    lines.push(
      `bookkeeping at 10,000 callers: rate-limit check ${limiterUs.toFixed(1)} µs, price + wallet debit (SQLite) ` +
        `${billingUs.toFixed(1)} µs, together ${(limiterUs + billingUs).toFixed(1)} µs per request`,
    );
  } finally {
    await running.close();
    for (const child of [proxyChild.child, undiciProxyChild.child, gatewayChild.child, upstreamChild.child]) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return lines;
}
