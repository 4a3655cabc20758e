import dgram from 'node:dgram';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { concatPcm, rms, splitPcm } from '../../../src/audio/frame.ts';
import { g722 } from '../../../src/media/codecs/g722.ts';
import { opusCodec } from '../../../src/media/codecs/opus.ts';
import { pcma } from '../../../src/media/codecs/pcma.ts';
import { pcmu } from '../../../src/media/codecs/pcmu.ts';
import type { Codec } from '../../../src/media/codecs/codec.ts';
import { serializeRtp, seqDelta } from '../../../src/media/rtp-packet.ts';
import type { TransportAddress } from '../../../src/media/source-filter.ts';
import { dominantFrequency, sine, sleep } from '../../support/rtp-peer.ts';
import { RTP_NATIVE } from '../../support/rtp-io.ts';
import { HOST, openPair, tone, voicedSpan, type Pair } from './rtp-session-setup.ts';

let open: Pair | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

const CODECS: Array<[string, Codec, number]> = [
  ['PCMU', pcmu, 160],
  ['PCMA', pcma, 160],
  ['G722', g722, 160],
  ['opus', opusCodec, 960],
];

describe('RtpSession two-way audio over loopback', () => {
  it.each(CODECS)('%s: a sine from the peer arrives as frames; ours arrives paced with clean seq/timestamps', async (_name, codec, ticks) => {
    open = await openPair(codec);
    const { session, peer, frames } = open;
    const writing = session.outbound.writeStream(tone(splitPcm(sine(660, 600))));
    await peer.sendPcm(sine(440, 600), { codec });
    await writing;
    await sleep(150);

    // Inbound: one continuous run of 440 Hz frames at about the level sent (0.3 peak ≈ 0.21 RMS).
    const span = voicedSpan(frames)!;
    expect(span).toBeDefined();
    const voiced = frames.slice(span[0], span[1] + 1).map((f) => f.frame);
    expect(voiced.length).toBeGreaterThanOrEqual(28);
    expect(voiced.length).toBeLessThanOrEqual(33);
    const pcm = concatPcm(voiced.slice(3, -3).map((f) => f.samples));
    // Zero crossings move a little with codec distortion and any frame the jitter buffer cut.
    expect(Math.abs(dominantFrequency(pcm) - 440)).toBeLessThan(15);
    expect(rms(pcm)).toBeGreaterThan(0.15);
    expect(rms(pcm)).toBeLessThan(0.25);
    for (const { frame } of frames) expect(frame.samples.length).toBe(320);

    // Outbound: every packet one seq and one ptime of timestamp after the last, ~20 ms apart.
    const got = peer.packets(codec.payloadType);
    expect(got.length).toBeGreaterThan(30);
    expect(new Set(got.map((p) => p.ssrc)).size).toBe(1);
    for (let i = 1; i < got.length; i++) {
      expect(seqDelta(got[i - 1]!.sequenceNumber, got[i]!.sequenceNumber)).toBe(1);
      expect((got[i]!.timestamp - got[i - 1]!.timestamp) >>> 0).toBe(ticks);
    }
    const spanMs = got[got.length - 1]!.arrivalMs - got[0]!.arrivalMs;
    expect(spanMs / (got.length - 1)).toBeGreaterThan(18);
    expect(spanMs / (got.length - 1)).toBeLessThan(22);
    // Exactly one talkspurt start is marked: the first packet carrying our audio.
    const marked = got.filter((p) => p.marker);
    expect(marked.length).toBe(1);
    const heard = peer.decode(codec);
    const voicedOut = heard.filter((_, i) => i % 8 === 0).some((s) => Math.abs(s) > 3000);
    expect(voicedOut).toBe(true);
    const out = concatPcm(splitPcm(heard).filter((f) => rms(f) > 0.05).slice(3, -3));
    expect(Math.abs(dominantFrequency(out) - 660)).toBeLessThan(15);

    const stats = session.stats();
    expect(stats.codec).toBe(codec.name);
    expect(stats.packetsReceived).toBe(30);
    expect(stats.lost).toBe(0);
    // The packet of the slot that just fired may still be on its way.
    expect(stats.packetsSent - got.length).toBeGreaterThanOrEqual(0);
    expect(stats.packetsSent - got.length).toBeLessThanOrEqual(1);
  });

  it('keeps frames continuous through injected loss and reordering, and counts the loss', async () => {
    open = await openPair(pcmu);
    const { session, peer, frames } = open;
    await peer.sendPcm(sine(440, 1000), { codec: pcmu, drop: new Set([10, 11, 30]), swapWithNext: new Set([20, 40]) });
    await sleep(200);
    const span = voicedSpan(frames)!;
    const voiced = frames.slice(span[0], span[1] + 1).map((f) => rms(f.frame.samples));
    // 50 packets of tone → about 50 frames: the 3 lost ones concealed in place, the swaps
    // absorbed by the buffer; a few fading frames where the stream ends. Never a silent hole.
    expect(voiced.length).toBeGreaterThanOrEqual(50);
    expect(voiced.length).toBeLessThanOrEqual(58);
    expect(voiced.every((level) => level > 0.02)).toBe(true);
    expect(voiced.filter((level) => level > 0.15).length).toBeGreaterThanOrEqual(44);
    const stats = session.stats();
    expect(stats.lost).toBe(3);
    expect(stats.packetsReceived).toBe(47);
    expect(stats.concealedFrames).toBeGreaterThanOrEqual(3);
    const pcm = concatPcm(frames.slice(span[0] + 2, span[1] - 2).map((f) => f.frame.samples));
    expect(Math.abs(dominantFrequency(pcm) - 440)).toBeLessThan(15);
  });

  it('once the source is locked, takes the audio in C (native module), with every packet, loss, DTMF and frame as before', async () => {
    open = await openPair(pcmu);
    const { session, peer, frames } = open;
    const digits: string[] = [];
    session.on('dtmf', (d: { digit: string }) => digits.push(d.digit));
    // 4 s of tone, two packets lost and one pair swapped well after the lock; a key press after it.
    await peer.sendPcm(sine(440, 4000), { codec: pcmu, drop: new Set([170, 180]), swapWithNext: new Set([175]) });
    expect(session.stats().inboundNative).toBe(RTP_NATIVE);
    await peer.sendDtmf('7');
    await peer.sendPcm(sine(440, 400), { codec: pcmu });
    await sleep(200);
    const stats = session.stats();
    expect(stats.inboundNative).toBe(RTP_NATIVE);
    // 198 + 20 audio packets, and the key press: four updates and the end sent three times.
    expect(stats.packetsReceived).toBe(198 + 20 + 7);
    expect(stats.lost).toBe(2);
    expect(stats.dtmfReceived).toBe(1);
    expect(digits).toEqual(['7']);
    expect(stats.droppedByFilter).toBe(0);
    expect(stats.malformed).toBe(0);
    // The tone throughout: the losses concealed in place, the swap absorbed. (A few quiet frames
    // are allowed for a sender's timers stalled by a loaded machine, 4 s of pacing in a test run.)
    const span = voicedSpan(frames)!;
    const toneFrames = frames.slice(span[0], span[0] + 195);
    expect(toneFrames.filter(({ frame }) => rms(frame.samples) <= 0.02).length).toBeLessThanOrEqual(4);
    const pcm = concatPcm(toneFrames.slice(150, 190).map((f) => f.frame.samples));
    expect(Math.abs(dominantFrequency(pcm) - 440)).toBeLessThan(15);
  });

  it('ptime 30 both ways: 30 ms packets are split into 20 ms frames, and we send 30 ms packets', async () => {
    open = await openPair(pcmu, { ptimeMs: 30 });
    const { session, peer, frames } = open;
    const writing = session.outbound.writeStream(tone(splitPcm(sine(660, 600))));
    await peer.sendPcm(sine(500, 900), { codec: pcmu, ptimeMs: 30 });
    await writing;
    await sleep(200);
    const span = voicedSpan(frames)!;
    const voiced = frames.slice(span[0], span[1] + 1).map((f) => f.frame.samples);
    expect(voiced.length).toBeGreaterThanOrEqual(45);
    expect(voiced.length).toBeLessThanOrEqual(49);
    expect(voiced.every((f) => rms(f) > 0.02)).toBe(true);
    expect(Math.abs(dominantFrequency(concatPcm(voiced.slice(2, -4))) - 500)).toBeLessThan(10);
    const got = peer.packets(0);
    for (let i = 1; i < got.length; i++) expect((got[i]!.timestamp - got[i - 1]!.timestamp) >>> 0).toBe(240);
    const spanMs = got[got.length - 1]!.arrivalMs - got[0]!.arrivalMs;
    expect(spanMs / (got.length - 1)).toBeGreaterThan(27);
    expect(spanMs / (got.length - 1)).toBeLessThan(33);
    expect(got.every((p) => p.payload.length === 240)).toBe(true);
    expect(session.stats().lost).toBe(0);
  });

  it('adapts when the peer sends 30 ms packets although 20 ms was negotiated', async () => {
    open = await openPair(pcmu);
    const { session, peer, frames } = open;
    await peer.sendPcm(sine(500, 900), { codec: pcmu, ptimeMs: 30 });
    await sleep(250);
    const span = voicedSpan(frames)!;
    const levels = frames.slice(span[0], span[1] + 1).map((f) => rms(f.frame.samples));
    // One short dip while the buffer re-learns the packet size, then clean 20 ms frames.
    expect(levels.length).toBeGreaterThanOrEqual(44);
    expect(levels.length).toBeLessThanOrEqual(54);
    expect(levels.filter((l) => l < 0.15).length).toBeLessThanOrEqual(10);
    const tail = concatPcm(frames.slice(span[1] - 20, span[1] - 4).map((f) => f.frame.samples));
    expect(Math.abs(dominantFrequency(tail) - 500)).toBeLessThan(10);
    expect(session.stats().lost).toBe(0);
  });

  it('refuses audio from a stranger mid-call (RTP bleed) and keeps sending to the real peer', async () => {
    open = await openPair(pcmu);
    const { session, peer, frames } = open;
    const latched: TransportAddress[] = [];
    session.on('sourceLatched', (s) => latched.push(s));
    const stranger = dgram.createSocket('udp4');
    stranger.bind(0, HOST);
    await once(stranger, 'listening');
    const strangerGot: Buffer[] = [];
    stranger.on('message', (m) => strangerGot.push(m));
    try {
      const talking = peer.sendPcm(sine(440, 600), { codec: pcmu });
      await sleep(100);
      // Near full-scale μ-law in a perfectly plausible, sequential stream: it must not be heard.
      const loud = new Uint8Array(160).fill(0x80);
      for (let i = 0; i < 20; i++) {
        stranger.send(serializeRtp({ payloadType: 0, sequenceNumber: 1000 + i, timestamp: 160 * i, ssrc: 0xbad, payload: loud }), session.local.rtpPort, HOST);
        await sleep(20);
      }
      await talking;
      await sleep(150);
    } finally {
      stranger.close();
    }
    expect(latched).toEqual([{ address: HOST, port: peer.rtpPort }]);
    // The peer's first packet made the lock final, and the socket is then connected to it: the
    // kernel drops the stranger's datagrams before the filter sees them (any it saw, it dropped).
    expect(session.stats().droppedByFilter).toBeLessThanOrEqual(20);
    const span = voicedSpan(frames)!;
    const pcm = concatPcm(frames.slice(span[0] + 2, span[1] - 1).map((f) => f.frame.samples));
    expect(Math.abs(dominantFrequency(pcm) - 440)).toBeLessThan(15);
    expect(strangerGot.length).toBe(0);
    expect(peer.received.length).toBeGreaterThan(20);
  });
});
