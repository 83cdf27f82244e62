/**
 * Backpressure of the decision stream against a real server process: a sender pushing 200 large frames as fast
 * as the socket takes them gets exactly one reply per frame — a decision or `frame.dropped` naming its seq — and
 * the server's resident memory stays far below what was sent (frames are dropped, not queued).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startChildServer, type ChildServer } from '../helpers/child-server';
import { connectStream } from '../helpers/decision-client';
import { noiseFrame } from '../helpers/decision-frames';

const FRAMES = 200;

/** Resident and peak resident memory of a process, in bytes (Linux /proc). */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string): number =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

describe('decision stream under a flood', () => {
  let dir: string;
  let server: ChildServer;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-flood-'));
    server = await startChildServer(dir);
  });
  afterAll(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('decides or names as dropped every one of 200 large frames, holding memory bounded', async () => {
    const pid = server.child.pid as number;
    const frames = await Promise.all([1, 2, 3, 4].map((seed) => noiseFrame(1920, 1080, seed)));
    const frameBytes = frames.reduce((sum, f) => sum + f.length, 0) / frames.length;
    const client = await connectStream(server.url, fs.readFileSync(path.join(dir, 'owner.key'), 'utf8').trim());
    client.send({
      type: 'session.create',
      questions: [
        { id: 'text', question: 'Is there text?', type: 'boolean' },
        { id: 'level', question: 'How bright is it?', type: 'number' },
        { id: 'moved', question: 'Did anything change?', type: 'boolean' },
      ],
    });
    await client.next('session.created');
    // Warm up (first decode, first billing), then measure from a settled baseline with the peak reset.
    await client.sendFrame(frames[0] as Buffer);
    await client.next('decision', (d) => d.seq === 1);
    try {
      fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    } catch {
      // Without the reset, the peak since start is compared: a stricter test.
    }
    const baseline = memoryOf(pid);

    for (let i = 0; i < FRAMES; i += 1) await client.sendFrame(frames[i % frames.length] as Buffer);
    const last = FRAMES + 1;
    await Promise.race([
      client.next('decision', (d) => d.seq === last),
      client.next('frame.dropped', (d) => d.seq === last),
    ]);
    // Replies are sent in order of decision; wait until every frame has one.
    while (client.events.filter((e) => 'seq' in e && e.seq !== undefined).length < last) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const after = memoryOf(pid);

    const replies = new Map<number, string>();
    for (const event of client.events) {
      if (event.type !== 'decision' && event.type !== 'frame.dropped' && event.type !== 'error') continue;
      if (event.seq === undefined) continue;
      expect(replies.has(event.seq)).toBe(false);
      replies.set(event.seq, event.type);
    }
    expect([...replies.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: last }, (_, i) => i + 1));
    const counts = { decision: 0, 'frame.dropped': 0, error: 0 };
    for (const type of replies.values()) counts[type as keyof typeof counts] += 1;
    expect(counts.error).toBe(0);
    expect(counts.decision).toBeGreaterThan(1);
    expect(counts['frame.dropped']).toBeGreaterThan(0);
    const dropped = client.events.filter((e) => e.type === 'frame.dropped');
    expect(dropped.every((e) => e.reason === 'engine_busy' || e.reason === 'send_buffer_full')).toBe(true);

    const sent = frameBytes * FRAMES;
    const growth = after.peak - baseline.rss;
    process.stdout.write(
      `flood: ${counts.decision} decided, ${counts['frame.dropped']} dropped; sent ${(sent / 2 ** 20).toFixed(0)} MiB, ` +
        `server peak RSS growth ${(growth / 2 ** 20).toFixed(0)} MiB\n`,
    );
    // Queueing would hold most of what was sent; dropping holds about one frame plus socket buffers.
    expect(growth).toBeLessThan(sent / 4);
    await client.close();
  });
});
