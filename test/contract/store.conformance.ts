/**
 * The store conformance suite: behaviour every AccountStore, WalletStore and FileStore implementation must
 * show, organisation scoping first. Run it for each backend with that backend's factory.
 */
import type { AccountStore, FilePage, FileStore, StoredBytes, WalletStore } from '../../src/stores/types';

export interface StoreSet {
  accounts: AccountStore;
  wallets: WalletStore;
  files: FileStore;
  close(): Promise<void>;
}

const bytes = (n: number): StoredBytes => ({ bytes: n, md5: 'a'.repeat(32), sha256: n.toString(16).padStart(64, '0') });

export function describeStoreConformance(backend: string, open: () => Promise<StoreSet>): void {
  describe(`${backend} stores`, () => {
    let stores: StoreSet;
    beforeEach(async () => {
      stores = await open();
    });
    afterEach(() => stores.close());

    it('finds organisations by id or name and keys only by active hash', async () => {
      const org = await stores.accounts.createOrg({ name: 'acme', tier: 'pro', kind: 'standard' });
      expect(await stores.accounts.findOrg('acme')).toMatchObject({ id: org.id, tier: 'pro' });
      expect(await stores.accounts.findOrg(org.id)).toMatchObject({ name: 'acme' });
      const user = await stores.accounts.createUser({ orgId: org.id, name: 'u', isSuperuser: true });
      expect(await stores.accounts.findSuperuser(org.id)).toMatchObject({ id: user.id });
      const key = await stores.accounts.createKey({
        orgId: org.id,
        userId: user.id,
        name: 'k',
        keyHash: 'h1',
        prefix: 'p',
      });
      expect(await stores.accounts.findKeyOwner('h1')).toMatchObject({
        key: { id: key.id },
        user: { isSuperuser: true },
        org: { name: 'acme' },
      });
      expect(await stores.accounts.findKeyOwner('h2')).toBeNull();
      const other = await stores.accounts.createKey({
        orgId: org.id,
        userId: user.id,
        name: 'k2',
        keyHash: 'h3',
        prefix: 'q',
      });
      await stores.accounts.revokeKey(key.id);
      expect(await stores.accounts.findKeyOwner('h1')).toBeNull();
      const listed = await stores.accounts.listKeys(org.id);
      expect(listed.map((k) => [k.id, k.name, k.prefix, k.revokedAt !== null])).toEqual([
        [key.id, 'k', 'p', true],
        [other.id, 'k2', 'q', false],
      ]);
      expect(listed[0]).not.toHaveProperty('keyHash');
      expect(await stores.accounts.revokeKey('missing')).toBeNull();
      await expect(stores.accounts.createOrg({ name: 'acme', tier: 'free', kind: 'standard' })).rejects.toHaveProperty(
        'message',
      );
    });

    it('keeps wallet balances exact in micro-dollars', async () => {
      const org = await stores.accounts.createOrg({ name: 'w', tier: 'free', kind: 'standard' });
      expect(await stores.wallets.balance(org.id)).toBe(0);
      expect(await stores.wallets.credit(org.id, 1_500_000, 'top up')).toBe(1_500_000);
      expect(await stores.wallets.credit(org.id, -1_000, 'chat')).toBe(1_499_000);
      await expect(stores.wallets.credit(org.id, 0.5, 'fraction')).rejects.toThrow(RangeError);
    });

    it('scopes every file read by organisation', async () => {
      const a = await stores.accounts.createOrg({ name: 'a', tier: 'free', kind: 'standard' });
      const b = await stores.accounts.createOrg({ name: 'b', tier: 'free', kind: 'standard' });
      const file = await stores.files.insertUploaded(
        { orgId: a.id, filename: 'f', purpose: 'vision', contentType: 'text/plain' },
        bytes(1),
      );
      expect(await stores.files.get(a.id, file.id)).toMatchObject({ id: file.id, bytes: 1, status: 'uploaded' });
      expect(await stores.files.get(b.id, file.id)).toBeNull();
      expect(await stores.files.findByMd5(b.id, 'a'.repeat(32))).toBeNull();
      expect(await stores.files.list(b.id, { skip: 0, limit: 10 })).toEqual([]);
      expect(await stores.files.delete(b.id, file.id)).toBeNull();
      expect(await stores.files.list(a.id, { skip: 0, limit: 10 })).toHaveLength(1);
    });

    it('pages newest first with skip, limit and an after-cursor', async () => {
      const org = await stores.accounts.createOrg({ name: 'p', tier: 'free', kind: 'standard' });
      const ids: string[] = [];
      for (let i = 1; i <= 4; i += 1) {
        ids.push(
          (
            await stores.files.insertUploaded(
              { orgId: org.id, filename: `f${i}`, purpose: 'vision', contentType: 't' },
              bytes(i),
            )
          ).id,
        );
      }
      const names = async (page: FilePage) => (await stores.files.list(org.id, page)).map((f) => f.filename);
      expect(await names({ skip: 0, limit: 10 })).toEqual(['f4', 'f3', 'f2', 'f1']);
      expect(await names({ skip: 1, limit: 2 })).toEqual(['f3', 'f2']);
      expect(await names({ skip: 0, limit: 2, after: ids[2] })).toEqual(['f2', 'f1']);
    });

    it('counts blob references across files and releases a blob only with its last file', async () => {
      const org = await stores.accounts.createOrg({ name: 'r', tier: 'pro', kind: 'standard' });
      const meta = { orgId: org.id, filename: 'f', purpose: 'vision' as const, contentType: 't' };
      const first = await stores.files.insertUploaded(meta, bytes(7));
      const second = await stores.files.insertUploaded(meta, bytes(7));
      expect(await stores.files.referencedBlobs()).toEqual(new Set([bytes(7).sha256]));
      expect(await stores.files.delete(org.id, first.id)).toMatchObject({ blobUnreferenced: false });
      expect(await stores.files.delete(org.id, second.id)).toMatchObject({ blobUnreferenced: true });
      expect(await stores.files.referencedBlobs()).toEqual(new Set());
    });

    it('completes a pending upload once, and drops expired pending records', async () => {
      const org = await stores.accounts.createOrg({ name: 'q', tier: 'free', kind: 'standard' });
      const meta = { orgId: org.id, filename: 'f', purpose: 'vision' as const, contentType: 't' };
      const pending = await stores.files.insertPending(meta, new Date(Date.now() + 60_000));
      expect(await stores.files.list(org.id, { skip: 0, limit: 10 })).toEqual([]);
      expect(await stores.files.completePending(org.id, pending.id, bytes(3))).toMatchObject({
        status: 'uploaded',
        bytes: 3,
      });
      expect(await stores.files.completePending(org.id, pending.id, bytes(4))).toBeNull();
      await stores.files.insertPending(meta, new Date(Date.now() - 1000));
      expect(await stores.files.deleteExpiredPending(new Date())).toBe(1);
    });
  });
}
