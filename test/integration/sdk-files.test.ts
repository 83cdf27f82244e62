/**
 * Real clients against the Files API: the `vlmrun` npm SDK on /v1 and the official `openai` SDK on
 * /v1/compat and /v1/openai, each used exactly as an application would, with only the base URL changed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { VlmRun } from 'vlmrun';
import { startTestApp, type TestApp } from '../helpers/test-app';

describe('SDK clients on the Files API', () => {
  let app: TestApp;
  let key: string;
  let workDir: string;

  beforeAll(async () => {
    app = await startTestApp();
    key = await app.createKey('sdk-users', 'pro');
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-sdk-'));
  });
  afterAll(async () => {
    fs.rmSync(workDir, { recursive: true, force: true });
    await app.close();
  });

  it('vlmrun SDK: uploads a file (hash check first), gets it, lists it and finds the duplicate', async () => {
    const client = new VlmRun({ apiKey: key, baseURL: `${app.url}/v1` });
    const filePath = path.join(workDir, 'invoice.txt');
    fs.writeFileSync(filePath, `Invoice 42, total 12.50, ${Date.now()}`);

    const uploaded = await client.files.upload({ filePath, purpose: 'vision' });
    expect(uploaded).toMatchObject({ object: 'file', filename: 'invoice.txt', purpose: 'vision' });
    expect(uploaded.bytes).toBe(fs.statSync(filePath).size);

    const fetched = await client.files.get(uploaded.id);
    expect(fetched.id).toBe(uploaded.id);

    const listed = await client.files.list({ skip: 0, limit: 10 });
    expect(listed.map((f) => f.id)).toContain(uploaded.id);

    const again = await client.files.upload({ filePath });
    expect(again.id).toBe(uploaded.id);

    await client.files.delete(uploaded.id);
    await expect(client.files.get(uploaded.id)).rejects.toMatchObject({ http_status: 404 });
  });

  it('vlmrun SDK: an invalid key surfaces as an API error with status 401', async () => {
    const client = new VlmRun({ apiKey: 'prism_wrong', baseURL: `${app.url}/v1` });
    await expect(client.files.list()).rejects.toMatchObject({ http_status: 401 });
  });

  it.each(['/v1/compat', '/v1/openai'])(
    'openai SDK on %s: create, retrieve, list (with cursor), content, delete',
    async (prefix) => {
      const client = new OpenAI({ apiKey: key, baseURL: `${app.url}${prefix}` });
      const filePath = path.join(workDir, `notes-${prefix.replace(/\W/g, '')}.txt`);
      fs.writeFileSync(filePath, `notes for ${prefix}`);

      const created = await client.files.create({ file: fs.createReadStream(filePath), purpose: 'batch' });
      expect(created).toMatchObject({ object: 'file', purpose: 'batch', bytes: fs.statSync(filePath).size });
      expect(Number.isInteger(created.created_at)).toBe(true);

      const retrieved = await client.files.retrieve(created.id);
      expect(retrieved.filename).toBe(path.basename(filePath));

      const second = await client.files.create({ file: fs.createReadStream(filePath), purpose: 'assistants' });
      const ids: string[] = [];
      for await (const file of client.files.list({ limit: 1 })) ids.push(file.id);
      expect(ids.slice(0, 2)).toEqual([second.id, created.id]);

      const content = await client.files.content(created.id);
      expect(await content.text()).toBe(`notes for ${prefix}`);

      const deleted = await client.files.delete(created.id);
      expect(deleted).toMatchObject({ id: created.id, deleted: true });
      await expect(client.files.retrieve(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    },
  );

  it('openai SDK: a bad key is an AuthenticationError and a bad purpose an UnprocessableEntityError', async () => {
    const bad = new OpenAI({ apiKey: 'prism_wrong', baseURL: `${app.url}/v1/compat` });
    await expect(bad.files.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const client = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1/compat` });
    const filePath = path.join(workDir, 'x.txt');
    fs.writeFileSync(filePath, 'x');
    await expect(
      client.files.create({ file: fs.createReadStream(filePath), purpose: 'poetry' as OpenAI.FilePurpose }),
    ).rejects.toBeInstanceOf(OpenAI.UnprocessableEntityError);
  });
});
