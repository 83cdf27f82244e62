/**
 * BlobStore on an S3-compatible bucket (AWS S3, MinIO, Ceph RGW, Garage), for replicas that share no disk.
 *
 * Keys: `<prefix>sha256/ab/cd/<hash>`, the local folder's layout. The hash is known only after the last byte, so
 * `stage` writes a local part file first (part-file.ts: hashed, size-limited, fsynced) and `commit` uploads it with
 * one PutObject of known length. S3 makes an object visible whole or not at all, so a crash leaves at most a local
 * part, which the start-up sweep removes. Identical content is uploaded once (HeadObject first).
 *
 * Downloads go through Prism, not to the bucket: its signed links (public file URLs, presigned uploads, skill
 * downloads) keep working unchanged, and every download keeps the headers Prism sets (Content-Security-Policy,
 * nosniff, the disposition) that an S3 presigned GET cannot carry, with the bucket private and possibly unreachable
 * from clients.
 *
 * The sweep of unreferenced objects skips objects younger than `orphanMinAgeMs`: with several replicas, another
 * replica may have uploaded a blob whose record it has not written yet. Checksums are computed only when an
 * operation requires them (`WHEN_REQUIRED`): the SDK's default CRC headers break several S3-compatible servers.
 */
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { sweepDeadParts, writePartFile } from '../../blobs/part-file';
import type { S3Location } from '../../blobs/s3-location';
import type { BlobStore, StagedBlob } from '../../blobs/types';

const HASH_PATTERN = /^[0-9a-f]{64}$/;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface S3BlobStoreOptions extends S3Location {
  /** Static credentials; unset: the SDK's default chain (instance role, shared config files). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string | undefined } | undefined;
  /** Local folder for part files while uploads arrive. */
  partsDir: string;
  /** Unreferenced objects younger than this survive a sweep (default one day). */
  orphanMinAgeMs?: number;
}

export function createS3BlobStore(options: S3BlobStoreOptions): BlobStore {
  const { bucket, prefix } = options;
  const orphanMinAgeMs = options.orphanMinAgeMs ?? DAY_MS;
  const client = new S3Client({
    region: options.region,
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    forcePathStyle: options.forcePathStyle,
    ...(options.credentials ? { credentials: staticCredentials(options.credentials) } : {}),
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const blobsPrefix = `${prefix}sha256/`;

  const keyOf = (sha256: string): string => {
    if (!HASH_PATTERN.test(sha256)) throw new Error('invalid blob hash');
    return `${blobsPrefix}${sha256.slice(0, 2)}/${sha256.slice(2, 4)}/${sha256}`;
  };

  async function exists(key: string): Promise<boolean> {
    try {
      await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  async function get(sha256: string): Promise<Readable | null> {
    try {
      const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: keyOf(sha256) }));
      return out.Body instanceof Readable ? out.Body : null;
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async function stage(source: Readable, stageOptions: { maxBytes: number }): Promise<StagedBlob> {
    const part = await writePartFile(options.partsDir, source, stageOptions.maxBytes);
    const key = keyOf(part.stored.sha256);
    let committed = false;
    return {
      stored: part.stored,
      async commit() {
        if (committed) return;
        if (!(await exists(key))) {
          await client.send(
            new PutObjectCommand({
              Bucket: bucket,
              Key: key,
              Body: createReadStream(part.path),
              ContentLength: part.stored.bytes,
              ContentType: 'application/octet-stream',
            }),
          );
        }
        committed = true;
        await fs.rm(part.path, { force: true });
      },
      async discard() {
        if (!committed) await fs.rm(part.path, { force: true });
      },
    };
  }

  async function read(sha256: string): Promise<Buffer | null> {
    const stream = await get(sha256);
    if (!stream) return null;
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  async function sweep(referenced: Set<string>): Promise<{ partsRemoved: number; orphansRemoved: number }> {
    const partsRemoved = await sweepDeadParts(options.partsDir);
    const cutoff = Date.now() - orphanMinAgeMs;
    let orphansRemoved = 0;
    let token: string | undefined;
    do {
      const page = await client.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: blobsPrefix, ContinuationToken: token }),
      );
      for (const object of page.Contents ?? []) {
        const name = object.Key?.slice(object.Key.lastIndexOf('/') + 1) ?? '';
        if (!HASH_PATTERN.test(name) || referenced.has(name)) continue;
        if (!object.LastModified || object.LastModified.getTime() > cutoff) continue;
        await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: object.Key }));
        orphansRemoved += 1;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return { partsRemoved, orphansRemoved };
  }

  return {
    stage,
    open: get,
    read,
    async delete(sha256) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: keyOf(sha256) }));
    },
    sweep,
    close() {
      client.destroy();
    },
  };
}

function staticCredentials(c: NonNullable<S3BlobStoreOptions['credentials']>): {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
} {
  const base = { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey };
  return c.sessionToken ? { ...base, sessionToken: c.sessionToken } : base;
}

function isNotFound(error: unknown): boolean {
  if (!(error instanceof S3ServiceException)) return false;
  return error.name === 'NotFound' || error.name === 'NoSuchKey' || error.$metadata.httpStatusCode === 404;
}
