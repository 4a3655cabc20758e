/**
 * Secrets never reach the log wherever they sit one level down in a logged object: API keys,
 * passwords and webhook signing secrets in either spelling.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/util/logger.ts';

describe('log redaction', () => {
  it('blanks webhook secrets, API keys and passwords in logged objects', () => {
    const lines: string[] = [];
    const logger = createLogger('info', new Writable({ write: (c: Buffer, _e, done) => (lines.push(c.toString()), done()) }));
    const fields = { webhookSecret: 'whsec_S1', webhook_secret: 'whsec_S2', apiKey: 'sk-S3', api_key: 'sk-S4', password: 'pw-S5' };
    logger.info({ account: fields }, 'account');
    const logged = JSON.parse(lines[0]!) as { account: Record<string, string> };
    expect(logged.account).toEqual(Object.fromEntries(Object.keys(fields).map((k) => [k, '[redacted]'])));
  });
});
