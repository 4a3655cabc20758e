import { describe, expect, it } from 'vitest';
import { header, type SipRequest, type SipResponse } from '../../../src/sip/message.ts';
import { MAX_PRACK_AUTH, sendPrack, type PrackSenderDeps } from '../../../src/sip/prack-sender.ts';
import { buildResponse } from '../../../src/sip/transaction-response.ts';

const PRACK: SipRequest = {
  kind: 'request',
  method: 'PRACK',
  uri: 'sip:carrier@192.0.2.1',
  version: 'SIP/2.0',
  headers: [
    { name: 'via', value: 'SIP/2.0/UDP 198.51.100.1;branch=z9hG4bK1' },
    { name: 'from', value: '<sip:a@198.51.100.1>;tag=a' },
    { name: 'to', value: '<sip:b@192.0.2.1>;tag=b' },
    { name: 'call-id', value: 'c1' },
    { name: 'cseq', value: '2 PRACK' },
    { name: 'rack', value: '5 1 INVITE' },
  ],
  body: Buffer.alloc(0),
};

const challenge = (req: SipRequest, status: 401 | 407): SipResponse =>
  buildResponse(req, status, { headers: [{ name: status === 401 ? 'www-authenticate' : 'proxy-authenticate', value: 'Digest realm="c", nonce="n1"' }] });

/** A far end answering from `script` in turn; records what was sent. */
function deps(script: Array<(req: SipRequest) => SipResponse>, over: Partial<PrackSenderDeps> = {}) {
  const sent: SipRequest[] = [];
  let seq = 2;
  const d: PrackSenderDeps = {
    sendRequest: (req) => {
      sent.push(req);
      return Promise.resolve(script[sent.length - 1]!(req));
    },
    credentials: (c) => `Digest username="u", realm="c", nonce="n1", uri="${c.uri}", response="x-${c.method}"`,
    nextSeq: () => ++seq,
    done: () => false,
    ...over,
  };
  return { d, sent };
}

describe('sendPrack: a challenged PRACK', () => {
  it('407: resent once with Proxy-Authorization and the next CSeq', async () => {
    const { d, sent } = deps([(r) => challenge(r, 407), (r) => buildResponse(r, 200)]);
    expect((await sendPrack(d, PRACK)).status).toBe(200);
    expect(sent).toHaveLength(2);
    expect(header(sent[1]!, 'proxy-authorization')).toContain('response="x-PRACK"');
    expect(header(sent[1]!, 'cseq')).toBe('3 PRACK');
    expect(header(sent[1]!, 'rack')).toBe('5 1 INVITE');
  });

  it('401: Authorization', async () => {
    const { d, sent } = deps([(r) => challenge(r, 401), (r) => buildResponse(r, 200)]);
    await sendPrack(d, PRACK);
    expect(header(sent[1]!, 'authorization')).toBeDefined();
  });

  it('answers each challenge once and gives up after MAX_PRACK_AUTH answers', async () => {
    const { d, sent } = deps(Array.from({ length: 5 }, () => (r: SipRequest) => challenge(r, 407)));
    expect((await sendPrack(d, PRACK)).status).toBe(407);
    expect(sent).toHaveLength(1 + MAX_PRACK_AUTH);
    expect(sent.map((r) => header(r, 'cseq'))).toEqual(['2 PRACK', '3 PRACK', '4 PRACK']);
  });

  it('no credentials, a finished INVITE, or another status: not resent', async () => {
    for (const over of [{ credentials: undefined }, { done: () => true }]) {
      const { d, sent } = deps([(r) => challenge(r, 407), (r) => buildResponse(r, 200)], over);
      expect((await sendPrack(d, PRACK)).status).toBe(407);
      expect(sent).toHaveLength(1);
    }
    const { d, sent } = deps([(r) => buildResponse(r, 481)]);
    expect((await sendPrack(d, PRACK)).status).toBe(481);
    expect(sent).toHaveLength(1);
  });
});
