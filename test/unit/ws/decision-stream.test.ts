/**
 * The decision stream's connection logic against a fake socket and a scripted decisions service: exactly one
 * reply per frame, drops (not queues) while a frame is being decided or while the send buffer is over its bound,
 * and the idle timeout that waits for a frame in progress.
 */
import { EventEmitter } from 'node:events';
import type WebSocket from 'ws';
import { createLogger } from '../../../src/lib/logger';
import type { DecisionOutcome, DecisionsService } from '../../../src/gateway/decisions/decisions.service';
import { serverEventSchema, type ServerEvent } from '../../../src/ws/decision-protocol';
import { attachDecisionStream } from '../../../src/ws/decision-stream';

class FakeSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  bufferedAmount = 0;
  sent: ServerEvent[] = [];
  send(text: string): void {
    this.sent.push(serverEventSchema.parse(JSON.parse(text)));
  }
  close(): void {
    this.readyState = 3;
    this.emit('close', 1000, Buffer.alloc(0));
  }
  frame(bytes = Buffer.from([0xff, 0xd8, 0xff])): void {
    this.emit('message', bytes, true);
  }
  text(message: unknown): void {
    this.emit('message', Buffer.from(JSON.stringify(message)), false);
  }
}

const OUTCOME: DecisionOutcome = {
  answers: { a: true },
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, cost: 0.0001 },
};

/** A service whose decisions finish only when the test says so. */
function scriptedService() {
  const pending: (() => void)[] = [];
  const service: DecisionsService = {
    kinds: () => [],
    decideOnce: () => Promise.reject(new Error('not used')),
    open: async () => ({
      id: 'dsess_test',
      model: 'prism-decide-1',
      upstreamModel: null,
      routes: [{ id: 'a', route: 'local', kind: 'text_present' }],
      decide: () => new Promise<DecisionOutcome>((resolve) => pending.push(() => resolve(OUTCOME))),
      settleBudgets: () => Promise.resolve(),
    }),
  };
  return { service, finishNext: () => pending.shift()?.() };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));
const QUESTIONS = [{ id: 'a', question: 'Is there text?', type: 'boolean' }];

async function connected(options: { idleTimeoutMs?: number; maxBufferedBytes?: number } = {}) {
  const socket = new FakeSocket();
  const scripted = scriptedService();
  const connection = attachDecisionStream(socket as unknown as WebSocket, {
    service: scripted.service,
    caller: { principal: { kind: 'anonymous', clientIp: '127.0.0.1' }, fingerprint: null },
    options: { maxFrameBytes: 1024, idleTimeoutMs: options.idleTimeoutMs ?? 60_000, maxBufferedBytes: 100 },
    logger: createLogger('silent'),
  });
  socket.text({ type: 'session.create', questions: QUESTIONS });
  await flush();
  expect(socket.sent.map((e) => e.type)).toEqual(['session.created']);
  return { socket, connection, ...scripted };
}

describe('decision stream connection', () => {
  it('drops frames that arrive while one is being decided, and holds at most one', async () => {
    const { socket, connection, finishNext } = await connected();
    socket.frame();
    socket.frame();
    socket.frame();
    expect(connection.framesHeld).toBe(1);
    finishNext();
    await flush();
    socket.frame();
    finishNext();
    await flush();
    const replies = socket.sent.slice(1).map((e) => [e.type, 'seq' in e ? e.seq : null]);
    expect(replies).toEqual([
      ['frame.dropped', 2],
      ['frame.dropped', 3],
      ['decision', 1],
      ['decision', 4],
    ]);
    expect(connection.framesHeld).toBe(0);
  });

  it('drops frames while the send buffer is over its bound, naming the reason', async () => {
    const { socket, finishNext } = await connected();
    socket.bufferedAmount = 101;
    socket.frame();
    socket.bufferedAmount = 0;
    socket.frame();
    finishNext();
    await flush();
    expect(socket.sent.slice(1)).toEqual([
      { type: 'frame.dropped', seq: 1, reason: 'send_buffer_full' },
      expect.objectContaining({ type: 'decision', seq: 2 }),
    ]);
  });

  it('refuses oversized frames with an error naming the seq and goes on', async () => {
    const { socket, finishNext } = await connected();
    socket.frame(Buffer.alloc(2048));
    socket.frame();
    finishNext();
    await flush();
    expect(socket.sent.slice(1).map((e) => [e.type, e.type === 'error' ? e.error.code : null])).toEqual([
      ['error', 'payload_too_large'],
      ['decision', null],
    ]);
  });

  it('closes an idle connection, but not while a frame is being decided', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      const { socket, finishNext } = await connected({ idleTimeoutMs: 1000 });
      socket.frame();
      jest.advanceTimersByTime(2500);
      expect(socket.sent.some((e) => e.type === 'session.closed')).toBe(false);
      finishNext();
      await flush();
      jest.advanceTimersByTime(1000);
      const closed = socket.sent.at(-1);
      expect(closed).toEqual({
        type: 'session.closed',
        reason: 'idle_timeout',
        frames: { received: 1, decided: 1, dropped: 0, failed: 0 },
      });
      expect(socket.readyState).toBe(3);
    } finally {
      jest.useRealTimers();
    }
  });
});
