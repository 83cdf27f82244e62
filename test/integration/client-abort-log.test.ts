/**
 * Issue 18, smaller item: a client that hangs up in the middle of its request body is not a server error. The
 * server logs it at debug ("client went away"), never at error level as "unhandled error", and keeps serving.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/config';
import { createLogger } from '../../src/lib/logger';
import { startServer, type RunningServer } from '../../src/http-server';

describe('client aborts', () => {
  let dataDir: string;
  let server: RunningServer;
  let ownerKey: string;
  const lines: { level: string; message: string }[] = [];

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-abort-'));
    const config = loadConfig({ PRISM_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', PRISM_LOG_LEVEL: 'debug' });
    const logger = createLogger(
      'debug',
      (line) => void lines.push(JSON.parse(line) as { level: string; message: string }),
    );
    server = await startServer(config, { announce: () => undefined, logger });
    ownerKey = fs.readFileSync(config.data.ownerKeyPath, 'utf8').trim();
  });
  afterAll(async () => {
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** Sends the head and part of a body, then hangs up; resolves once the socket is closed. */
  const hangUp = (head: string, partial: string): Promise<void> =>
    new Promise((resolve) => {
      const { port } = new URL(server.url);
      const socket = net.connect(Number(port), '127.0.0.1', () => {
        socket.write(head + partial, () => setTimeout(() => socket.destroy(), 100));
      });
      socket.on('close', () => resolve());
      socket.on('error', () => resolve());
    });

  it('logs a body cut off by the client at debug, not as an unhandled error', async () => {
    const json = '{"model":"prism-1","messages":[{"role":"user","content":"';
    await hangUp(
      `POST /v1/compat/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`,
      json,
    );
    await hangUp(
      `POST /v1/files HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ownerKey}\r\n` +
        'Content-Type: multipart/form-data; boundary=zzz\r\nContent-Length: 100000\r\n\r\n',
      '--zzz\r\nContent-Disposition: form-data; name="file"; filename="a.jpg"\r\n\r\nhello',
    );
    for (let i = 0; i < 100 && lines.filter((l) => l.message === 'client went away').length < 2; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(lines.filter((l) => l.message === 'client went away').length).toBeGreaterThanOrEqual(2);
    expect(lines.filter((l) => l.level === 'error')).toEqual([]);
    expect((await fetch(`${server.url}/v1/compat/health`)).status).toBe(200);
  });
});
