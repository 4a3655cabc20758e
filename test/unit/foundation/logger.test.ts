import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/util/logger.ts';

describe('logger', () => {
  it('redacts keys, passwords and tokens wherever they sit', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const log = createLogger('info', sink);
    log.info({ req: { headers: { authorization: 'Bearer sb_live_secret' } } }, 'request');
    log.info({ trunk: { sip_password: 'hunter2', sip_username: 'alice' } }, 'trunk');
    log.info({ sender: { auth_token: 'tw-token' }, tool: { calendar_api_key: 'cal-key' } }, 'more');
    const text = lines.join('');
    for (const secret of ['sb_live_secret', 'hunter2', 'tw-token', 'cal-key']) expect(text).not.toContain(secret);
    expect(text).toContain('alice');
    expect(text).toContain('[redacted]');
  });

  it('names the node on every line when given one (SWITCHBOARD_NODE_ID), and nothing extra when not', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    createLogger('info', sink, 'node-a').child({ part: 'call' }).info({ callUuid: 'u-1' }, 'call started');
    createLogger('info', sink).info('plain');
    expect(JSON.parse(lines[0]!)).toMatchObject({ node: 'node-a', service: 'switchboard', msg: 'call started' });
    expect(JSON.parse(lines[1]!)).not.toHaveProperty('node');
  });
});
