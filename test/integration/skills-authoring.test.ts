/**
 * Prompt-created skills with an upstream chat model in the models file (the scripted OpenAI-compatible server on
 * loopback): the model drafts SKILL.md and schema.json, a caller's json_schema wins over the model's, and an
 * unusable answer falls back to the deterministic template, saying so in the description.
 */
import { DEFAULT_BUNDLE_LIMITS, readSkillBundle } from '../../src/services/skills/skill-bundle';
import type { ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, type TestApp } from '../helpers/test-app';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

interface SkillInfo {
  id: string;
  name: string;
  description: string;
}

describe('skills written by an upstream model', () => {
  let lab: UpstreamApp;
  let upstream: ScriptedUpstream;
  let app: TestApp;
  let key: string;

  beforeAll(async () => {
    lab = await startUpstreamApp(
      [{ id: 'lab-writer', upstreamModel: 'qwen-7b', parameters: ['max_tokens', 'temperature'] }],
      { provider: 'vLLM' },
    );
    ({ app, upstream } = lab);
    key = await app.createKey('authors', 'pro');
  });
  afterAll(() => lab.close());

  const create = async (json: unknown): Promise<SkillInfo> => {
    const response = await call(`${app.url}/v1/skills/create`, { method: 'POST', key, json });
    expect(response.status).toBe(201);
    return (await response.json()) as SkillInfo;
  };
  const files = async (skill: SkillInfo): Promise<Record<string, string>> => {
    const { download_url } = (await (await call(`${app.url}/v1/skills/${skill.id}/download`, { key })).json()) as {
      download_url: string;
    };
    const zip = Buffer.from(await (await fetch(download_url)).arrayBuffer());
    const entries = await readSkillBundle(zip, DEFAULT_BUNDLE_LIMITS);
    return Object.fromEntries(entries.map((e) => [e.path, e.data.toString('utf8')]));
  };

  it('drafts SKILL.md and schema.json with the model', async () => {
    const drafted = {
      name: 'Shipping Labels',
      description: 'Read parcel labels.',
      instructions: '# Shipping labels\n\nFind the carrier logo, then the tracking barcode text.',
      json_schema: { type: 'object', properties: { carrier: { type: 'string' }, tracking: { type: 'string' } } },
    };
    upstream.next({ kind: 'reply', content: `Here it is:\n${JSON.stringify(drafted)}` });
    const skill = await create({ prompt: 'Read carrier and tracking number from parcel labels.' });
    expect(skill.name).toBe('shipping-labels');
    expect(skill.description).toBe('Read parcel labels. (written from a prompt by model lab-writer)');
    const bundle = await files(skill);
    expect(Object.keys(bundle)).toEqual(['SKILL.md', 'schema.json']);
    expect(bundle['SKILL.md']).toContain('Find the carrier logo');
    expect(JSON.parse(bundle['schema.json'] ?? '')).toEqual(drafted.json_schema);

    const request = upstream.requests.at(-1);
    expect(request?.body).toMatchObject({ model: 'qwen-7b', temperature: 0 });
    const messages = request?.body.messages as Array<{ role: string; content: string }>;
    expect(messages[1]?.content).toContain('Read carrier and tracking number from parcel labels.');
  });

  it("keeps the caller's json_schema and name over the model's", async () => {
    upstream.next({
      kind: 'reply',
      content: JSON.stringify({
        name: 'ignored',
        description: 'Counts pages.',
        instructions: 'Count the pages.',
        json_schema: { type: 'object', properties: { other: { type: 'string' } } },
      }),
    });
    const mine = { type: 'object', properties: { pages: { type: 'integer' } } };
    const skill = await create({ prompt: 'Count pages.', json_schema: mine, name: 'page-counter' });
    expect(skill.name).toBe('page-counter');
    expect(JSON.parse((await files(skill))['schema.json'] ?? '')).toEqual(mine);
    const messages = upstream.requests.at(-1)?.body.messages as Array<{ content: string }>;
    expect(messages[1]?.content).toContain('"pages"');
  });

  it('falls back to the template when the answer is unusable or the model fails', async () => {
    upstream.next({ kind: 'reply', content: 'I would rather not.' });
    const unusable = await create({ prompt: 'Extract the sender and subject from emails.' });
    expect(unusable.description).toContain('deterministic template');
    expect(JSON.parse((await files(unusable))['schema.json'] ?? '')).toMatchObject({
      properties: { sender: { type: ['string', 'null'] }, subject: { type: ['string', 'null'] } },
    });
    upstream.next({ kind: 'error', status: 500, body: { error: { message: 'boom' } } });
    upstream.next({ kind: 'error', status: 500, body: { error: { message: 'boom' } } });
    const failed = await create({ prompt: 'List the attendees of the meeting.' });
    expect(failed.description).toContain('deterministic template');
  });
});
