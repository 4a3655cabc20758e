import { afterEach, describe, expect, it } from 'vitest';
import { rms, splitPcm } from '../../../src/audio/frame.ts';
import { pcmu } from '../../../src/media/codecs/pcmu.ts';
import { DtmfReceiver, type DtmfDigit } from '../../../src/media/dtmf.ts';
import { ntpMiddle, serializeRtcp, type RtcpPacket } from '../../../src/media/rtcp.ts';
import { ulaw } from '../../../src/media/codecs/g711.ts';
import { sine, sleep } from '../../support/rtp-peer.ts';
import { openPair, tone, type Pair } from './rtp-session-setup.ts';

let open: Pair | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

/** The tone is ~0.21 RMS; a silence packet may carry a few ms of resampler tail, far below this. */
const loud = (payload: Uint8Array): boolean => rms(ulaw.decode(payload)) > 0.1;

describe('RtpSession DTMF', () => {
  it('reports RFC 4733 digits from the peer with their durations', async () => {
    open = await openPair(pcmu);
    const { session, peer } = open;
    const digits: Array<{ digit: string; durationMs: number }> = [];
    session.on('dtmf', (d) => digits.push(d));
    await peer.sendDtmf('1', { durationMs: 120 });
    await sleep(40);
    await peer.sendDtmf('#', { durationMs: 200 });
    await sleep(60);
    expect(digits).toEqual([
      { digit: '1', durationMs: 120, source: 'rfc4733' },
      { digit: '#', durationMs: 200, source: 'rfc4733' },
    ]);
    // The three end packets of each are retransmissions, not new presses.
    expect(session.stats().dtmfReceived).toBe(2);
  });

  it('sends digits as RFC 4733 events that a receiver decodes, pausing audio meanwhile', async () => {
    open = await openPair(pcmu);
    const { session, peer } = open;
    session.outbound.writeStream(tone(splitPcm(sine(440, 2000)))).catch(() => undefined);
    await sleep(100);
    await session.sendDtmf('5*', { durationMs: 100 });
    await sleep(60);
    const events = peer.packets(101);
    const rx = new DtmfReceiver();
    const got: DtmfDigit[] = [];
    for (const p of events) got.push(...rx.receive(p, p.arrivalMs).filter((e): e is DtmfDigit => e.type === 'digit'));
    expect(got.map((d) => [d.digit, d.durationMs])).toEqual([
      ['5', 100],
      ['*', 100],
    ]);
    expect(events.filter((p) => p.marker).length).toBe(2);
    // Per key: 4 updates + 3 end packets, all with the event's start timestamp.
    expect(events.length).toBe(14);
    expect(new Set(events.map((p) => p.timestamp)).size).toBe(2);
    // No audio packet went out while an event was in progress.
    const all = peer.packets();
    const firstEvent = all.findIndex((p) => p.payloadType === 101);
    const lastEvent = all.findLastIndex((p) => p.payloadType === 101);
    const during = all.slice(firstEvent, lastEvent + 1).filter((p) => p.payloadType === 0);
    expect(during.every((p) => !loud(p.payload))).toBe(true);
    // Audio resumes after the digits, marked as a new talkspurt.
    const after = all.slice(lastEvent + 1).find((p) => p.payloadType === 0 && loud(p.payload));
    expect(after?.marker).toBe(true);
    expect(session.stats().dtmfSent).toBe(2);
  });

  it('refuses to send DTMF when the peer did not offer telephone-event', async () => {
    open = await openPair(pcmu, { dtmf: false });
    await expect(open.session.sendDtmf('1')).rejects.toMatchObject({ code: 'DTMF_NOT_NEGOTIATED' });
  });
});

describe('RtpSession outbound control', () => {
  it('flush() stops our audio within one frame; comfort silence continues', async () => {
    open = await openPair(pcmu);
    const { session, peer } = open;
    for (const samples of splitPcm(sine(440, 3000))) expect(session.outbound.write({ samples, sampleRate: 16_000 })).toBe(true);
    await sleep(300);
    expect(session.outbound.playing).toBe(true);
    const flushedAt = performance.now();
    const dropped = session.outbound.flush();
    expect(session.outbound.playing).toBe(false);
    expect(dropped).toBeGreaterThan(120);
    await sleep(200);
    const after = peer.packets(0, flushedAt);
    expect(after.length).toBeGreaterThan(7);
    // At most the one packet already on its way when flush() ran.
    expect(after.filter((p) => loud(p.payload)).length).toBeLessThanOrEqual(1);
    expect(session.stats().outboundFramesDropped).toBe(dropped);
  });

  it('aborting writeStream() stops the stream and flushes what it queued', async () => {
    open = await openPair(pcmu);
    const { session, peer } = open;
    const ac = new AbortController();
    async function* endless(): AsyncGenerator<{ samples: Int16Array; sampleRate: number }> {
      for (;;) yield { samples: sine(440, 20), sampleRate: 16_000 };
    }
    const playing = session.outbound.writeStream(endless(), ac.signal);
    await sleep(200);
    const abortedAt = performance.now();
    ac.abort();
    await playing;
    expect(performance.now() - abortedAt).toBeLessThan(20);
    await sleep(100);
    expect(peer.packets(0, abortedAt).filter((p) => loud(p.payload)).length).toBeLessThanOrEqual(1);
    expect(peer.packets(0).filter((p) => loud(p.payload)).length).toBeGreaterThan(5);
  });

  it('hold via update() stops sending; unhold resumes with timestamps that followed real time', async () => {
    open = await openPair(pcmu);
    const { session, peer } = open;
    await sleep(200);
    session.update(peer.media(pcmu, { direction: 'recvonly', remoteHold: true }));
    const heldAt = performance.now();
    await sleep(300);
    expect(peer.packets(0, heldAt + 25).length).toBe(0);
    expect(session.outbound.write({ samples: new Int16Array(320), sampleRate: 16_000 })).toBe(false);
    const before = peer.packets(0).at(-1)!;
    session.update(peer.media(pcmu));
    await sleep(100);
    const resumed = peer.packets(0, heldAt + 25);
    expect(resumed.length).toBeGreaterThan(3);
    const jump = ((resumed[0]!.timestamp - before.timestamp) >>> 0) / 8;
    expect(jump).toBeGreaterThan(280);
    expect(jump).toBeLessThan(360);
    // 'inactive' also means silence from us.
    session.update(peer.media(pcmu, { direction: 'inactive', remoteHold: true }));
    const inactiveAt = performance.now();
    await sleep(100);
    expect(peer.packets(0, inactiveAt + 25).length).toBe(0);
  });
});

describe('RtpSession liveness and RTCP', () => {
  it('fires rtpTimeout when media stops while not on hold, and not while held', async () => {
    open = await openPair(pcmu, {}, { rtpTimeoutMs: 250 });
    const { session, peer } = open;
    const timeouts: number[] = [];
    session.on('rtpTimeout', ({ silentMs }) => timeouts.push(silentMs));
    await peer.sendPcm(sine(440, 100), { codec: pcmu });
    const stoppedAt = performance.now();
    await sleep(400);
    expect(timeouts.length).toBe(1);
    expect(timeouts[0]).toBeGreaterThanOrEqual(250);
    expect(timeouts[0]).toBeLessThan(300);
    expect(performance.now() - stoppedAt).toBeGreaterThan(250);

    session.update(peer.media(pcmu, { direction: 'recvonly', remoteHold: true }));
    await sleep(400);
    expect(timeouts.length).toBe(1);
  });

  it('exchanges SR/RR: the peer sees our SR; its RR gives us RTT and our loss as it sees it', async () => {
    open = await openPair(pcmu, {}, { rtcpIntervalMs: 150 });
    const { session, peer } = open;
    await peer.sendPcm(sine(440, 200), { codec: pcmu, drop: new Set([3]) });
    await sleep(200);
    const report = peer.rtcpReceived.map((r) => r.packets).find((ps) => ps[0]?.type === 'sr');
    expect(report).toBeDefined();
    const sr = report![0] as Extract<RtcpPacket, { type: 'sr' }>;
    expect(sr.ssrc).toBe(session.ssrc);
    expect(sr.sender.packetCount).toBeGreaterThan(5);
    // Our report block about the peer's stream counts the one packet it dropped.
    expect(sr.reports[0]).toMatchObject({ ssrc: peer.ssrc, cumulativeLost: 1 });
    expect(report![1]).toMatchObject({ type: 'sdes' });

    const holdMs = 30;
    await sleep(holdMs);
    peer.sendRtcp(
      serializeRtcp([
        {
          type: 'rr',
          ssrc: peer.ssrc,
          reports: [
            {
              ssrc: session.ssrc,
              fractionLost: 64,
              cumulativeLost: 7,
              extendedHighestSeq: 100,
              jitter: 80,
              lastSr: ntpMiddle(sr.sender.ntpSeconds, sr.sender.ntpFraction),
              delaySinceLastSr: Math.round((holdMs * 65536) / 1000),
            },
          ],
        },
      ]),
    );
    await sleep(50);
    const stats = session.stats();
    expect(stats.remote).toEqual({ fractionLost: 0.25, cumulativeLost: 7, jitterMs: 10 });
    expect(stats.rttMs).toBeGreaterThanOrEqual(0);
    expect(stats.rttMs).toBeLessThan(300);

    await session.close('bye');
    await sleep(30);
    const bye = peer.rtcpReceived.flatMap((r) => r.packets).find((p) => p.type === 'bye');
    expect(bye).toEqual({ type: 'bye', ssrcs: [session.ssrc], reason: 'bye' });
  });
});
