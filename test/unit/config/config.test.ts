import path from 'node:path';
import { ConfigError, loadConfig } from '../../../src/config/config';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({});
    expect(config.server).toMatchObject({ port: 8080, host: '127.0.0.1', trustProxy: false });
    expect(config.data.dir).toBe(path.resolve('./data'));
    expect(config.data.dbPath).toBe(path.resolve('./data/prism.db'));
    expect(config.auth.singleUser).toBe(false);
    expect(config.limits.maxUploadBytes).toBe(512 * 1024 * 1024);
  });

  it('reads flags and numbers', () => {
    const config = loadConfig({
      PORT: '9000',
      PRISM_SINGLE_USER: 'true',
      PRISM_TRUST_PROXY: '1',
      PRISM_PUBLIC_URL: 'https://x.example/',
    });
    expect(config.server.port).toBe(9000);
    expect(config.auth.singleUser).toBe(true);
    expect(config.server.trustProxy).toBe(1);
    expect(config.server.publicUrl).toBe('https://x.example');
  });

  it('selects the OCR decoder: greedy by default, beam on request, nothing else', () => {
    expect(loadConfig({}).engines.ocrDecoder).toBe('greedy');
    expect(loadConfig({ PRISM_OCR_DECODER: 'beam' }).engines.ocrDecoder).toBe('beam');
    expect(() => loadConfig({ PRISM_OCR_DECODER: 'viterbi' })).toThrow(ConfigError);
  });

  it('selects the recogniser head: the shipped one by default, the receipt head on request, nothing else', () => {
    expect(loadConfig({}).engines.ocrHead).toBe('shipped');
    expect(loadConfig({ PRISM_OCR_HEAD: 'receipts' }).engines.ocrHead).toBe('receipts');
    expect(() => loadConfig({ PRISM_OCR_HEAD: 'chinese' })).toThrow(ConfigError);
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ PORT: '', PRISM_SINGLE_USER: ' ' }).server.port).toBe(8080);
  });

  it('names every bad variable at once', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', PRISM_SINGLE_USER: 'maybe', PRISM_MAX_UPLOAD_BYTES: '-5', PRISM_SECRET: 'short' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const names = (error as ConfigError).problems.map((p) => p.split(':')[0]);
    expect(names.sort()).toEqual(['PORT', 'PRISM_MAX_UPLOAD_BYTES', 'PRISM_SECRET', 'PRISM_SINGLE_USER']);
  });
});

describe('shared backends settings', () => {
  it('keeps everything local by default', () => {
    const config = loadConfig({});
    expect(config.redis).toEqual({ url: undefined, prefix: 'prism:' });
    expect(config.blobs.s3).toBeUndefined();
    expect(config.jobs.leaseMs).toBe(30_000);
  });

  it('reads Redis, the lease and an S3 bucket with static credentials', () => {
    const config = loadConfig({
      PRISM_REDIS_URL: 'redis://cache:6379/2',
      PRISM_REDIS_PREFIX: 'team-a:',
      PRISM_JOB_LEASE_S: '1.5',
      PRISM_BLOB_URL: 's3://media/prism?endpoint=http://minio:9000',
      AWS_ACCESS_KEY_ID: 'AKIA',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_REGION: 'eu-west-1',
    });
    expect(config.redis).toEqual({ url: 'redis://cache:6379/2', prefix: 'team-a:' });
    expect(config.jobs.leaseMs).toBe(1500);
    expect(config.blobs.s3).toEqual({
      bucket: 'media',
      prefix: 'prism/',
      endpoint: 'http://minio:9000',
      region: 'eu-west-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'AKIA', secretAccessKey: 'secret', sessionToken: undefined },
    });
  });

  it('names bad Redis and blob URLs', () => {
    let error: unknown;
    try {
      loadConfig({ PRISM_REDIS_URL: 'http://cache', PRISM_BLOB_URL: 'https://bucket', PRISM_REDIS_PREFIX: 'a b' });
    } catch (e) {
      error = e;
    }
    const problems = (error as ConfigError).problems;
    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual([
      'PRISM_BLOB_URL',
      'PRISM_REDIS_PREFIX',
      'PRISM_REDIS_URL',
    ]);
    expect(problems.find((p) => p.startsWith('PRISM_BLOB_URL'))).toContain('only s3:// URLs');
  });
});
