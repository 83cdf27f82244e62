/**
 * Fuzz and cost: every parser of untrusted structure gets generated hostile inputs of growing size —
 * YAML front matter keys and nesting, prism.yaml graph states, recursive, exploding and wide JSON schemas on each
 * route that takes one — through the real routes, and
 *
 * - answers each with a 2xx or a clean 4xx (never a 5xx, never engine text such as "Maximum call stack"),
 * - costs at most about linearly more at four times the size (t(4N) < 8 · max(t(N), 50 ms): generous, so a loaded
 *   2-core machine does not make it flaky; the quadratic and exponential cases were 16x to hangs),
 * - keeps `/v1/health` answering within 1 s while the largest input is being processed, and
 * - grows the process by less than 256 MB.
 *
 * Not a benchmark: scripts/cost-curves.ts prints the curves (input size → time, memory) for docs/security.md.
 */
import { craftZip, skillMd } from '../helpers/crafted-zip';
import {
  doublingSchema,
  frontMatterZip,
  selfReferencingSchema,
  stateGraphZip,
  wideSchema,
} from '../helpers/hostile-inputs';
import { renderReceiptImage } from '../helpers/media-fixtures';
import { call, startTestApp, uploadFile, type TestApp } from '../helpers/test-app';

interface Cost {
  status: number;
  body: string;
  ms: number;
  /** The slowest /v1/health answer while the input was processed. */
  healthMs: number;
  rssGrowthBytes: number;
}

const MB = 1024 * 1024;

describe('fuzz and cost of the parsers of untrusted structure', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  /** Sends one input while polling /v1/health; the poller's slowest answer is how long the server was blocked. */
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

  function expectClean(cost: Cost, what: string): void {
    expect({ what, status: cost.status < 500 }).toEqual({ what, status: true });
    expect(cost.body).not.toMatch(/Maximum call stack|RangeError|ZodError|at .*\.(ts|js):\d+/);
    expect({ what, healthMs: cost.healthMs < 1000 }).toEqual({ what, healthMs: true });
    expect({ what, rss: cost.rssGrowthBytes < 256 * MB }).toEqual({ what, rss: true });
  }

  /** Sends sizes N, 4N (and any larger ones): each clean, and 4N at most about linearly dearer than N. */
  async function curve(what: string, sizes: number[], send: (n: number) => Promise<Response>): Promise<Cost[]> {
    await send(sizes[0] as number).then((r) => r.text()); // warm the route
    const costs: Cost[] = [];
    for (const n of sizes) {
      const cost = await measure(() => send(n));
      expectClean(cost, `${what} at ${n}`);
      costs.push(cost);
    }
    const [small, quadruple] = costs as [Cost, Cost];
    expect({ what, linear: quadruple.ms < 8 * Math.max(small.ms, 50) }).toEqual({ what, linear: true });
    return costs;
  }

  const inlineSkillChat = (zip: Buffer) =>
    call(`${app.url}/v1/compat/chat/completions`, {
      json: {
        model: 'prism-orion-1',
        messages: [{ role: 'user', content: 'Use the skill.' }],
        skills: [{ type: 'inline', source: { type: 'base64', data: zip.toString('base64') } }],
      },
    });

  it('front matter keys on an anonymous agent chat with an inline skill', async () => {
    const costs = await curve('front matter keys', [2000, 8000, 60_000], (n) => inlineSkillChat(frontMatterZip(n)));
    expect(costs[2]?.status).toBe(400);
    expect(costs[2]?.body).toMatch(/front matter is not usable YAML \(it is \d+ bytes, over the limit of 32768\)/);
  });

  it('front matter nested as deep as its size allows', async () => {
    const nested = (n: number) =>
      craftZip([{ name: 'SKILL.md', data: `---\nname: deep\ndescription: Deep.\nx: ${'['.repeat(n)}\n---\nx\n` }]);
    const compact = (n: number) =>
      craftZip([{ name: 'SKILL.md', data: `---\nname: deep\ndescription: Deep.\nx:\n  ${'- '.repeat(n)}x\n---\nx\n` }]);
    for (const cost of await curve('flow nesting', [4000, 16_000], (n) => inlineSkillChat(nested(n)))) {
      expect(cost.body).toMatch(/nested more than 32 levels/);
    }
    for (const cost of await curve('compact nesting', [4000, 16_000], (n) => inlineSkillChat(compact(n)))) {
      expect(cost.body).toMatch(/compact collections/);
    }
  });

  it('prism.yaml graph states through /v1/skills/create', async () => {
    const create = async (states: number) => {
      const upload = await uploadFile(app.url, app.ownerKey, stateGraphZip(states), { filename: 'skill.zip' });
      const fileId = ((await upload.json()) as { id: string }).id;
      return call(`${app.url}/v1/skills/create`, { key: app.ownerKey, json: { file_id: fileId } });
    };
    const costs = await curve('graph states', [1000, 4000, 20_000], create);
    for (const cost of costs) {
      expect(cost.body).toMatch(/more than 200 states|more than 2000 lines|over the limit of 131072/);
    }
    const fine = await create(12);
    expect(fine.status).toBe(201);
  });

  it('recursive, exploding and wide schemas are refused the same way on /v1/agent/execute', async () => {
    const execute = (schema: Record<string, unknown>) =>
      call(`${app.url}/v1/agent/execute`, {
        key: app.ownerKey,
        json: { inputs: {}, config: { prompt: 'Fill it.', json_schema: schema } },
      });
    for (const cost of await curve('self references', [4, 16, 64], (w) => execute(selfReferencingSchema(w)))) {
      expect(cost.status).toBe(400);
      expect(cost.body).toMatch(/"code":"schema_invalid"/);
      expect(cost.body).toMatch(/recursive schemas are not supported/);
    }
    for (const cost of await curve('doubling $defs', [16, 64], (l) => execute(doublingSchema(l)))) {
      expect(cost.status).toBe(400);
      expect(cost.body).toMatch(/expand to more than 4000 schema objects|nested more than 64 levels/);
    }
    const wide = await curve('wide schema', [500, 2000, 8000], (w) => execute(wideSchema(w)));
    expect(wide[2]?.body).toMatch(/more than 2000 schema objects/);
  });

  it('the same recursive schema is refused on every other route that takes one', async () => {
    const schema = selfReferencingSchema(3);
    const image = `data:image/png;base64,${renderReceiptImage().toString('base64')}`;
    const routes: Array<[string, () => Promise<Response>, RegExp]> = [
      [
        'generate',
        () =>
          call(`${app.url}/v1/image/generate`, {
            key: app.ownerKey,
            json: { images: [image], config: { json_schema: schema } },
          }),
        /config\.json_schema is not a usable JSON schema: it is recursive/,
      ],
      [
        'anonymous chat with an image and response_format',
        () =>
          call(`${app.url}/v1/compat/chat/completions`, {
            json: {
              model: 'prism-1',
              messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: image } }] }],
              response_format: { type: 'json_schema', json_schema: { name: 'x', schema } },
            },
          }),
        /response_format is not a usable JSON schema: it is recursive/,
      ],
      [
        'agent chat response_format',
        () =>
          call(`${app.url}/v1/compat/chat/completions`, {
            json: {
              model: 'prism-orion-1',
              messages: [{ role: 'user', content: 'hi' }],
              response_format: { type: 'json_schema', json_schema: { name: 'x', schema } },
            },
          }),
        /response_format is not a usable JSON schema: it is recursive/,
      ],
      [
        'skill from a prompt',
        () =>
          call(`${app.url}/v1/skills/create`, {
            key: app.ownerKey,
            json: { prompt: 'Read invoices.', json_schema: schema },
          }),
        /json_schema is not a usable JSON schema: it is recursive/,
      ],
      [
        'skill from a zip',
        async () => {
          const zip = craftZip([
            { name: 'SKILL.md', data: skillMd('recursive') },
            { name: 'schema.json', data: JSON.stringify(schema) },
          ]);
          const upload = await uploadFile(app.url, app.ownerKey, zip, { filename: 'skill.zip' });
          const fileId = ((await upload.json()) as { id: string }).id;
          return call(`${app.url}/v1/skills/create`, { key: app.ownerKey, json: { file_id: fileId } });
        },
        /schema\.json' \(invalid_schema\): not a usable JSON Schema: it is recursive/,
      ],
      [
        'agent creation',
        () =>
          call(`${app.url}/v1/agent/create`, {
            key: app.ownerKey,
            json: { name: 'recursive-agent', config: { prompt: 'x', json_schema: schema } },
          }),
        /config\.json_schema is not a usable JSON schema: it is recursive/,
      ],
    ];
    for (const [what, send, message] of routes) {
      const cost = await measure(send);
      expectClean(cost, what);
      expect({ what, status: cost.status }).toEqual({ what, status: 400 });
      expect(cost.body).toMatch(message);
    }
  });
});
