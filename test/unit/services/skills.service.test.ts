/**
 * The skills service on a real SQLite file and blob folder: create from a zip (nothing stored when refused),
 * de-duplication, resolution by id, name, version and inline zip, scoping, the parsed-view cache, signed downloads.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { createFsBlobStore } from '../../../src/backend/local/blob-store';
import type { Principal } from '../../../src/domain/account';
import { InvalidSkillBundleError, NotFoundError } from '../../../src/domain/errors';
import { createKeyedMutex } from '../../../src/lib/keyed-mutex';
import { createLogger } from '../../../src/lib/logger';
import { createUrlSigner } from '../../../src/lib/url-signer';
import { createSkillAuthor } from '../../../src/services/skills/skill-authoring';
import { DEFAULT_BUNDLE_LIMITS } from '../../../src/services/skills/skill-bundle';
import { zipFiles } from '../../../src/services/skills/skill-pack';
import { createSkillsService, type SkillsService } from '../../../src/services/skills/skills.service';
import { createSqliteAccountStore } from '../../../src/backend/sqlite/accounts.store';
import { openDatabase, type SqliteDatabase } from '../../../src/backend/sqlite/database';
import { createSqliteSkillStore } from '../../../src/backend/sqlite/skills.store';
import { craftZip, skillMd } from '../../helpers/crafted-zip';

const user = (orgId: string): Principal => ({
  kind: 'user',
  orgId,
  userId: 'u',
  keyId: null,
  tier: 'free',
  isSuperuser: false,
});
const guest: Principal = { kind: 'anonymous', clientIp: '10.0.0.1' };

const bundle = (name: string, body = 'Extract the total.', extra: Record<string, string> = {}) =>
  zipFiles([
    { path: 'SKILL.md', data: Buffer.from(skillMd(name, `About ${name}.`, body)) },
    { path: 'schema.json', data: Buffer.from('{"type":"object","properties":{"total":{"type":"number"}}}') },
    ...Object.entries(extra).map(([p, d]) => ({ path: p, data: Buffer.from(d) })),
  ]);

describe('skills service', () => {
  let dir: string;
  let db: SqliteDatabase;
  let skills: SkillsService;
  let orgA: string;
  let orgB: string;
  let clock: number;
  const uploads = new Map<string, Buffer>();

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-skills-svc-'));
    db = openDatabase(path.join(dir, 'prism.db'));
    const accounts = createSqliteAccountStore(db);
    orgA = (await accounts.createOrg({ name: 'a', tier: 'free', kind: 'standard' })).id;
    orgB = (await accounts.createOrg({ name: 'b', tier: 'free', kind: 'standard' })).id;
    clock = Date.UTC(2026, 6, 20, 12);
    skills = createSkillsService({
      store: createSqliteSkillStore(db),
      blobs: createFsBlobStore(path.join(dir, 'blobs')),
      locks: createKeyedMutex(),
      signer: createUrlSigner('s'.repeat(32)),
      limits: DEFAULT_BUNDLE_LIMITS,
      now: () => new Date((clock += 1000)),
      openFile: async (_principal, fileId) => {
        const zip = uploads.get(fileId);
        if (!zip) throw new NotFoundError('file', fileId);
        return { bytes: zip.length, stream: Readable.from([zip]) };
      },
      sessionPrompt: async () => null,
      author: createSkillAuthor({ model: null, logger: createLogger('silent') }),
    });
  });
  afterEach(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const rowCount = (table: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
  const blobFiles = () =>
    fs.readdirSync(path.join(dir, 'blobs'), { recursive: true }).filter((f) => /[0-9a-f]{64}$/.test(String(f)));

  it('stores a zip with a dated content version and resolves it by id, name, version and latest', async () => {
    const zip = await bundle('invoice-parsing');
    const v1 = await skills.createFromZip(user(orgA), zip);
    expect(v1).toMatchObject({
      name: 'invoice-parsing',
      description: 'About invoice-parsing.',
      orgId: orgA,
      isPublic: false,
      status: 'completed',
      sizeBytes: zip.length,
    });
    expect(v1.skillVersion).toMatch(/^20260720-[0-9a-f]{8}$/);
    expect(await skills.createFromZip(user(orgA), zip)).toEqual(v1);
    const v2 = await skills.update(user(orgA), v1.id, await bundle('renamed-in-zip', 'New steps.'));
    expect(v2).toMatchObject({ name: 'invoice-parsing', description: 'About renamed-in-zip.' });
    expect(v2.id).not.toBe(v1.id);

    const latest = await skills.resolve(user(orgA), { kind: 'name', name: 'invoice-parsing', version: 'latest' });
    expect(latest.record.id).toBe(v2.id);
    expect(latest.instructions).toBe('New steps.');
    expect(latest.schema).toEqual({ type: 'object', properties: { total: { type: 'number' } } });
    expect((await skills.resolve(user(orgA), { kind: 'id', id: v1.id, version: 'latest' })).instructions).toBe(
      'Extract the total.',
    );
    expect(
      (await skills.resolve(user(orgA), { kind: 'id', id: 'invoice-parsing', version: v1.skillVersion })).record.id,
    ).toBe(v1.id);
    expect((await skills.resolve(user(orgA), { kind: 'name', name: 'invoice-parsing', version: '1' })).record.id).toBe(
      v1.id,
    );
    expect(await skills.lookup(user(orgA), { name: 'invoice-parsing' })).toMatchObject({ id: v2.id });
    expect(await skills.lookup(user(orgA), { name: 'invoice-parsing', version: v1.skillVersion })).toMatchObject({
      id: v1.id,
    });
  });

  it("treats another organisation's skill and a guest's view of it as not found", async () => {
    const mine = await skills.createFromZip(user(orgA), await bundle('private-skill'));
    await expect(skills.get(user(orgB), mine.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(skills.get(guest, mine.id)).rejects.toMatchObject({ status: 404, code: 'skill_not_found' });
    await expect(
      skills.resolve(user(orgB), { kind: 'name', name: 'private-skill', version: 'latest' }),
    ).rejects.toMatchObject({ status: 404 });
    await expect(skills.update(user(orgB), mine.id, await bundle('x'))).rejects.toMatchObject({ status: 404 });
    await expect(skills.createFromZip(guest, await bundle('x'))).rejects.toMatchObject({ status: 401 });
    const pub = await skills.createPublic(await bundle('receipt'));
    expect(pub.created).toBe(true);
    expect((await skills.createPublic(await bundle('receipt'))).created).toBe(false);
    expect(
      (await skills.list(guest, { limit: 10, offset: 0, orderBy: 'name', descending: false, grouped: false })).map(
        (s) => s.name,
      ),
    ).toEqual(['receipt']);
    await expect(skills.update(user(orgA), pub.record.id, await bundle('receipt', 'mine'))).rejects.toMatchObject({
      status: 403,
    });
  });

  it('stores nothing for a refused bundle', async () => {
    const evil = craftZip([
      { name: 'SKILL.md', data: skillMd('evil') },
      { name: '../escape.sh', data: 'rm -rf /' },
    ]);
    await expect(skills.createFromZip(user(orgA), evil)).rejects.toBeInstanceOf(InvalidSkillBundleError);
    expect(rowCount('skills')).toBe(0);
    expect(rowCount('blobs')).toBe(0);
    expect(fs.existsSync(path.join(dir, 'blobs')) ? blobFiles() : []).toEqual([]);
  });

  it('resolves an inline zip without storing it, and reads single files back', async () => {
    const zip = await bundle('inline-demo', 'Inline steps.', { 'scripts/run.py': 'print(42)' });
    const inline = await skills.resolve(user(orgA), { kind: 'inline', name: null, description: null, zip });
    expect(inline.record.id).toMatch(/^inline_[0-9a-f]{16}$/);
    expect(inline.instructions).toBe('Inline steps.');
    expect((await inline.readFile('scripts/run.py')).toString()).toBe('print(42)');
    await expect(inline.readFile('nope.txt')).rejects.toBeInstanceOf(NotFoundError);
    expect(rowCount('skills')).toBe(0);

    const stored = await skills.createFromZip(user(orgA), zip);
    const view = await skills.resolve(user(orgA), { kind: 'id', id: stored.id, version: 'latest' });
    expect(await skills.resolve(user(orgA), { kind: 'id', id: stored.id, version: 'latest' })).toBe(view);
    expect(view.files.map((f) => f.path)).toEqual(['SKILL.md', 'schema.json', 'scripts/run.py']);
    expect((await view.readFile('scripts/run.py')).toString()).toBe('print(42)');
  });

  it('serves the exact stored bytes through a signed link only', async () => {
    const zip = await bundle('downloadable');
    const record = await skills.createFromZip(user(orgA), zip);
    const link = new URL(await skills.downloadPath(user(orgA), record.id, 60), 'http://x');
    const signed = { expires: link.searchParams.get('expires'), signature: link.searchParams.get('signature') };
    expect(link.pathname).toBe(`/v1/skills/${record.id}/content`);
    expect((await skills.openSignedDownload(record.id, signed)).zip.equals(zip)).toBe(true);
    await expect(skills.openSignedDownload(record.id, { ...signed, signature: '0'.repeat(64) })).rejects.toMatchObject({
      status: 404,
    });
    clock += 120_000;
    await expect(skills.openSignedDownload(record.id, signed)).rejects.toMatchObject({ status: 404 });
    await expect(skills.downloadPath(user(orgB), record.id, 60)).rejects.toMatchObject({ status: 404 });
  });

  it('writes SKILL.md and schema.json from a prompt with the template, and 404s an unknown session', async () => {
    const record = await skills.create(user(orgA), {
      kind: 'prompt',
      prompt: 'Extract the vendor, invoice date and total amount from supplier invoices.',
      jsonSchema: null,
    });
    expect(record.name).toBe('vendor-invoice-date-total-amount');
    expect(record.description).toContain('deterministic template');
    const view = await skills.resolve(user(orgA), { kind: 'id', id: record.id, version: 'latest' });
    expect(view.schema).toMatchObject({
      properties: {
        vendor: { type: ['string', 'null'] },
        invoice_date: { format: 'date' },
        total_amount: { type: ['number', 'null'] },
      },
    });
    expect(view.instructions).toContain('Extract the vendor, invoice date and total amount');
    const given = { type: 'object', properties: { words: { type: 'integer' } } };
    const named = await skills.create(
      user(orgA),
      { kind: 'prompt', prompt: 'Count the words.', jsonSchema: given },
      { name: 'word-count' },
    );
    expect((await skills.resolve(user(orgA), { kind: 'id', id: named.id, version: 'latest' })).schema).toEqual(given);
    await expect(
      skills.create(user(orgA), { kind: 'session', sessionId: 'nope', jsonSchema: null }),
    ).rejects.toMatchObject({ status: 404, code: 'chat_not_found' });
    uploads.set('file-1', await bundle('from-file'));
    expect(await skills.create(user(orgA), { kind: 'file', fileId: 'file-1' })).toMatchObject({ name: 'from-file' });
    expect(await skills.updateFromFile(user(orgA), named.id, 'file-1')).toMatchObject({
      name: 'word-count',
      description: 'About from-file.',
    });
  });
});
