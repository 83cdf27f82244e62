/**
 * The BullMQ job queue on a real Redis, two or three replicas' queues over one queue: every job runs once whichever
 * replica queued it, one record id is one job, a job whose replica was SIGKILLed mid-run is taken over (and its
 * handler told so) after the lease, and a shutdown hands unfinished jobs back at once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createBullmqJobQueue } from '../../src/backend/redis/job-queue';
import type { JobDelivery, JobQueue } from '../../src/jobs/job-queue';
import { createLogger } from '../../src/lib/logger';
import { deleteKeys, describeWithRedis, uniquePrefix } from '../helpers/redis';

const ROOT = path.resolve(__dirname, '..', '..');
const LEASE_MS = 1000;

describeWithRedis('BullMQ job queue', (redisUrl) => {
  const prefix = uniquePrefix();
  const queues: JobQueue[] = [];
  let run = 0;
  afterAll(() => deleteKeys(redisUrl, prefix));
  afterEach(async () => {
    await Promise.all(queues.splice(0).map((q) => q.close(100)));
  });

  const replica = (name: string, concurrency = 2): JobQueue => {
    const queue = createBullmqJobQueue({
      redisUrl,
      prefix,
      name,
      concurrency,
      leaseMs: LEASE_MS,
      logger: createLogger('silent'),
    });
    queues.push(queue);
    return queue;
  };
  const freshName = (): string => `q${(run += 1)}`;

  it('runs 20 jobs queued on one replica exactly once each, spread over three', async () => {
    const name = freshName();
    const runs: { replica: number; id: string }[] = [];
    const replicas = [replica(name), replica(name), replica(name)];
    replicas.forEach((queue, index) => {
      queue.handle('work', async (id) => {
        runs.push({ replica: index, id });
        await new Promise((resolve) => setTimeout(resolve, 20));
      });
      queue.start();
    });
    const ids = Array.from({ length: 20 }, (_, i) => `job-${i}`);
    for (const id of ids) replicas[0]!.enqueue({ kind: 'work', id });
    for (const id of ids.slice(0, 5)) replicas[0]!.enqueue({ kind: 'work', id });
    await replicas[0]!.idle();
    expect(runs.map((r) => r.id).sort()).toEqual([...ids].sort());
    expect(new Set(runs.map((r) => r.replica)).size).toBeGreaterThan(1);
  });

  it('queues one job per record id, across replicas', async () => {
    const name = freshName();
    const seen: string[] = [];
    const [a, b] = [replica(name), replica(name)];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    for (const queue of [a, b]) {
      queue.handle('work', async (id) => {
        seen.push(id);
        await gate;
      });
    }
    a.enqueue({ kind: 'work', id: 'same' });
    b.enqueue({ kind: 'work', id: 'same' });
    a.enqueue({ kind: 'work', id: 'same' });
    a.start();
    b.start();
    while (seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    b.enqueue({ kind: 'work', id: 'same' });
    release();
    await a.idle();
    expect(seen).toEqual(['same']);
  });

  it('takes over the job of a replica killed with SIGKILL once its lease runs out', async () => {
    const name = freshName();
    const child = spawnReplica(redisUrl, prefix, name);
    try {
      await child.line('ready');
      const survivor = replica(name);
      const deliveries: { id: string; delivery: JobDelivery }[] = [];
      survivor.handle('work', async (id, delivery) => {
        deliveries.push({ id, delivery });
      });
      survivor.enqueue({ kind: 'work', id: 'doomed' });
      await child.line('started doomed');
      survivor.start();
      child.process.kill('SIGKILL');
      await survivor.idle();
      expect(deliveries).toEqual([{ id: 'doomed', delivery: { redelivered: true } }]);
    } finally {
      child.process.kill('SIGKILL');
    }
  });

  it('hands back, at shutdown, the jobs whose handlers it cut short', async () => {
    const name = freshName();
    const leaving = replica(name, 1);
    const staying = replica(name, 1);
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    leaving.handle('work', async () => {
      started();
      await stopped;
    });
    const taken: JobDelivery[] = [];
    staying.handle('work', async (_id, delivery) => {
      taken.push(delivery);
    });
    leaving.start();
    leaving.enqueue({ kind: 'work', id: 'interrupted' });
    await running;
    staying.start();
    const stopping = leaving.stopTaking();
    stop();
    await stopping;
    await leaving.close(1000);
    await staying.idle();
    expect(taken).toEqual([{ redelivered: true }]);
  });
});

interface ChildReplica {
  process: ChildProcess;
  line(text: string): Promise<void>;
}

function spawnReplica(redisUrl: string, prefix: string, name: string): ChildReplica {
  const child = spawn(
    process.execPath,
    ['-r', './bin/register-ts.js', 'test/helpers/job-queue-child.ts', redisUrl, prefix, name, String(LEASE_MS)],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  const waiters: { text: string; resolve: () => void }[] = [];
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    for (const w of waiters.filter((w) => out.split('\n').includes(w.text))) w.resolve();
  });
  return {
    process: child,
    line: (text) =>
      new Promise<void>((resolve, reject) => {
        if (out.split('\n').includes(text)) return resolve();
        const timer = setTimeout(() => reject(new Error(`child never printed "${text}": ${out}`)), 20_000);
        waiters.push({
          text,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      }),
  };
}
