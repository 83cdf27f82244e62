/**
 * The per-request work budget (issue 39) through the real routes: shapes that the per-schema bounds let through —
 * one enum of many values, one long description referenced by many properties, a bundle of many schemas — sent at
 * N, 4N and 16N, anonymous and with a key. Each size is answered cleanly (never a 5xx or engine text), 4N costs at
 * most about linearly more than N (generous ratio, as in cost-bounds.test.ts), `/v1/health` keeps answering
 * within 1 s and the process grows by less than 256 MB; at 16N the budget stops the request with 413
 * `work_budget_exceeded` naming the limit. Runs on SQLite and, with PRISM_TEST_BACKEND=postgres+redis+s3, on the
 * shared backends.
 */
import { enumSchema, longDescriptionSchema, manySchemasZip } from '../helpers/budget-inputs';
import { renderReceiptImage } from '../helpers/media-fixtures';
import { call, startTestApp, uploadFile, type TestApp } from '../helpers/test-app';

interface Cost {
  status: number;
  body: string;
  ms: number;
  healthMs: number;
  rssGrowthBytes: number;
}

const MB = 1024 * 1024;

// Each curve sends up to a dozen requests (an OCR of the image each for prism-1): minutes on a busy 2-core machine.
jest.setTimeout(180_000);

describe('the per-request work budget', () => {
  let app: TestApp;
  const image = `data:image/png;base64,${renderReceiptImage().toString('base64')}`;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  async function measure(send: () => Promise<Response>): Promise<Cost> {
    let polling = true;
    let healthMs = 0;
    const poller = (async () => {
      while (polling) {
        const started = performance.now();
        await (await fetch(`${app.url}/v1/health`)).text();
        healthMs = Math.max(healthMs, performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    })();
    const rss = process.memoryUsage().rss;
    const started = performance.now();
    const res = await send();
    const body = await res.text();
    const ms = performance.now() - started;
    polling = false;
    await poller;
    return { status: res.status, body, ms, healthMs, rssGrowthBytes: process.memoryUsage().rss - rss };
  }

  /** N, 4N, 16N: each clean, 4N about linear in N, and the budget refusing 16N by `limit`. */
  async function curve(what: string, sizes: number[], send: (n: number) => Promise<Response>, limit: string) {
    await send(sizes[0] as number).then((r) => r.text()); // warm the route
    const costs: Cost[] = [];
    for (const n of sizes) {
      const cost = await measure(() => send(n));
      expect({ what, n, status: cost.status < 500 }).toEqual({ what, n, status: true });
      expect(cost.body).not.toMatch(/Maximum call stack|RangeError|at .*\.(ts|js):\d+/);
      expect({ what, n, healthMs: cost.healthMs < 1000 }).toEqual({ what, n, healthMs: true });
      expect({ what, n, rss: cost.rssGrowthBytes < 256 * MB }).toEqual({ what, n, rss: true });
      costs.push(cost);
    }
    const [small, quadruple, top] = costs as [Cost, Cost, Cost];
    expect({ what, linear: quadruple.ms < 8 * Math.max(small.ms, 50) }).toEqual({ what, linear: true });
    expect({ what, small: small.body.includes('work_budget_exceeded') }).toEqual({ what, small: false });
    expect({ what, status: top.status }).toEqual({ what, status: 413 });
    const error = (JSON.parse(top.body) as { detail?: { error?: Record<string, unknown> } }).detail?.error;
    expect(error).toMatchObject({ code: 'work_budget_exceeded', param: limit, limit });
    return costs;
  }

  const anonymousChat = (schema: Record<string, unknown>) =>
    call(`${app.url}/v1/compat/chat/completions`, {
      json: {
        model: 'prism-1',
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: image } }] }],
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema } },
      },
    });
  const keyedExecute = (schema: Record<string, unknown>) =>
    call(`${app.url}/v1/agent/execute`, {
      key: app.ownerKey,
      json: { inputs: {}, config: { prompt: 'Fill it.', json_schema: schema } },
    });
  const inlineSkillChat = (zip: Buffer) =>
    call(`${app.url}/v1/compat/chat/completions`, {
      json: {
        model: 'prism-orion-1',
        messages: [{ role: 'user', content: 'Use the skill.' }],
        skills: [{ type: 'inline', source: { type: 'base64', data: zip.toString('base64') } }],
      },
    });

  it('one long enum: anonymous prism-1 chat response_format', async () => {
    const costs = await curve('anonymous enum', [150, 600, 9600], (n) => anonymousChat(enumSchema(n)), 'enum_values');
    expect(costs[0]?.status).toBe(201);
    expect(costs[2]?.body).toMatch(/more than 2000 enum values \(the anonymous limit, PRISM_WORK_BUDGET_ANONYMOUS\)/);
  });

  it('one long enum: keyed /v1/agent/execute', async () => {
    await curve('keyed enum', [1500, 6000, 96_000], (n) => keyedExecute(enumSchema(n)), 'enum_values');
  });

  it('a long description referenced by many properties', async () => {
    const schema = (refs: number) => longDescriptionSchema(20_000, refs);
    await curve('anonymous long description', [10, 40, 640], (n) => anonymousChat(schema(n)), 'string_chars');
    await curve('keyed long description', [20, 80, 1280], (n) => keyedExecute(schema(n)), 'string_chars');
  });

  it('a skill bundle of many schemas: anonymous inline skill, and keyed /v1/skills/create', async () => {
    await curve('anonymous bundle', [2, 8, 128], (n) => inlineSkillChat(manySchemasZip(n, 50)), 'schemas');
    const create = async (n: number) => {
      const upload = await uploadFile(app.url, app.ownerKey, manySchemasZip(n, 200), { filename: 'skill.zip' });
      const fileId = ((await upload.json()) as { id: string }).id;
      return call(`${app.url}/v1/skills/create`, { key: app.ownerKey, json: { file_id: fileId } });
    };
    const costs = await curve('keyed bundle', [8, 32, 512], create, 'properties');
    expect(costs[1]?.status).toBe(201);
  });
});
