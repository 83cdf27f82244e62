/**
 * Conformance suite for SkillStore implementations: scoping (an organisation's skills plus public ones, guests
 * public only), content de-duplication, lookups by name and version, and list ordering and grouping.
 */
import { randomUUID } from 'node:crypto';
import type { SkillRecord } from '../../src/domain/skill';
import type { AccountStore, SkillListQuery, SkillStore, StoredBytes } from '../../src/stores/types';

export interface SkillStoreSet {
  accounts: AccountStore;
  skills: SkillStore;
  close(): Promise<void>;
}

const content = (seed: string): StoredBytes => ({
  bytes: 100,
  md5: 'b'.repeat(32),
  sha256: Buffer.from(seed).toString('hex').padEnd(64, '0').slice(0, 64),
});

const listAll = (overrides: Partial<SkillListQuery> = {}): SkillListQuery => ({
  limit: 100,
  offset: 0,
  orderBy: 'created_at',
  descending: true,
  grouped: false,
  ...overrides,
});

export function describeSkillStoreConformance(backend: string, open: () => Promise<SkillStoreSet>): void {
  describe(`${backend} skill store`, () => {
    let stores: SkillStoreSet;
    let clock = Date.UTC(2026, 0, 1);
    beforeEach(async () => {
      stores = await open();
    });
    afterEach(() => stores.close());

    async function add(orgId: string | null, name: string, seed: string, description = 'd'): Promise<SkillRecord> {
      clock += 1000;
      const at = new Date(clock);
      const stored = content(seed);
      const { record } = await stores.skills.insert(
        {
          id: randomUUID(),
          name,
          skillVersion: `20260101-${stored.sha256.slice(0, 8)}`,
          description,
          orgId,
          isPublic: orgId === null,
          status: 'completed',
          contentHash: stored.sha256,
          sizeBytes: stored.bytes,
          createdAt: at,
          updatedAt: at,
        },
        'zip',
        stored,
      );
      return record;
    }

    it("shows an organisation its own and public skills, guests public ones, and never another organisation's", async () => {
      const a = await stores.accounts.createOrg({ name: 'a', tier: 'free', kind: 'standard' });
      const b = await stores.accounts.createOrg({ name: 'b', tier: 'free', kind: 'standard' });
      const mine = await add(a.id, 'mine', 'm1');
      const pub = await add(null, 'receipt', 'p1');
      expect(await stores.skills.get({ orgId: a.id }, mine.id)).toMatchObject({
        id: mine.id,
        orgId: a.id,
        isPublic: false,
      });
      expect(await stores.skills.get({ orgId: b.id }, mine.id)).toBeNull();
      expect(await stores.skills.get({ orgId: null }, mine.id)).toBeNull();
      expect(await stores.skills.get({ orgId: b.id }, pub.id)).toMatchObject({ isPublic: true, orgId: null });
      expect(await stores.skills.get({ orgId: null }, pub.id)).toMatchObject({ id: pub.id });
      expect(await stores.skills.findByName({ orgId: b.id }, 'mine', 'latest')).toBeNull();
      expect((await stores.skills.list({ orgId: b.id }, listAll())).map((s) => s.name)).toEqual(['receipt']);
      expect((await stores.skills.list({ orgId: null }, listAll())).map((s) => s.name)).toEqual(['receipt']);
      expect((await stores.skills.list({ orgId: a.id }, listAll())).map((s) => s.name)).toEqual(['receipt', 'mine']);
      expect(await stores.skills.getBySignedId(mine.id)).toMatchObject({ id: mine.id });
    });

    it('keeps one record for the same bytes under the same name in the same scope', async () => {
      const a = await stores.accounts.createOrg({ name: 'a', tier: 'free', kind: 'standard' });
      const b = await stores.accounts.createOrg({ name: 'b', tier: 'free', kind: 'standard' });
      const first = await add(a.id, 'dup', 'same');
      expect(await add(a.id, 'dup', 'same')).toEqual(first);
      expect((await add(b.id, 'dup', 'same')).id).not.toBe(first.id);
      expect((await add(a.id, 'other-name', 'same')).id).not.toBe(first.id);
      expect(await stores.skills.list({ orgId: a.id }, listAll())).toHaveLength(2);
    });

    it('finds the latest, an exact version or the n-th revision by name, preferring the organisation', async () => {
      const a = await stores.accounts.createOrg({ name: 'a', tier: 'free', kind: 'standard' });
      const pub = await add(null, 'invoice', 'pub');
      const v1 = await add(a.id, 'invoice', 'v1');
      const v2 = await add(a.id, 'invoice', 'v2');
      const scope = { orgId: a.id };
      expect(await stores.skills.findByName(scope, 'invoice', 'latest')).toMatchObject({ id: v2.id });
      expect(await stores.skills.findByName(scope, 'invoice', v1.skillVersion)).toMatchObject({ id: v1.id });
      expect(await stores.skills.findByName(scope, 'invoice', '1')).toMatchObject({ id: v1.id });
      expect(await stores.skills.findByName(scope, 'invoice', '2')).toMatchObject({ id: v2.id });
      expect(await stores.skills.findByName(scope, 'invoice', '3')).toBeNull();
      expect(await stores.skills.findByName(scope, 'invoice', pub.skillVersion)).toMatchObject({ id: pub.id });
      expect(await stores.skills.findByName({ orgId: null }, 'invoice', 'latest')).toMatchObject({ id: pub.id });
      expect(await stores.skills.findByName(scope, 'invoice', '20990101-00000000')).toBeNull();
      expect(await stores.skills.findByName(scope, 'missing', 'latest')).toBeNull();
    });

    it('orders by created_at, updated_at or name in both directions, pages, and groups to the latest per name', async () => {
      const a = await stores.accounts.createOrg({ name: 'a', tier: 'free', kind: 'standard' });
      const scope = { orgId: a.id };
      const bravo1 = await add(a.id, 'bravo', 'b1');
      const alpha1 = await add(a.id, 'alpha', 'a1');
      const bravo2 = await add(a.id, 'bravo', 'b2');
      const charlie = await add(null, 'charlie', 'c1');
      const ids = async (q: Partial<SkillListQuery>) => (await stores.skills.list(scope, listAll(q))).map((s) => s.id);
      expect(await ids({})).toEqual([charlie.id, bravo2.id, alpha1.id, bravo1.id]);
      expect(await ids({ descending: false })).toEqual([bravo1.id, alpha1.id, bravo2.id, charlie.id]);
      expect(await ids({ orderBy: 'updated_at' })).toEqual([charlie.id, bravo2.id, alpha1.id, bravo1.id]);
      expect(await ids({ orderBy: 'name', descending: false })).toEqual([alpha1.id, bravo1.id, bravo2.id, charlie.id]);
      expect(await ids({ orderBy: 'name' })).toEqual([charlie.id, bravo2.id, bravo1.id, alpha1.id]);
      expect(await ids({ limit: 2, offset: 1 })).toEqual([bravo2.id, alpha1.id]);
      expect(await ids({ grouped: true })).toEqual([charlie.id, bravo2.id, alpha1.id]);
      expect(await ids({ grouped: true, orderBy: 'name', descending: false })).toEqual([
        alpha1.id,
        bravo2.id,
        charlie.id,
      ]);
      expect(await ids({ grouped: true, limit: 1, offset: 1 })).toEqual([bravo2.id]);
    });

    it("lets an organisation's skill shadow a public one of the same name when grouped", async () => {
      const a = await stores.accounts.createOrg({ name: 'a', tier: 'free', kind: 'standard' });
      const own = await add(a.id, 'receipt', 'own');
      await add(null, 'receipt', 'public-newer');
      expect((await stores.skills.list({ orgId: a.id }, listAll({ grouped: true }))).map((s) => s.id)).toEqual([
        own.id,
      ]);
      expect(await stores.skills.list({ orgId: a.id }, listAll())).toHaveLength(2);
    });
  });
}
