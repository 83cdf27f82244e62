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
