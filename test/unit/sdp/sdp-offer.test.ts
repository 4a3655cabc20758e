import { describe, expect, it } from 'vitest';
import { resolveCodecs } from '../../../src/media/codecs/codecs.ts';
import { parseSdp, SdpNegotiationError } from '../../../src/media/sdp.ts';
import { answerOffer, createOffer, processAnswer, type LocalMedia } from '../../../src/media/sdp-negotiate.ts';
import { createSdpSession } from '../../../src/media/sdp-write.ts';

const local: LocalMedia = { address: '10.0.0.5', port: 40000 };

function answer(lines: string[]): string {
  return ['v=0', 'o=- 99 1 IN IP4 198.51.100.7', 's=-', 'c=IN IP4 198.51.100.20', 't=0 0', ...lines].join('\r\n') + '\r\n';
}

describe('createOffer', () => {
  it('lists our codecs in our preference order plus telephone-event', () => {
    const { offerSdp, offered } = createOffer(local, createSdpSession('55'));
    const parsed = parseSdp(offerSdp);
    const m = parsed.media[0]!;
    expect(m.formatList).toBe('111 9 0 8 101');
    expect(m.formats.map((f) => `${f.name}/${f.clockRate}/${f.channels}`)).toEqual([
      'opus/48000/2', 'G722/8000/1', 'PCMU/8000/1', 'PCMA/8000/1', 'telephone-event/8000/1',
    ]);
    expect(m.formats[0]!.fmtp).toBe('minptime=10;useinbandfec=1');
    expect([m.address, m.port, m.direction, m.ptimeMs]).toEqual(['10.0.0.5', 40000, 'sendrecv', 20]);
    expect(parsed.origin).toMatchObject({ sessionId: '55', sessionVersion: '1' });
    expect(offered.dtmfPayloadType).toBe(101);
  });

  it('honours a configured codec list, direction and RTCP port', () => {
    const { offerSdp } = createOffer(
      { ...local, codecs: resolveCodecs(['pcma']), direction: 'sendonly', rtcpPort: 40011, ptimeMs: 30 },
      createSdpSession('1'),
    );
    const m = parseSdp(offerSdp).media[0]!;
    expect(m.formatList).toBe('8 101');
    expect([m.direction, m.rtcpPort, m.ptimeMs]).toEqual(['sendonly', 40011, 30]);
  });

  it('moves telephone-event off a payload type a codec already uses', () => {
    const { offered } = createOffer({ ...local, dtmfPayloadType: 111 }, createSdpSession('1'));
    expect(offered.dtmfPayloadType).toBe(112);
  });

  it('bumps the version on a changed re-offer (hold) but not on a refresh', () => {
    const first = createOffer(local, createSdpSession('9', 3));
    const refresh = createOffer(local, first.session);
    expect(refresh.offerSdp).toBe(first.offerSdp);
    const hold = createOffer({ ...local, direction: 'sendonly' }, refresh.session);
    expect(parseSdp(hold.offerSdp).origin.sessionVersion).toBe('4');
  });

  it('is answerable by our own answerer (round trip)', () => {
    const { offerSdp, offered } = createOffer(local, createSdpSession('1'));
    const a = answerOffer(offerSdp, { address: '10.0.0.9', port: 50000, codecs: resolveCodecs(['g722', 'pcmu']) }, createSdpSession('2'));
    expect(a.codec.name).toBe('G722');
    const n = processAnswer(a.answerSdp, offered);
    expect([n.codec.name, n.payloadType, n.dtmfPayloadType, n.remote.address, n.remote.port]).toEqual(['G722', 9, 101, '10.0.0.9', 50000]);
  });
});

describe('processAnswer', () => {
  const { offered } = createOffer(local, createSdpSession('1'));

  it('picks the first answered codec, remote address, RTCP port and DTMF type', () => {
    const n = processAnswer(answer(['m=audio 30000 RTP/AVP 0 101', 'a=rtpmap:101 telephone-event/8000', 'a=rtcp:30011', 'a=ptime:20']), offered);
    expect(n.codec.name).toBe('PCMU');
    expect(n.payloadType).toBe(0);
    expect(n.dtmfPayloadType).toBe(101);
    expect(n.remote).toEqual({ address: '198.51.100.20', port: 30000, rtcpPort: 30011 });
    expect([n.direction, n.remoteHold, n.ptimeMs]).toEqual(['sendrecv', false, 20]);
  });

  it('matches by name when the answerer renumbers a dynamic type', () => {
    const n = processAnswer(answer(['m=audio 30000 RTP/AVP 96', 'a=rtpmap:96 opus/48000/2', 'a=fmtp:96 useinbandfec=1']), offered);
    expect([n.codec.name, n.payloadType, n.remoteFmtp]).toEqual(['opus', 96, 'useinbandfec=1']);
    expect(n.dtmfPayloadType).toBeUndefined();
  });

  it('mirrors the answer direction and detects hold', () => {
    const n = processAnswer(answer(['m=audio 30000 RTP/AVP 8', 'a=recvonly']), offered);
    expect([n.direction, n.remoteHold]).toEqual(['sendonly', false]);
    const held = processAnswer(answer(['m=audio 30000 RTP/AVP 8', 'a=sendonly']), offered);
    expect([held.direction, held.remoteHold]).toEqual(['recvonly', true]);
  });

  it('takes the answer\'s ptime when the codec allows it', () => {
    expect(processAnswer(answer(['m=audio 30000 RTP/AVP 8', 'a=ptime:30']), offered).ptimeMs).toBe(30);
  });

  it('fails on a rejected stream or a codec we never offered', () => {
    expect(() => processAnswer(answer(['m=audio 0 RTP/AVP 0']), offered)).toThrow(expect.objectContaining({ code: 'STREAM_REJECTED' }));
    expect(() => processAnswer(answer(['m=audio 30000 RTP/AVP 18']), offered)).toThrow(SdpNegotiationError);
  });
});
