/**
 * The BlobStore contract, run against every implementation (the local folder and an S3-compatible bucket): what
 * files, skills, artifacts and predictions rely on, whichever store holds the bytes.
 */
import fs from 'node:fs';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import type { BlobStore } from '../../src/blobs/types';
import { PayloadTooLargeError } from '../../src/domain/errors';

export interface BlobStoreUnderTest {
  store: BlobStore;
  /** The local folder part files go to while uploads arrive. */
  partsDir: string;
  close(): Promise<void>;
}

const HELLO = {
  bytes: 11,
  md5: '5eb63bbbe01eeed093cb22bb8f5acdc3',
  sha256: 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9',
};

export function describeBlobStoreConformance(name: string, open: () => Promise<BlobStoreUnderTest>): void {
  describe(`blob store conformance: ${name}`, () => {
    let sut: BlobStoreUnderTest;
    beforeEach(async () => {
      sut = await open();
    });
    afterEach(async () => {
      await sut.store.close();
      await sut.close();
    });

    const put = async (text: string): Promise<string> => {
      const staged = await sut.store.stage(Readable.from([Buffer.from(text)]), { maxBytes: 1024 });
      await staged.commit();
      return staged.stored.sha256;
    };
    const parts = (): string[] => (fs.existsSync(sut.partsDir) ? fs.readdirSync(sut.partsDir) : []);

    it('stages bytes out of sight, hashes them, and commits them under their sha256', async () => {
      const staged = await sut.store.stage(Readable.from([Buffer.from('hello '), Buffer.from('world')]), {
        maxBytes: 100,
      });
      expect(staged.stored).toEqual(HELLO);
      expect(await sut.store.read(HELLO.sha256)).toBeNull();
      expect(await sut.store.open(HELLO.sha256)).toBeNull();
      await staged.commit();
      await staged.discard();
      expect((await sut.store.read(HELLO.sha256))?.toString()).toBe('hello world');
      const stream = await sut.store.open(HELLO.sha256);
      expect(stream && (await buffer(stream)).toString()).toBe('hello world');
      expect(parts()).toEqual([]);
    });

    it('keeps one blob for identical content and commits idempotently', async () => {
      const first = await sut.store.stage(Readable.from([Buffer.from('same')]), { maxBytes: 10 });
      const second = await sut.store.stage(Readable.from([Buffer.from('same')]), { maxBytes: 10 });
      await first.commit();
      await first.commit();
      await second.commit();
      expect(second.stored.sha256).toBe(first.stored.sha256);
      expect((await sut.store.read(first.stored.sha256))?.toString()).toBe('same');
      expect(parts()).toEqual([]);
    });

    it('stores empty and binary content byte for byte', async () => {
      const binary = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 31) % 256));
      const staged = await sut.store.stage(Readable.from([binary.subarray(0, 1000), binary.subarray(1000)]), {
        maxBytes: binary.length,
      });
      await staged.commit();
      expect((await sut.store.read(staged.stored.sha256))?.equals(binary)).toBe(true);
      const empty = await sut.store.stage(Readable.from([]), { maxBytes: 10 });
      await empty.commit();
      expect(empty.stored.bytes).toBe(0);
      expect((await sut.store.read(empty.stored.sha256))?.length).toBe(0);
    });

    it('refuses more than maxBytes and keeps nothing', async () => {
      await expect(
        sut.store.stage(Readable.from([Buffer.alloc(60), Buffer.alloc(60)]), { maxBytes: 100 }),
      ).rejects.toBeInstanceOf(PayloadTooLargeError);
      expect(parts()).toEqual([]);
    });

    it('discards a staged part without publishing it', async () => {
      const staged = await sut.store.stage(Readable.from([Buffer.from('x')]), { maxBytes: 10 });
      await staged.discard();
      await staged.discard();
      expect(parts()).toEqual([]);
      expect(await sut.store.read(staged.stored.sha256)).toBeNull();
    });

    it('fails a stage whose source fails, keeping nothing', async () => {
      const failing = new Readable({
        read() {
          this.destroy(new Error('client went away'));
        },
      });
      await expect(sut.store.stage(failing, { maxBytes: 10 })).rejects.toThrow('client went away');
      expect(parts()).toEqual([]);
    });

    it('deletes a blob, and deleting a missing one is not an error', async () => {
      const sha256 = await put('to delete');
      await sut.store.delete(sha256);
      await sut.store.delete(sha256);
      expect(await sut.store.read(sha256)).toBeNull();
    });

    it('sweeps parts of dead writers and unreferenced blobs, keeping live parts and referenced blobs', async () => {
      const kept = await put('kept');
      const dropped = await put('dropped');
      fs.mkdirSync(sut.partsDir, { recursive: true });
      fs.writeFileSync(`${sut.partsDir}/999999999-dead.part`, 'partial');
      fs.writeFileSync(`${sut.partsDir}/${process.pid}-live.part`, 'in progress');

      expect(await sut.store.sweep(new Set([kept]))).toEqual({ partsRemoved: 1, orphansRemoved: 1 });
      expect(await sut.store.read(kept)).not.toBeNull();
      expect(await sut.store.read(dropped)).toBeNull();
      expect(parts()).toEqual([`${process.pid}-live.part`]);
    });

    it('rejects a malformed hash instead of touching other keys', async () => {
      await expect(sut.store.read('../../etc/passwd')).rejects.toThrow('invalid blob hash');
      await expect(sut.store.delete('ab')).rejects.toThrow('invalid blob hash');
    });
  });
}
