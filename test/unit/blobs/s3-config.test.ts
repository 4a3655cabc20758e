import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.ts';

const base = { SWITCHBOARD_DATA_DIR: '/tmp/sb-s3-config' };

describe('SWITCHBOARD_S3_* (object storage for recordings)', () => {
  it('off by default: recordings stay under the data dir', () => {
    expect(loadConfig(base).s3).toBeUndefined();
  });

  it('a bucket turns it on; an endpoint (path-style), region, retry bounds and AWS keys are read', () => {
    const c = loadConfig({
      ...base,
      SWITCHBOARD_S3_BUCKET: 'calls.example',
      SWITCHBOARD_S3_ENDPOINT: 'http://127.0.0.1:9000/',
      SWITCHBOARD_S3_REGION: 'eu-west-3',
      SWITCHBOARD_S3_RETRY_BASE_MS: '500',
      SWITCHBOARD_S3_RETRY_MAX_MS: '60000',
      AWS_ACCESS_KEY_ID: 'AKID',
      AWS_SECRET_ACCESS_KEY: 'secret',
    });
    expect(c.s3).toEqual({
      bucket: 'calls.example',
      endpoint: 'http://127.0.0.1:9000',
      region: 'eu-west-3',
      retryBaseMs: 500,
      retryMaxMs: 60_000,
      credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret', sessionToken: undefined },
    });
  });

  it('defaults: us-east-1, AWS endpoint, the SDK finds credentials itself, retries from 2 s up to 5 min', () => {
    expect(loadConfig({ ...base, SWITCHBOARD_S3_BUCKET: 'calls' }).s3).toEqual({
      bucket: 'calls',
      endpoint: undefined,
      region: 'us-east-1',
      retryBaseMs: 2000,
      retryMaxMs: 300_000,
      credentials: undefined,
    });
  });

  it('refuses an endpoint without a bucket, half a key pair, a bad bucket name or a non-HTTP endpoint, naming the variable', () => {
    const bad: Array<[Record<string, string>, string]> = [
      [{ SWITCHBOARD_S3_ENDPOINT: 'http://127.0.0.1:9000' }, 'SWITCHBOARD_S3_BUCKET'],
      [{ SWITCHBOARD_S3_BUCKET: 'calls', AWS_ACCESS_KEY_ID: 'AKID' }, 'AWS_ACCESS_KEY_ID'],
      [{ SWITCHBOARD_S3_BUCKET: 'Calls_Bucket' }, 'SWITCHBOARD_S3_BUCKET'],
      [{ SWITCHBOARD_S3_BUCKET: 'calls', SWITCHBOARD_S3_ENDPOINT: 'ftp://store' }, 'SWITCHBOARD_S3_ENDPOINT'],
    ];
    for (const [env, name] of bad) {
      expect(() => loadConfig({ ...base, ...env }), name).toThrow(ConfigError);
      expect(() => loadConfig({ ...base, ...env })).toThrow(name);
    }
  });

  it('a bad value never echoes the secret key', () => {
    try {
      loadConfig({ ...base, SWITCHBOARD_S3_BUCKET: 'calls', AWS_SECRET_ACCESS_KEY: 'very-secret-value' });
      expect.unreachable();
    } catch (err) {
      expect((err as Error).message).not.toContain('very-secret-value');
    }
  });
});
