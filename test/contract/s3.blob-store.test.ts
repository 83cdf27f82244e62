/**
 * Runs the blob store conformance suite against the S3 store on an S3 wire-protocol server on loopback (s3rver;
 * no real S3 is reachable here), plus what only S3 has: key prefixes, young orphans kept.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { parseS3BlobUrl } from '../../src/blobs/s3-location';
import { createS3BlobStore, type S3BlobStoreOptions } from '../../src/backend/s3/blob-store';
import { startS3Server, type TestS3Server } from '../helpers/s3-server';
import { describeBlobStoreConformance } from './blob-store.conformance';

let s3: TestS3Server;
beforeAll(async () => {
  s3 = await startS3Server();
});
afterAll(() => s3.close());

let run = 0;
function options(extra: Partial<S3BlobStoreOptions> = {}): S3BlobStoreOptions & { dir: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-s3-parts-'));
  run += 1;
  return {
    ...parseS3BlobUrl(s3.blobUrl(`run-${process.pid}-${run}`)),
    credentials: { accessKeyId: s3.env.AWS_ACCESS_KEY_ID, secretAccessKey: s3.env.AWS_SECRET_ACCESS_KEY },
    partsDir: path.join(dir, 'parts'),
    orphanMinAgeMs: 0,
    dir,
    ...extra,
  };
}

describeBlobStoreConformance('S3 (s3rver)', async () => {
  const o = options();
  return {
    store: createS3BlobStore(o),
    partsDir: o.partsDir,
    close: async () => fs.rmSync(o.dir, { recursive: true, force: true }),
  };
});

describe('S3 blob store', () => {
  it('keeps each prefix apart and leaves young unreferenced objects to a later sweep', async () => {
    const a = options({ orphanMinAgeMs: 60_000 });
    const b = options();
    const storeA = createS3BlobStore(a);
    const storeB = createS3BlobStore(b);
    try {
      const staged = await storeA.stage(Readable.from([Buffer.from('young')]), { maxBytes: 100 });
      await staged.commit();
      expect(await storeB.read(staged.stored.sha256)).toBeNull();
      expect(await storeB.sweep(new Set())).toEqual({ partsRemoved: 0, orphansRemoved: 0 });
      expect(await storeA.sweep(new Set())).toEqual({ partsRemoved: 0, orphansRemoved: 0 });
      expect((await storeA.read(staged.stored.sha256))?.toString()).toBe('young');
    } finally {
      await storeA.close();
      await storeB.close();
      fs.rmSync(a.dir, { recursive: true, force: true });
      fs.rmSync(b.dir, { recursive: true, force: true });
    }
  });
});

describe('PRISM_BLOB_URL', () => {
  it('reads bucket, prefix, endpoint, region and path style', () => {
    expect(parseS3BlobUrl('s3://media/prism?endpoint=http://minio:9000&region=eu-west-1')).toEqual({
      bucket: 'media',
      prefix: 'prism/',
      endpoint: 'http://minio:9000',
      region: 'eu-west-1',
      forcePathStyle: true,
    });
    expect(parseS3BlobUrl('s3://media')).toEqual({
      bucket: 'media',
      prefix: '',
      endpoint: undefined,
      region: 'us-east-1',
      forcePathStyle: false,
    });
    expect(parseS3BlobUrl('s3://media/a/b/?path_style=true').forcePathStyle).toBe(true);
  });

  it('names what is wrong', () => {
    expect(() => parseS3BlobUrl('https://media')).toThrow('only s3:// URLs');
    expect(() => parseS3BlobUrl('s3://Bad_Bucket')).toThrow('not a valid bucket name');
    expect(() => parseS3BlobUrl('s3://media?endpoint=ftp://x')).toThrow('endpoint must be');
    expect(() => parseS3BlobUrl('s3://media?path_style=maybe')).toThrow('path_style');
  });
});
