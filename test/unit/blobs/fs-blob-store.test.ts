import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { createFsBlobStore } from '../../../src/backend/local/blob-store';
import { PayloadTooLargeError } from '../../../src/domain/errors';

describe('fs blob store', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-blobs-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const files = () =>
    (fs.readdirSync(dir, { recursive: true }) as string[]).filter((p) => fs.statSync(path.join(dir, p)).isFile());

  it('stages bytes out of sight, hashes them and commits them under their sha256', async () => {
    const sut = createFsBlobStore(dir);
    const staged = await sut.stage(Readable.from([Buffer.from('hello '), Buffer.from('world')]), { maxBytes: 100 });
    expect(staged.stored).toEqual({
      bytes: 11,
      md5: '5eb63bbbe01eeed093cb22bb8f5acdc3',
      sha256: 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9',
    });
    expect(await sut.read(staged.stored.sha256)).toBeNull();
    await staged.commit();
    await staged.discard();
    expect((await sut.read(staged.stored.sha256))?.toString()).toBe('hello world');
    expect(files()).toEqual([path.join('sha256', 'b9', '4d', staged.stored.sha256)]);
  });

  it('refuses more than maxBytes and keeps nothing', async () => {
    const sut = createFsBlobStore(dir);
    await expect(
      sut.stage(Readable.from([Buffer.alloc(60), Buffer.alloc(60)]), { maxBytes: 100 }),
    ).rejects.toBeInstanceOf(PayloadTooLargeError);
    expect(files()).toEqual([]);
  });

  it('discards a staged part', async () => {
    const sut = createFsBlobStore(dir);
    const staged = await sut.stage(Readable.from([Buffer.from('x')]), { maxBytes: 10 });
    await staged.discard();
    expect(files()).toEqual([]);
  });

  it('sweeps parts of dead writers and unreferenced blobs, keeping live parts and referenced blobs', async () => {
    const sut = createFsBlobStore(dir);
    const kept = await sut.stage(Readable.from([Buffer.from('kept')]), { maxBytes: 10 });
    await kept.commit();
    const dropped = await sut.stage(Readable.from([Buffer.from('dropped')]), { maxBytes: 10 });
    await dropped.commit();
    fs.writeFileSync(path.join(dir, 'tmp', '999999999-dead.part'), 'partial');
    fs.writeFileSync(path.join(dir, 'tmp', `${process.pid}-live.part`), 'in progress');

    expect(await sut.sweep(new Set([kept.stored.sha256]))).toEqual({ partsRemoved: 1, orphansRemoved: 1 });
    expect(await sut.read(kept.stored.sha256)).not.toBeNull();
    expect(await sut.read(dropped.stored.sha256)).toBeNull();
    expect(fs.readdirSync(path.join(dir, 'tmp'))).toEqual([`${process.pid}-live.part`]);
  });

  it('rejects a malformed hash instead of touching other paths', async () => {
    const sut = createFsBlobStore(dir);
    await expect(sut.read('../../etc/passwd')).rejects.toThrow('invalid blob hash');
  });
});
