/**
 * The decision-stream caps are settings (PRISM_DECISION_CALLER_STREAMS, PRISM_DECISION_STREAMS; docs/decisions.md):
 * a deployment with ten cameras on one key raises the per-caller cap, and the server-wide cap still holds. The
 * defaults (6 per caller) are covered by memory-bounds.test.ts.
 */
import { connectStream, type StreamClient } from '../helpers/decision-client';
import { startTestApp, type TestApp } from '../helpers/test-app';

type Refusal = { status?: number; body?: string } | null;

describe('decision stream caps from the configuration', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ PRISM_DECISION_CALLER_STREAMS: '8', PRISM_DECISION_STREAMS: '10' });
  });
  afterAll(async () => {
    await app.stop();
  });

  const attempt = (key: string): Promise<Refusal | StreamClient> =>
    connectStream(app.url, key).then(
      (client) => client,
      (error: Refusal) => error,
    );

  it('takes as many streams per caller as configured, refuses the next with 429, and caps the server in all', async () => {
    const first = await app.createKey('caps-first-org');
    const second = await app.createKey('caps-second-org');
    const open: StreamClient[] = [];
    try {
      // Eight on one key: more than the default six.
      for (let i = 0; i < 8; i += 1) open.push(await connectStream(app.url, first));
      const ninth = (await attempt(first)) as Refusal;
      expect(ninth?.status).toBe(429);
      expect(ninth?.body).toMatch(/At most 8 decision streams per caller/);
      // Another caller gets the two places left of the server's ten, then a 429 naming the server.
      for (let i = 0; i < 2; i += 1) open.push(await connectStream(app.url, second));
      const eleventh = (await attempt(second)) as Refusal;
      expect(eleventh?.status).toBe(429);
      expect(eleventh?.body).toMatch(/as many decision streams open as it takes/);
    } finally {
      await Promise.all(open.map((c) => c.close()));
    }
  });
});
