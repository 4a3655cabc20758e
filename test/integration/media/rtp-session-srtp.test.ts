/**
 * Two RtpSessions over loopback, keyed by their own SDES offer and answer: audio one way is heard
 * the other way, both sides' SRTCP reports get through (each side learns a round-trip time, which
 * needs the other's report decrypted and authenticated), and nothing fails authentication. Then
 * a re-INVITE with the same keys keeps the contexts, and one side closing sends an SRTCP BYE.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { rms, type AudioFrame } from '../../../src/audio/frame.ts';
import { resolveCodecs } from '../../../src/media/codecs/codecs.ts';
import { PortPool } from '../../../src/media/port-pool.ts';
import { RtpSession } from '../../../src/media/rtp-session.ts';
import { answerOffer, createOffer, processAnswer } from '../../../src/media/sdp-negotiate.ts';
import { createSdpSession } from '../../../src/media/sdp-write.ts';
import { testRtpIo } from '../../support/rtp-io.ts';
import { BASE, HOST } from './rtp-session-setup.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let sessions: RtpSession[] = [];
afterEach(async () => {
  await Promise.all(sessions.map((s) => s.close()));
  sessions = [];
});

function toneFrames(count: number): AudioFrame[] {
  return Array.from({ length: count }, (_, f) => ({
    sampleRate: 16_000,
    samples: Int16Array.from({ length: 320 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 400 * (f * 320 + i)) / 16_000))),
  }));
}

describe('RtpSession over SRTP', () => {
  it.each(['AEAD_AES_256_GCM', 'AES_CM_128_HMAC_SHA1_80'])('%s: audio, SRTCP both ways, no failures', async (suite) => {
    const codecs = resolveCodecs(['PCMU']);
    const a = new RtpSession({ pool: new PortPool({ host: HOST, minPort: BASE + 600, maxPort: BASE + 619, io: testRtpIo }), publicAddress: HOST, rtcpIntervalMs: 100 });
    const b = new RtpSession({ pool: new PortPool({ host: HOST, minPort: BASE + 620, maxPort: BASE + 639, io: testRtpIo }), publicAddress: HOST, rtcpIntervalMs: 100 });
    sessions.push(a, b);
    const pa = await a.allocate();
    const pb = await b.allocate();
    const offer = createOffer({ address: HOST, port: pa.rtpPort, rtcpPort: pa.rtcpPort, codecs, srtp: 'required' }, createSdpSession('1'));
    // Their answer must pick `suite`: offer it alone by editing the other crypto lines away.
    const only = offer.offerSdp.split('\r\n').filter((l) => !l.startsWith('a=crypto:') || l.includes(` ${suite} `)).join('\r\n');
    const answer = answerOffer(only, { address: HOST, port: pb.rtpPort, rtcpPort: pb.rtcpPort, codecs, srtp: 'offered' }, createSdpSession('2'));
    const mine = processAnswer(answer.answerSdp, offer.offered);
    expect(mine.srtp?.suite).toBe(suite);
    a.start(mine);
    b.start(answer);
    const heard: AudioFrame[] = [];
    const reading = (async () => {
      for await (const f of b.inbound) heard.push(f);
    })();
    for (const f of toneFrames(40)) a.outbound.write(f);
    await sleep(1200);
    const sa = a.stats();
    const sb = b.stats();
    expect(sb.packetsReceived).toBeGreaterThan(30);
    expect(heard.filter((f) => rms(f.samples) > 0.05).length).toBeGreaterThan(25);
    expect(sa.srtp).toBe(suite);
    expect([sa.srtpAuthFailed, sa.srtpReplayed, sb.srtpAuthFailed, sb.srtpReplayed]).toEqual([0, 0, 0, 0]);
    // A round-trip time needs the far end's report, decrypted, about our own sender report.
    expect(sa.rttMs).toBeGreaterThanOrEqual(0);
    expect(sb.rttMs).toBeGreaterThanOrEqual(0);
    expect(sb.inboundNative).toBe(false);

    // A re-INVITE with the same keys keeps the SRTP contexts: media still flows, nothing fails.
    b.update(answer);
    const before = b.stats().packetsReceived;
    for (const f of toneFrames(10)) a.outbound.write(f);
    await sleep(300);
    expect(b.stats().packetsReceived).toBeGreaterThan(before + 5);
    expect(b.stats().srtpAuthFailed).toBe(0);

    let bye = false;
    b.on('rtcpBye', () => (bye = true));
    await a.close('done');
    await sleep(100);
    expect(bye).toBe(true);
    await b.close();
    await reading;
  });
});
