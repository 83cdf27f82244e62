/**
 * The Skills API end to end on the real app: zips uploaded with the `vlmrun` SDK (its 0.2.12 release has no skills
 * resource, so the skills calls are plain HTTP), create → lookup → get → list (grouped and not, every order) →
 * update → both versions → byte-identical signed download; prompt-created skills; every unpacking refusal with
 * nothing stored; organisation isolation and guest visibility; built-in skills; generate with `config.skills`.
 */
import path from 'node:path';
import { VlmRun } from 'vlmrun';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { seedBuiltinSkills } from '../../src/services/skills/builtin-skills';
import { DEFAULT_BUNDLE_LIMITS, readSkillBundle } from '../../src/services/skills/skill-bundle';
import { zipFiles } from '../../src/services/skills/skill-pack';
import { craftZip, skillMd, type CraftedEntry } from '../helpers/crafted-zip';
import { makeTextPdf, RECEIPT_LINES } from '../helpers/media-fixtures';
import { call, startTestApp, uploadFile, type TestApp } from '../helpers/test-app';
import { rawSql } from '../helpers/raw-sql';

interface SkillInfo {
  id: string;
  object: string;
  name: string;
  description: string;
  skill_version: string;
  status: string;
  is_public: boolean;
  created_at: string;
  updated_at: string;
}

interface ErrorBody {
  detail: { error: { code: string; message: string; entry?: string | null; rule?: string; param?: string | null } };
}

const BUILTINS = ['bank-statement', 'identity-document', 'invoice', 'meeting-audio-notes', 'receipt', 'video-summary'];

const bundle = (name: string, body = 'Read the total.', description = `About ${name}.`) =>
  zipFiles([
    { path: 'SKILL.md', data: Buffer.from(skillMd(name, description, body)) },
    { path: 'schema.json', data: Buffer.from('{"type":"object","properties":{"total":{"type":["number","null"]}}}') },
    { path: 'scripts/helper.py', data: Buffer.from('print("never executed")\n') },
  ]);

describe('skills API', () => {
  let app: TestApp;
  let key: string;
  let otherKey: string;
  let workDir: string;
  let sdk: VlmRun;

  beforeAll(async () => {
    app = await startTestApp();
    key = await app.createKey('skill-makers', 'pro');
    otherKey = await app.createKey('other-org', 'pro');
    sdk = new VlmRun({ apiKey: key, baseURL: `${app.url}/v1` });
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-skills-it-'));
  });
  afterAll(async () => {
    fs.rmSync(workDir, { recursive: true, force: true });
    await app.close();
  });

  /** Uploads a zip with the vlmrun SDK, as `Skills.create_from_directory` does (purpose assistants). */
  async function uploadZip(zip: Buffer, name = 'skill.zip'): Promise<string> {
    const filePath = path.join(workDir, `${Date.now()}-${Math.random().toString(16).slice(2)}-${name}`);
    fs.writeFileSync(filePath, zip);
    const file = await sdk.files.upload({ filePath, purpose: 'assistants', checkDuplicate: false });
    return file.id;
  }

  /** `k` null: a guest (no Authorization header). */
  const post = (p: string, json: unknown, k: string | null = key) =>
    call(`${app.url}${p}`, { method: 'POST', json, ...(k === null ? {} : { key: k }) });
  const get = (p: string, k: string | null = key) => call(`${app.url}${p}`, k === null ? {} : { key: k });
  const skillRows = () => rawSql(app.container).count('skills');

  it('creates from an uploaded zip, looks up, lists, updates and downloads byte-identical versions', async () => {
    const zip1 = await bundle('invoice-parsing');
    const created = await post('/v1/skills/create', { file_id: await uploadZip(zip1) });
    expect(created.status).toBe(201);
    const v1 = (await created.json()) as SkillInfo;
    expect(v1).toMatchObject({
      object: 'skill',
      name: 'invoice-parsing',
      description: 'About invoice-parsing.',
      status: 'completed',
      is_public: false,
    });
    expect(v1.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(v1.skill_version).toMatch(/^\d{8}-[0-9a-f]{8}$/);

    const looked = (await (await post('/v1/skills/lookup', { name: 'invoice-parsing' })).json()) as SkillInfo;
    expect(looked.id).toBe(v1.id);
    expect(((await (await get(`/v1/skills/${v1.id}`)).json()) as SkillInfo).name).toBe('invoice-parsing');

    const zip2 = await bundle('invoice-parsing', 'Read the total and the tax.', 'Second version.');
    const updated = await post(`/v1/skills/${v1.id}/update`, { file_id: await uploadZip(zip2) });
    expect(updated.status).toBe(200);
    const v2 = (await updated.json()) as SkillInfo;
    expect(v2).toMatchObject({ name: 'invoice-parsing', description: 'Second version.' });
    expect(v2.id).not.toBe(v1.id);
    expect(v2.skill_version).not.toBe(v1.skill_version);

    const latest = (await (await post('/v1/skills/lookup', { name: 'invoice-parsing' })).json()) as SkillInfo;
    expect(latest.id).toBe(v2.id);
    const byVersion = await post('/v1/skills/lookup', { name: 'invoice-parsing', skill_version: v1.skill_version });
    expect(((await byVersion.json()) as SkillInfo).id).toBe(v1.id);
    expect(((await (await post('/v1/skills/lookup', { id: v1.id })).json()) as SkillInfo).id).toBe(v1.id);
    expect((await get(`/v1/skills/${v1.id}`)).status).toBe(200);

    const list = async (query: string) =>
      ((await (await get(`/v1/skills?${query}`)).json()) as SkillInfo[]).filter((s) => !s.is_public);
    expect((await list('')).map((s) => s.id)).toEqual([v2.id, v1.id]);
    expect((await list('descending=false')).map((s) => s.id)).toEqual([v1.id, v2.id]);
    expect((await list('order_by=updated_at')).map((s) => s.id)).toEqual([v2.id, v1.id]);
    expect((await list('order_by=name&descending=false')).map((s) => s.id)).toEqual([v1.id, v2.id]);
    expect((await list('grouped=true')).map((s) => s.id)).toEqual([v2.id]);
    const all = (await (
      await get('/v1/skills?grouped=true&order_by=name&descending=false&limit=1000')
    ).json()) as SkillInfo[];
    expect(all.map((s) => s.name)).toEqual([...BUILTINS, 'invoice-parsing'].sort());
    const page = (await (
      await get('/v1/skills?limit=2&offset=1&order_by=name&descending=false')
    ).json()) as SkillInfo[];
    expect(page.map((s) => s.name)).toEqual(all.slice(1, 3).map((s) => s.name));
    expect((await get('/v1/skills?limit=0')).status).toBe(422);
    expect((await get('/v1/skills?order_by=size')).status).toBe(422);

    for (const [version, zip] of [
      [v1, zip1],
      [v2, zip2],
    ] as const) {
      const download = await get(`/v1/skills/${version.id}/download`);
      expect(download.status).toBe(200);
      const body = (await download.json()) as { download_url: string; expires_in: number };
      expect(body.expires_in).toBe(604800);
      const bytes = await fetch(body.download_url);
      expect(bytes.status).toBe(200);
      expect(bytes.headers.get('content-type')).toBe('application/zip');
      expect(Buffer.from(await bytes.arrayBuffer()).equals(zip)).toBe(true);
    }
    const short = (await (await get(`/v1/skills/${v1.id}/download?expires=60`)).json()) as { download_url: string };
    const tampered = short.download_url.replace(/signature=[0-9a-f]{4}/, 'signature=0000');
    expect((await fetch(tampered)).status).toBe(404);
  });

  it('creates from a prompt (template without an upstream model) and 404s an unknown chat session', async () => {
    const response = await post('/v1/skills/create', {
      prompt: 'Extract the carrier, tracking number and delivery date from shipping labels.',
      json_schema: { type: 'object', properties: { tracking_number: { type: 'string' } } },
    });
    expect(response.status).toBe(201);
    const skill = (await response.json()) as SkillInfo;
    expect(skill.name).toBe('carrier-tracking-number-delivery-date');
    expect(skill.description).toContain('deterministic template');
    const { download_url } = (await (await get(`/v1/skills/${skill.id}/download`)).json()) as { download_url: string };
    const zip = Buffer.from(await (await fetch(download_url)).arrayBuffer());
    const entries = await readSkillBundle(zip, DEFAULT_BUNDLE_LIMITS);
    expect(entries.map((e) => e.path)).toEqual(['SKILL.md', 'schema.json']);
    expect(JSON.parse(entries[1]?.data.toString() ?? '')).toEqual({
      type: 'object',
      properties: { tracking_number: { type: 'string' } },
    });
    expect(entries[0]?.data.toString()).toContain('Extract the carrier, tracking number and delivery date');

    const session = await post('/v1/skills/create', { session_id: '3f1c6a52-5b0e-4c1e-9a0e-2f7d1c9b8a11' });
    expect(session.status).toBe(404);
    expect(((await session.json()) as ErrorBody).detail.error.code).toBe('chat_not_found');

    const two = await post('/v1/skills/create', { prompt: 'x', file_id: 'f' });
    expect(two.status).toBe(400);
    expect(((await two.json()) as ErrorBody).detail.error.code).toBe('invalid_skill_source');
    expect((await post('/v1/skills/create', {})).status).toBe(400);
  });

  const withSkill = (...entries: CraftedEntry[]) =>
    craftZip([{ name: 'SKILL.md', data: skillMd('crafted') }, ...entries]);
  const refusals: Array<[string, () => Buffer, string, string | null]> = [
    ['a .. segment', () => withSkill({ name: 'a/../../x.sh', data: 'x' }), 'path_traversal', 'a/../../x.sh'],
    ['an absolute path', () => withSkill({ name: '/tmp/x', data: 'x' }), 'absolute_path', '/tmp/x'],
    ['a drive path', () => withSkill({ name: 'D:\\x', data: 'x' }), 'absolute_path', 'D:\\x'],
    ['a symlink', () => withSkill({ name: 'ln', data: '/etc', unixMode: 0o120777 }), 'symlink', 'ln'],
    ['an encrypted entry', () => withSkill({ name: 'e.bin', data: 'x', encrypted: true }), 'encrypted', 'e.bin'],
    [
      'more than 1,000 entries',
      () => withSkill(...Array.from({ length: 1000 }, (_, i) => ({ name: `r/${i}`, data: '' }))),
      'too_many_entries',
      null,
    ],
    [
      'an entry over 10 MiB',
      () => withSkill({ name: 'big.bin', data: Buffer.alloc(10 * 1024 * 1024 + 1, 1), method: 'store' }),
      'entry_too_large',
      'big.bin',
    ],
    [
      'a total over 50 MiB',
      () =>
        withSkill(
          ...Array.from({ length: 6 }, (_, i) => ({
            name: `p${i}.bin`,
            data: Buffer.concat([randomBytes(4 * 1024 * 1024), Buffer.alloc(5 * 1024 * 1024, i + 1)]),
          })),
        ),
      'total_too_large',
      'p5.bin',
    ],
    [
      'a compression ratio over 100',
      () => withSkill({ name: 'z.bin', data: Buffer.alloc(4 * 1024 * 1024) }),
      'compression_ratio',
      'z.bin',
    ],
    [
      'a duplicate name',
      () => withSkill({ name: 'd.txt', data: '1' }, { name: 'd.txt', data: '2' }),
      'duplicate_name',
      'd.txt',
    ],
    ['a missing SKILL.md', () => craftZip([{ name: 'notes.md', data: '# hi' }]), 'missing_skill_md', 'SKILL.md'],
    [
      'an unparsable SKILL.md',
      () => craftZip([{ name: 'SKILL.md', data: 'no front matter' }]),
      'invalid_skill_md',
      'SKILL.md',
    ],
    [
      'front matter without name',
      () => craftZip([{ name: 'SKILL.md', data: '---\ndescription: d\n---\n' }]),
      'invalid_front_matter',
      'SKILL.md',
    ],
    [
      'front matter without description',
      () => craftZip([{ name: 'SKILL.md', data: '---\nname: n\n---\n' }]),
      'invalid_front_matter',
      'SKILL.md',
    ],
    [
      'an invalid schema.json',
      () => withSkill({ name: 'schema.json', data: '{"type":"nope"}' }),
      'invalid_schema',
      'schema.json',
    ],
    [
      'an invalid prism.yaml',
      () => withSkill({ name: 'prism.yaml', data: 'apiVersion: prism/v1alpha\ngraph: "stateDiagram-v2\\n A --> B"\n' }),
      'invalid_prism_yaml',
      'prism.yaml',
    ],
  ];
  it.each(refusals)(
    'refuses %s with a 400 naming the entry and the rule, storing nothing',
    async (_l, make, rule, entry) => {
      const before = await skillRows();
      const zip = make();
      const fileId = await uploadZip(zip);
      const info = (await (await get(`/v1/files/${fileId}`)).json()) as { bytes: number };
      expect(info.bytes).toBe(zip.length);
      const blobsBefore = await rawSql(app.container).count('blobs');
      const response = await post('/v1/skills/create', { file_id: fileId });
      expect(response.status).toBe(400);
      const { error } = ((await response.json()) as ErrorBody).detail;
      expect(error).toMatchObject({ code: 'invalid_skill_bundle', rule, entry });
      if (entry !== null) expect(error.message).toContain(entry);
      expect(await skillRows()).toBe(before);
      expect(await rawSql(app.container).count('blobs')).toBe(blobsBefore);
    },
  );

  it('keeps organisations apart (404, never 403) and shows guests the public skills only', async () => {
    const mine = (await (
      await post('/v1/skills/create', { file_id: await uploadZip(await bundle('private-recipe')) })
    ).json()) as SkillInfo;
    for (const response of [
      await get(`/v1/skills/${mine.id}`, otherKey),
      await post('/v1/skills/lookup', { name: 'private-recipe' }, otherKey),
      await post('/v1/skills/lookup', { id: mine.id }, otherKey),
      await get(`/v1/skills/${mine.id}/download`, otherKey),
      await get(`/v1/skills/${mine.id}`, null),
    ]) {
      expect([response.url, response.status]).toEqual([response.url, 404]);
      expect(((await response.json()) as ErrorBody).detail.error.code).toBe('skill_not_found');
    }
    const otherFile = await uploadFile(app.url, otherKey, await bundle('x'), { filename: 'x.zip' });
    const { id: otherFileId } = (await otherFile.json()) as { id: string };
    expect((await post(`/v1/skills/${mine.id}/update`, { file_id: otherFileId }, otherKey)).status).toBe(404);
    const otherList = (await (await get('/v1/skills?limit=1000', otherKey)).json()) as SkillInfo[];
    expect(otherList.map((s) => s.name)).not.toContain('private-recipe');

    const guestList = (await (
      await get('/v1/skills?grouped=true&order_by=name&descending=false', null)
    ).json()) as SkillInfo[];
    expect(guestList.map((s) => s.name)).toEqual(BUILTINS);
    expect(guestList.every((s) => s.is_public)).toBe(true);
    const receipt = guestList.find((s) => s.name === 'receipt');
    expect((await get(`/v1/skills/${receipt?.id ?? ''}`, null)).status).toBe(200);
    expect((await post('/v1/skills/lookup', { name: 'receipt' }, null)).status).toBe(200);
    expect((await post('/v1/skills/create', { prompt: 'Summarise.' }, null)).status).toBe(401);
    const publicUpdate = await post(`/v1/skills/${receipt?.id ?? ''}/update`, { file_id: otherFileId }, otherKey);
    expect(publicUpdate.status).toBe(403);
  });

  it('seeds the built-in skills once and again only when their content changes', async () => {
    const { skills } = app.container.services;
    const before = await skillRows();
    const again = await seedBuiltinSkills(skills, app.container.config.skills.builtinDir, app.container.logger);
    expect([again.created, again.failed]).toEqual([[], []]);
    expect(again.unchanged).toHaveLength(BUILTINS.length);
    expect(await skillRows()).toBe(before);

    const copy = path.join(workDir, 'builtins');
    fs.cpSync(app.container.config.skills.builtinDir, copy, { recursive: true });
    fs.appendFileSync(path.join(copy, 'receipt', 'SKILL.md'), '\nAlso read the loyalty number.\n');
    const changed = await seedBuiltinSkills(skills, copy, app.container.logger);
    expect(changed.created).toEqual([expect.stringMatching(/^receipt@\d{8}-[0-9a-f]{8}$/)]);
    expect(await skillRows()).toBe(before + 1);
    const latest = (await (await post('/v1/skills/lookup', { name: 'receipt' }, null)).json()) as SkillInfo;
    expect(changed.created[0]).toBe(`receipt@${latest.skill_version}`);
    const versions = ((await (await get('/v1/skills?limit=1000', null)).json()) as SkillInfo[]).filter(
      (s) => s.name === 'receipt',
    );
    expect(versions).toHaveLength(2);
  });

  it('generates with config.skills and no domain: the skill is the domain (stored, by name, inline)', async () => {
    const pdf = await makeTextPdf([[...RECEIPT_LINES]]);
    const { id: fileId } = (await (await uploadFile(app.url, key, pdf, { filename: 'receipt.pdf' })).json()) as {
      id: string;
    };
    const generate = (skills: unknown[]) =>
      post('/v1/document/generate', { file_id: fileId, batch: false, config: { skills } });

    const builtin = await generate([{ type: 'skill_reference', skill_id: 'receipt', skill_version: 'latest' }]);
    expect(builtin.status).toBe(201);
    const prediction = (await builtin.json()) as { status: string; domain: string; response: Record<string, unknown> };
    expect(prediction).toMatchObject({ status: 'completed', domain: 'document.receipt' });
    expect(prediction.response.total).toBe(26.22);

    const mine = (await (
      await post('/v1/skills/create', { file_id: await uploadZip(await bundle('receipt-total')) })
    ).json()) as SkillInfo;
    const byName = (await (await generate([{ skill_name: 'receipt-total' }])).json()) as {
      response: unknown;
      domain: unknown;
    };
    expect(byName).toMatchObject({ domain: null, response: { total: 26.22 } });
    const byId = (await (await generate([{ skill_id: mine.id, version: mine.skill_version }])).json()) as {
      response: unknown;
    };
    expect(byId.response).toMatchObject({ total: 26.22 });

    const inlineZip = await bundle('inline-total');
    const inline = await generate([
      {
        type: 'inline',
        name: 'inline-total',
        source: { type: 'base64', media_type: 'application/zip', data: inlineZip.toString('base64') },
      },
    ]);
    expect(((await inline.json()) as { response: unknown }).response).toMatchObject({ total: 26.22 });
    const legacy = await generate([{ type: 'inline', bundle: inlineZip.toString('base64') }]);
    expect(((await legacy.json()) as { response: unknown }).response).toMatchObject({ total: 26.22 });

    const missing = await generate([{ skill_name: 'no-such-skill' }]);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as ErrorBody).detail.error.code).toBe('skill_not_found');
    const badInline = await generate([
      { type: 'inline', source: { data: craftZip([{ name: 'x', data: '' }]).toString('base64') } },
    ]);
    expect(badInline.status).toBe(400);
  });
});
