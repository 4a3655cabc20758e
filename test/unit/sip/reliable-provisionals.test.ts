import { describe, expect, it } from 'vitest';
import type { SipResponse } from '../../../src/sip/message.ts';
import { lists100rel, parseRAck, ReliableProvisionals } from '../../../src/sip/reliable-provisionals.ts';

const T1 = 500;

function res(status: number, sdp = false): SipResponse {
  return { kind: 'response', version: 'SIP/2.0', status, reason: 'x', headers: [], body: Buffer.from(sdp ? 'v=0\r\n' : '') };
}

function core(first = 1000): ReliableProvisionals {
  return new ReliableProvisionals({ t1Ms: T1, inviteCseq: 7, firstRSeq: first });
}

describe('RAck and option tags', () => {
  it('parses RAck and refuses malformed values', () => {
    expect(parseRAck('776656 1 INVITE')).toEqual({ rseq: 776656, cseq: 1, method: 'INVITE' });
    expect(parseRAck('  5  7 invite ')).toEqual({ rseq: 5, cseq: 7, method: 'INVITE' });
    expect(parseRAck('5 INVITE')).toBeUndefined();
    expect(parseRAck(undefined)).toBeUndefined();
    expect(parseRAck('x 1 INVITE')).toBeUndefined();
  });

  it('finds 100rel in comma lists and repeated headers', () => {
    expect(lists100rel(['timer, 100REL'])).toBe(true);
    expect(lists100rel(['timer', '100rel'])).toBe(true);
    expect(lists100rel(['timer', 'replaces'])).toBe(false);
  });
});

describe('ReliableProvisionals (RFC 3262 §3, manual clock)', () => {
  it('resends at T1, 2T1, 4T1… until the PRACK, and numbers responses from the first RSeq', () => {
    const c = core(41);
    const rseq = c.claim();
    expect(rseq).toBe(41);
    const first = c.send(res(180), rseq, 0);
    expect(first).toEqual([{ type: 'send', response: expect.anything(), rseq: 41, retransmission: false }]);
    const sentAt: number[] = [];
    for (let now = 0; now < 3000; now += 10) {
      if (c.wakeAtMs !== undefined && now >= c.wakeAtMs) for (const a of c.tick(now)) if (a.type === 'send') sentAt.push(now);
    }
    expect(sentAt).toEqual([500, 1500]); // T1 after the send, then 2*T1 later; the next at 3500
    expect(c.prack({ rseq: 41, cseq: 7, method: 'INVITE' }, 3000)).toEqual({ status: 200, actions: [] });
    expect(c.wakeAtMs).toBeUndefined();
    expect(c.claim()).toBe(42);
  });

  it('a PRACK with the wrong RSeq, CSeq or method is 481 and stops nothing', () => {
    const c = core();
    c.send(res(183, true), c.claim(), 0);
    expect(c.prack({ rseq: 999, cseq: 7, method: 'INVITE' }, 10).status).toBe(481);
    expect(c.prack({ rseq: 1000, cseq: 8, method: 'INVITE' }, 10).status).toBe(481);
    expect(c.prack({ rseq: 1000, cseq: 7, method: 'BYE' }, 10).status).toBe(481);
    expect(c.prack(undefined, 10).status).toBe(481);
    expect(c.pending).toBe(true);
    expect(c.prack({ rseq: 1000, cseq: 7, method: 'INVITE' }, 10).status).toBe(200);
    // The same PRACK again (a new transaction) is still acknowledged.
    expect(c.prack({ rseq: 1000, cseq: 7, method: 'INVITE' }, 20).status).toBe(200);
  });

  it('gives up after 64*T1 without a PRACK', () => {
    const c = core();
    c.send(res(180), c.claim(), 0);
    let timeout: number | undefined;
    for (let i = 0; i < 50 && c.wakeAtMs !== undefined; i++) {
      const at = c.wakeAtMs;
      for (const a of c.tick(at)) if (a.type === 'timeout') timeout = at;
    }
    expect(timeout).toBe(64 * T1);
    expect(c.wakeAtMs).toBeUndefined();
  });

  it('keeps one outstanding at a time: the second goes out when the first is PRACKed', () => {
    const c = core(1);
    c.send(res(180), c.claim(), 0);
    expect(c.send(res(183, true), c.claim(), 5)).toEqual([]);
    const next = c.prack({ rseq: 1, cseq: 7, method: 'INVITE' }, 100);
    expect(next.status).toBe(200);
    expect(next.actions).toEqual([{ type: 'send', response: expect.objectContaining({ status: 183 }), rseq: 2, retransmission: false }]);
    expect(c.wakeAtMs).toBe(100 + T1);
  });

  it('a 2xx waits only for an unacknowledged provisional that carried SDP', () => {
    const plain = core();
    plain.send(res(180), plain.claim(), 0);
    expect(plain.mayAnswer).toBe(true);
    const withSdp = core();
    withSdp.send(res(183, true), withSdp.claim(), 0);
    expect(withSdp.mayAnswer).toBe(false);
    withSdp.prack({ rseq: 1000, cseq: 7, method: 'INVITE' }, 50);
    expect(withSdp.mayAnswer).toBe(true);
  });

  it('finish() stops resends and refuses more', () => {
    const c = core();
    c.send(res(180), c.claim(), 0);
    c.finish();
    expect(c.wakeAtMs).toBeUndefined();
    expect(c.tick(10_000)).toEqual([]);
    expect(c.send(res(183), c.claim(), 0)).toEqual([]);
  });
});
