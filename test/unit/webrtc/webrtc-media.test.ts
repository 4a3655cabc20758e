/**
 * A browser call's media on a ManualClock, without werift: Opus RTP in → exactly one 16 kHz
 * frame per 20 ms (silence when nothing came); 16 kHz frames out → paced 20 ms Opus packets
 * (timestamps +960, consecutive sequence numbers, the marker on a talkspurt's first), flushed at
 * once on barge-in; the media timeout; the tape sees Opus and every packet.
 */
import { describe, expect, it } from 'vitest';
import { rms, type AudioFrame } from '../../../src/audio/frame.ts';
import { opusCodec } from '../../../src/media/codecs/opus.ts';
import type { RtpPacket } from '../../../src/media/rtp-packet.ts';
import type { InboundTap } from '../../../src/media/rtp-session.ts';
import type { NegotiatedMedia } from '../../../src/media/sdp-negotiate.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { webNegotiatedMedia, WebRtcMedia, type WebRtcPacketOut } from '../../../src/webrtc/webrtc-media.ts';

const PT = 111;

function tone48k(n: number, hz = 440, level = 8000): Int16Array {
  return new Int16Array(960).map((_, i) => Math.round(level * Math.sin((2 * Math.PI * hz * (n * 960 + i)) / 48_000)));
}

function tone16k(n: number, hz = 440, level = 8000): AudioFrame {
  return { samples: new Int16Array(320).map((_, i) => Math.round(level * Math.sin((2 * Math.PI * hz * (n * 320 + i)) / 16_000))), sampleRate: 16_000 };
}

function setup(rtpTimeoutMs?: number) {
  const clock = new ManualClock(0);
  const media = new WebRtcMedia({ clock, ...(rtpTimeoutMs !== undefined ? { rtpTimeoutMs } : {}) });
  const sent: (WebRtcPacketOut & { atMs: number })[] = [];
  const frames: AudioFrame[] = [];
  const reading = (async () => {
    for await (const f of media.inbound) frames.push(f);
  })();
  return { clock, media, sent, frames, reading, begin: () => media.begin(webNegotiatedMedia(PT), (p) => sent.push({ ...p, atMs: clock.monotonic() })) };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('WebRtcMedia', () => {
  it('turns the browser’s Opus packets into one 16 kHz frame per 20 ms, silence where none came', async () => {
    const { clock, media, frames, reading, begin } = setup();
    begin();
    const enc = opusCodec.encoder();
    const ssrc = 0x1234;
    for (let n = 0; n < 50; n++) {
      const packet: RtpPacket = { payloadType: PT, sequenceNumber: n, timestamp: n * 960, ssrc, marker: n === 0, csrcs: [], payload: enc.encode(tone48k(n)), paddingLength: 0 };
      media.receive(packet);
      clock.advance(20);
      await settle();
    }
    // Then the browser goes quiet for 400 ms: the frames keep coming, as silence.
    clock.advance(400);
    await settle();
    expect(frames.length).toBeGreaterThanOrEqual(68);
    expect(frames.every((f) => f.samples.length === 320 && f.sampleRate === 16_000)).toBe(true);
    const loud = frames.filter((f) => rms(f.samples) > 0.05).length;
    expect(loud).toBeGreaterThan(35);
    expect(frames.slice(-10).every((f) => rms(f.samples) < 0.002)).toBe(true);
    expect(media.stats()).toMatchObject({ codec: 'opus', packetsReceived: 50, unknownPayloadType: 0 });
    await media.close();
    await reading;
  });

  it('sends paced 20 ms Opus packets with continuous timestamps and sequence numbers, and a flush stops the audio at once', async () => {
    const { clock, media, sent, begin } = setup();
    begin();
    clock.advance(60); // comfort silence on the grid
    for (let n = 0; n < 40; n++) expect(media.outbound.write(tone16k(n))).toBe(true);
    clock.advance(200);
    expect(media.outbound.playing).toBe(true);
    const dropped = media.outbound.flush(); // barge-in
    expect(dropped).toBeGreaterThan(20);
    expect(media.outbound.playing).toBe(false);
    clock.advance(200);
    expect(sent.every((p) => p.payloadType === PT)).toBe(true);
    for (let i = 1; i < sent.length; i++) {
      expect((sent[i]!.timestamp - sent[i - 1]!.timestamp) >>> 0).toBe(960);
      expect((sent[i]!.sequenceNumber - sent[i - 1]!.sequenceNumber) & 0xffff).toBe(1);
    }
    const dec = opusCodec.decoder();
    const levels = sent.map((p) => ({ atMs: p.atMs, marker: p.marker, rms: rms(dec.decode(p.payload)) }));
    const audible = levels.filter((l) => l.rms > 0.05);
    expect(audible.length).toBeGreaterThanOrEqual(9);
    // The marker on the talkspurt's first packet only, which leaves with the write.
    expect(levels.filter((l) => l.marker)).toEqual([audible[0]]);
    expect(audible[0]!.atMs).toBe(60);
    // Quiet after the flush at 260 ms: the next packet carries the decoder's decay into the
    // restarted encoder's silence (20 ms), everything from the one after is silent.
    expect(levels.filter((l) => l.atMs > 260 && l.rms > 0.01).map((l) => l.atMs)).toEqual([300]);
    expect(levels.filter((l) => l.atMs > 260).every((l) => l.rms < 0.15)).toBe(true);
    // Paced: one packet per 20 ms slot overall (a talkspurt's first may leave early).
    expect(sent.length).toBeGreaterThanOrEqual(22);
    expect(sent.length).toBeLessThanOrEqual(24);
    await media.close();
  });

  it('refuses frames before the peer connection is up and after close, and ends inbound on close', async () => {
    const { media, reading, begin } = setup();
    expect(media.outbound.write(tone16k(0))).toBe(false);
    begin();
    await media.close();
    await reading;
    expect(media.outbound.write(tone16k(0))).toBe(false);
  });

  it('reports a dead browser leg once (rtpTimeout), and the tape sees Opus and every packet', async () => {
    const { clock, media, begin } = setup(1_000);
    const timeouts: number[] = [];
    media.on('rtpTimeout', ({ silentMs }) => timeouts.push(silentMs));
    const seen: { media: NegotiatedMedia[]; packets: number } = { media: [], packets: 0 };
    const tap: InboundTap = { media: (m) => seen.media.push(m), packet: () => seen.packets++ };
    media.tapInbound(tap);
    begin();
    const enc = opusCodec.encoder();
    for (let n = 0; n < 5; n++) {
      media.receive({ payloadType: PT, sequenceNumber: n, timestamp: n * 960, ssrc: 7, marker: false, csrcs: [], payload: enc.encode(tone48k(n)), paddingLength: 0 });
      clock.advance(20);
    }
    expect(seen.media.map((m) => m.codec.name)).toEqual(['opus']);
    expect(seen.packets).toBe(5);
    clock.advance(2_000);
    expect(timeouts).toHaveLength(1);
    expect(timeouts[0]).toBeGreaterThanOrEqual(1_000);
    await media.close();
  });
});
