import { describe, expect, it } from 'vitest';
import { sameMedia } from '../../../../src/call/early-media/same-media.ts';
import { createOffer, processAnswer } from '../../../../src/media/sdp-negotiate.ts';
import { createSdpSession } from '../../../../src/media/sdp-write.ts';

const offer = createOffer({ address: '127.0.0.1', port: 40000 }, createSdpSession('1'));

function answer(o: { version?: number; address?: string; port?: number; pt?: number; direction?: string } = {}): string {
  const pt = o.pt ?? 0;
  const name = pt === 8 ? 'PCMA' : 'PCMU';
  return [
    'v=0',
    `o=carrier 42 ${o.version ?? 1} IN IP4 10.0.0.1`,
    's=-',
    `c=IN IP4 ${o.address ?? '10.0.0.1'}`,
    't=0 0',
    `m=audio ${o.port ?? 30000} RTP/AVP ${pt} 101`,
    `a=rtpmap:${pt} ${name}/8000`,
    'a=rtpmap:101 telephone-event/8000',
    'a=fmtp:101 0-16',
    'a=ptime:20',
    `a=${o.direction ?? 'sendrecv'}`,
    '',
  ].join('\r\n');
}

describe('sameMedia (the 200 OK against the early media)', () => {
  const early = processAnswer(answer(), offer.offered);

  it('the same stream in other SDP text (o= version) is the same media', () => {
    expect(sameMedia(early, processAnswer(answer({ version: 2 }), offer.offered))).toBe(true);
  });

  it('another address, port, codec or direction is not', () => {
    expect(sameMedia(early, processAnswer(answer({ address: '10.0.0.2' }), offer.offered))).toBe(false);
    expect(sameMedia(early, processAnswer(answer({ port: 30002 }), offer.offered))).toBe(false);
    expect(sameMedia(early, processAnswer(answer({ pt: 8 }), offer.offered))).toBe(false);
    expect(sameMedia(early, processAnswer(answer({ direction: 'sendonly' }), offer.offered))).toBe(false);
  });
});
