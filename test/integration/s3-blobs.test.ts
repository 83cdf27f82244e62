/**
 * The real app with its bytes on an S3-compatible bucket (`PRISM_BLOB_URL`, s3rver on loopback: no real S3 is
 * reachable here): uploads land in the bucket and not in the data folder, public links and the presigned-upload
 * flow keep working, and a delete removes the object.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { S3Client, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { call, listTree, startTestApp, uploadFile, type TestApp } from '../helpers/test-app';
import { startS3Server, type TestS3Server } from '../helpers/s3-server';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('blobs on S3', () => {
  let s3: TestS3Server;
  let app: TestApp;
  let client: S3Client;
  let key: string;

  beforeAll(async () => {
    s3 = await startS3Server();
    app = await startTestApp({ PRISM_BLOB_URL: s3.blobUrl('install-a'), ...s3.env });
    key = await app.createKey('acme', 'pro');
    client = new S3Client({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
  });
  afterAll(async () => {
    client.destroy();
    await app.close();
    await s3.close();
  });

  const objectKeys = async (): Promise<string[]> => {
    const listed = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: 'install-a/' }));
    return (listed.Contents ?? []).map((o) => o.Key ?? '').sort();
  };

  it('uploads into the bucket, serves the public link, and deletes the object with the last file', async () => {
    const res = await uploadFile(app.url, key, 'bytes in a bucket', { filename: 'a.txt' });
    expect(res.status).toBe(201);
    const file = (await res.json()) as { id: string; public_url: string };
    const hash = sha256('bytes in a bucket');
    expect(await objectKeys()).toContain(`install-a/sha256/${hash.slice(0, 2)}/${hash.slice(2, 4)}/${hash}`);
    expect(listTree(path.join(app.dataDir, 'blobs')).filter((p) => p.startsWith('sha256'))).toEqual([]);

    const content = await fetch(file.public_url);
    expect(content.status).toBe(200);
    expect(await content.text()).toBe('bytes in a bucket');

    expect((await call(`${app.url}/v1/files/${file.id}`, { key, method: 'DELETE' })).status).toBe(200);
    expect((await objectKeys()).filter((k) => k.endsWith(hash))).toEqual([]);
  });

  it('runs the presigned-upload flow into the bucket', async () => {
    const created = await call(`${app.url}/v1/files/presigned-url`, {
      key,
      json: { filename: 'report.txt', purpose: 'assistants', expiration: 600 },
    });
    const presigned = (await created.json()) as { id: string; url: string };
    const put = await fetch(presigned.url, { method: 'PUT', body: 'put through a presigned URL' });
    expect(put.status).toBe(200);
    const verified = await call(`${app.url}/v1/files/verify-upload/${presigned.id}`, { key });
    expect(verified.status).toBe(200);
    expect((await objectKeys()).some((k) => k.endsWith(sha256('put through a presigned URL')))).toBe(true);
  });
});
