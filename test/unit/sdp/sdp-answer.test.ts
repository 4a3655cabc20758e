import { describe, expect, it } from 'vitest';
import { resolveCodecs } from '../../../src/media/codecs/codecs.ts';
import { parseSdp, SdpNegotiationError } from '../../../src/media/sdp.ts';
import { answerOffer, type LocalMedia } from '../../../src/media/sdp-negotiate.ts';
import { createSdpSession } from '../../../src/media/sdp-write.ts';
import { audioVideoOffer, baresipOffer, carrierOffer, g729OnlyOffer, pcmaOnlyOffer, withLines } from './fixtures.ts';

const local: LocalMedia = { address: '10.0.0.5', port: 40000 };
const session = createSdpSession('7421', 1);

function answerLines(sdp: string): string[] {
  return sdp.trimEnd().split('\r\n');
}

describe('answerOffer: negotiation table', () => {
  const table = [
    { name: 'baresip opus+G722+G711', offer: baresipOffer, codec: 'opus', pt: 111, dtmf: 101, remote: ['192.0.2.10', 10002, 10003], mline: 'm=audio 40000 RTP/AVP 111 9 0 8 101' },
    { name: 'carrier PCMU/PCMA', offer: carrierOffer, codec: 'PCMU', pt: 0, dtmf: 100, remote: ['198.51.100.20', 21860, 21865], mline: 'm=audio 40000 RTP/AVP 0 8 100' },
    { name: 'PCMA only', offer: pcmaOnlyOffer, codec: 'PCMA', pt: 8, dtmf: 101, remote: ['203.0.113.5', 14036, 14037], mline: 'm=audio 40000 RTP/AVP 8 101' },
    { name: 'linphone audio+video', offer: audioVideoOffer, codec: 'opus', pt: 96, dtmf: 101, remote: ['192.0.2.44', 7078, 7079], mline: 'm=audio 40000 RTP/AVP 96 0 8 101' },
  ] as const;

  for (const row of table) {
    it(row.name, () => {
      const a = answerOffer(row.offer, local, session);
      expect(a.codec.name).toBe(row.codec);
      expect(a.payloadType).toBe(row.pt);
      expect(a.dtmfPayloadType).toBe(row.dtmf);
      expect([a.remote.address, a.remote.port, a.remote.rtcpPort]).toEqual(row.remote);
      expect(a.direction).toBe('sendrecv');
      expect(a.remoteHold).toBe(false);
      expect(a.ptimeMs).toBe(20);
      expect(answerLines(a.answerSdp)).toContain(row.mline);
    });
  }

  it('writes a complete answer in the caller\'s order with their payload types', () => {
    const a = answerOffer(baresipOffer, local, session);
    expect(answerLines(a.answerSdp)).toEqual([
      'v=0',
      'o=switchboard 7421 1 IN IP4 10.0.0.5',
      's=Switchboard',
      'c=IN IP4 10.0.0.5',
      't=0 0',
      'm=audio 40000 RTP/AVP 111 9 0 8 101',
      'a=rtpmap:111 opus/48000/2',
      'a=fmtp:111 minptime=10;useinbandfec=1',
      'a=rtpmap:9 G722/8000',
      'a=rtpmap:0 PCMU/8000',
      'a=rtpmap:8 PCMA/8000',
      'a=rtpmap:101 telephone-event/8000',
      'a=fmtp:101 0-15',
      'a=ptime:20',
      'a=sendrecv',
    ]);
    expect([...a.receiveCodecs].map(([pt, c]) => `${pt}:${c.name}`)).toEqual(['111:opus', '9:G722', '0:PCMU', '8:PCMA']);
    expect(a.remoteFmtp).toBe('stereo=1;sprop-stereo=1');
  });

  it('uses the caller\'s preference even when ours differs, restricted to what we allow', () => {
    const g711Only: LocalMedia = { ...local, codecs: resolveCodecs(['pcma', 'pcmu']) };
    const a = answerOffer(baresipOffer, g711Only, session);
    expect(a.codec.name).toBe('PCMU'); // baresip lists PCMU before PCMA
    expect(answerLines(a.answerSdp)).toContain('m=audio 40000 RTP/AVP 0 8 101');
  });

  it('can answer with the chosen codec only', () => {
    const a = answerOffer(baresipOffer, { ...local, singleCodecAnswer: true }, session);
    expect(answerLines(a.answerSdp)).toContain('m=audio 40000 RTP/AVP 111 101');
    expect([...a.receiveCodecs.keys()]).toEqual([111]);
  });

  it('rejects an offer with only G.729 with 488 / Warning 305', () => {
    let error: unknown;
    try {
      answerOffer(g729OnlyOffer, local, session);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SdpNegotiationError);
    const e = error as SdpNegotiationError;
    expect([e.sipStatus, e.code, e.warningCode]).toEqual([488, 'NO_COMMON_CODEC', 305]);
  });

  it('rejects an offer without audio, or with only secure RTP, as 488', () => {
    const videoOnly = withLines(audioVideoOffer, { 'm=audio 7078': 'm=audio 0' });
    expect(() => answerOffer(videoOnly, local, session)).toThrow(expect.objectContaining({ code: 'NO_AUDIO_STREAM', sipStatus: 488 }));
    const srtp = withLines(pcmaOnlyOffer, { 'RTP/AVP': 'RTP/SAVP' });
    expect(() => answerOffer(srtp, local, session)).toThrow(SdpNegotiationError);
  });

  it('rejects unreadable SDP as 400', () => {
    expect(() => answerOffer('hello', local, session)).toThrow(expect.objectContaining({ sipStatus: 400, code: 'MALFORMED_SDP' }));
    const noAddress = pcmaOnlyOffer.replace('c=IN IP4 203.0.113.5\r\n', '');
    expect(() => answerOffer(noAddress, local, session)).toThrow(expect.objectContaining({ code: 'MALFORMED_SDP' }));
  });

  it('answers video with port 0, echoing its formats, and keeps m= line order', () => {
    const a = answerOffer(audioVideoOffer, local, session);
    const lines = answerLines(a.answerSdp);
    expect(lines.filter((l) => l.startsWith('m='))).toEqual(['m=audio 40000 RTP/AVP 96 0 8 101', 'm=video 0 RTP/AVP 97 98']);
    expect(a.mediaIndex).toBe(0);
    // telephone-event at the opus clock is preferred over the 8 kHz one.
    expect(lines).toContain('a=rtpmap:101 telephone-event/48000');
  });

  it('accepts the second m= line when the first audio stream is unusable', () => {
    const offer = withLines(audioVideoOffer, { 'm=video 9078 RTP/AVP 97 98': 'm=audio 9078 RTP/AVP 0' })
      .replace('m=audio 7078 RTP/AVP 96 0 8 101', 'm=audio 7078 RTP/AVP 18');
    const a = answerOffer(offer, local, session);
    expect(a.mediaIndex).toBe(1);
    expect(a.remote.port).toBe(9078);
    expect(answerLines(a.answerSdp).filter((l) => l.startsWith('m='))).toEqual(['m=audio 0 RTP/AVP 18', 'm=audio 40000 RTP/AVP 0']);
  });
});

describe('answerOffer: direction and hold', () => {
  it('answers sendonly (hold) with recvonly', () => {
    const a = answerOffer(withLines(pcmaOnlyOffer, { 'a=sendrecv': 'a=sendonly' }), local, session);
    expect(a.direction).toBe('recvonly');
    expect(a.remoteHold).toBe(true);
    expect(answerLines(a.answerSdp)).toContain('a=recvonly');
  });

  it('mirrors recvonly and inactive', () => {
    const r = answerOffer(withLines(pcmaOnlyOffer, { 'a=sendrecv': 'a=recvonly' }), local, session);
    expect([r.direction, r.remoteHold]).toEqual(['sendonly', false]);
    const i = answerOffer(withLines(pcmaOnlyOffer, { 'a=sendrecv': 'a=inactive' }), local, session);
    expect([i.direction, i.remoteHold]).toEqual(['inactive', true]);
  });

  it('treats c=0.0.0.0 as hold (RFC 2543 style)', () => {
    const a = answerOffer(withLines(pcmaOnlyOffer, { 'c=IN IP4 203.0.113.5': 'c=IN IP4 0.0.0.0' }), local, session);
    expect(a.remoteHold).toBe(true);
    expect(a.direction).toBe('recvonly');
  });

  it('honours a session-level direction attribute', () => {
    const offer = carrierOffer.replace('a=sendrecv\r\n', '').replace('t=0 0\r\n', 't=0 0\r\na=sendonly\r\n');
    expect(answerOffer(offer, local, session).direction).toBe('recvonly');
  });

  it('restricts to our own direction when we hold the call', () => {
    const a = answerOffer(pcmaOnlyOffer, { ...local, direction: 'sendonly' }, session);
    expect(a.direction).toBe('sendonly');
  });
});

describe('answerOffer: ptime, RTCP, addresses, versions', () => {
  it('honours an offered ptime of 30 for G.711, and falls back to 20 for opus', () => {
    const g711 = answerOffer(withLines(pcmaOnlyOffer, { 'a=ptime:20': 'a=ptime:30' }), local, session);
    expect(g711.ptimeMs).toBe(30);
    expect(answerLines(g711.answerSdp)).toContain('a=ptime:30');
    const opus = answerOffer(baresipOffer.replace('a=sendrecv', 'a=ptime:30\r\na=sendrecv'), local, session);
    expect(opus.ptimeMs).toBe(20);
  });

  it('caps ptime by maxptime', () => {
    const offer = withLines(pcmaOnlyOffer, { 'a=ptime:20': 'a=ptime:60\r\na=maxptime:40' });
    expect(answerOffer(offer, local, session).ptimeMs).toBe(40);
  });

  it('advertises our RTCP port when configured', () => {
    const a = answerOffer(carrierOffer, { ...local, rtcpPort: 40001 }, session);
    expect(answerLines(a.answerSdp)).toContain('a=rtcp:40001');
  });

  it('writes IPv6 addresses with IP6', () => {
    const a = answerOffer(pcmaOnlyOffer, { ...local, address: '2001:db8::5' }, session);
    expect(answerLines(a.answerSdp)).toContain('c=IN IP6 2001:db8::5');
  });

  it('c=IN IP6 round trip: an IPv6 offer is read (session-level c= inherited) and answered with IP6 in o= and c=', () => {
    const offer = 'v=0\r\no=peer 1 1 IN IP6 ::1\r\ns=-\r\nc=IN IP6 ::1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n';
    expect(parseSdp(offer).media[0]!.address).toBe('::1');
    const a = answerOffer(offer, { ...local, address: '::1' }, session);
    expect(a.remote).toMatchObject({ address: '::1', port: 4000 });
    const lines = answerLines(a.answerSdp);
    expect(lines).toContain('c=IN IP6 ::1');
    expect(lines.find((l) => l.startsWith('o='))).toMatch(/ IN IP6 ::1$/);
    const back = parseSdp(a.answerSdp);
    expect(back.origin.address).toBe('::1');
    expect(back.media[0]!.address).toBe('::1');
  });

  it('keeps the version for an unchanged re-offer and increments it when the answer changes', () => {
    const first = answerOffer(pcmaOnlyOffer, local, session);
    const refresh = answerOffer(pcmaOnlyOffer, local, first.session);
    expect(refresh.answerSdp).toBe(first.answerSdp);
    expect(refresh.session.version).toBe(1);
    const hold = answerOffer(withLines(pcmaOnlyOffer, { 'a=sendrecv': 'a=sendonly' }), local, refresh.session);
    expect(parseSdp(hold.answerSdp).origin.sessionVersion).toBe('2');
    const resume = answerOffer(pcmaOnlyOffer, local, hold.session);
    expect(parseSdp(resume.answerSdp).origin.sessionVersion).toBe('3');
    expect(parseSdp(resume.answerSdp).origin.sessionId).toBe('7421');
  });

  it('can turn off telephone-event', () => {
    const a = answerOffer(pcmaOnlyOffer, { ...local, dtmf: false }, session);
    expect(a.dtmfPayloadType).toBeUndefined();
    expect(a.answerSdp).not.toContain('telephone-event');
  });
});
