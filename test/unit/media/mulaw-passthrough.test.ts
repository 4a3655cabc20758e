/**
 * G.711 μ-law pass-through in the media path, on a ManualClock: payloads written with
 * `writeMulaw` leave byte for byte on the shared media clock's slots (the first of a talkspurt
 * at once), flush drops them at once, other ptimes re-cut them, other codecs transcode them;
 * inbound frames of a PCMU call carry the payload bytes behind them.
 */
import { describe, expect, it } from 'vitest';
import type { AudioFrame } from '../../../src/audio/frame.ts';
import { alaw, ulaw } from '../../../src/media/codecs/g711.ts';
import { pcma } from '../../../src/media/codecs/pcma.ts';
import { mulawOf } from '../../../src/media/media-types.ts';
import { serializeRtp, parseRtp, type RtpPacket } from '../../../src/media/rtp-packet.ts';
import { InboundPath } from '../../../src/media/rtp-session-inbound.ts';
import { OutboundPath, type OutboundPacket } from '../../../src/media/rtp-session-outbound.ts';
import { DropOldestQueue } from '../../../src/media/rtp-session-queue.ts';
import type { NegotiatedMedia } from '../../../src/media/sdp-negotiate.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { pcmuMedia } from '../../support/negotiated-media.ts';

const media = pcmuMedia;

/** 20 ms of a loud μ-law pattern, distinct per `n` (never μ-law silence). */
function payload(n: number): Uint8Array {
  return Uint8Array.from({ length: 160 }, (_, i) => ((n * 37 + i * 11) % 96) + 0x10);
}

function setup(over: Partial<NegotiatedMedia> = {}) {
  const clock = new ManualClock();
  const sent: (OutboundPacket & { atMs: number })[] = [];
  const t0 = clock.monotonic();
  // The default ticker: the shared media scheduler of this clock (media-clock.ts).
  const out = new OutboundPath(media(over), { clock, send: (p) => sent.push({ ...p, atMs: clock.monotonic() - t0 }), initialTimestamp: 1000 });
  out.setSending(true);
  const audible = (): (OutboundPacket & { atMs: number })[] => sent.filter((p) => p.payload.some((b) => b !== 0xff));
  return { clock, sent, out, audible };
}

describe('μ-law pass-through, outbound', () => {
  it('sends the payloads untouched, the first at once and the rest one per slot, timestamps unbroken', () => {
    const { clock, sent, out, audible } = setup();
    clock.advance(47); // slots at 0, 20, 40 carried silence; the next is due at 60
    const written = [0, 1, 2, 3, 4].map(payload);
    for (const p of written) expect(out.writeMulaw(p)).toBe(true);
    // The talkspurt's first packet left with the write, 13 ms before its slot.
    expect(sent.at(-1)).toMatchObject({ atMs: 47, marker: true, timestamp: 1480 });
    clock.advance(200);
    const speech = audible();
    expect(speech.map((p) => Buffer.from(p.payload))).toEqual(written.map((p) => Buffer.from(p)));
    // Byte for byte, and the very same buffer at ptime 20: nothing was decoded or encoded.
    expect(speech[1]!.payload).toBe(written[1]);
    expect(speech.map((p) => p.atMs)).toEqual([47, 60, 80, 100, 120]);
    expect(speech.map((p) => p.marker)).toEqual([true, false, false, false, false]);
    // One packet per 160 timestamp ticks from start to end, silence included: no gap, no overlap.
    expect(sent.map((p) => p.timestamp)).toEqual(sent.map((_, i) => 1000 + 160 * i));
    // The slot after the talkspurt gave back the early one; silence is on the grid again.
    const after = sent.filter((p) => p.atMs > 120).map((p) => p.atMs);
    expect(after[0]).toBe(160);
    expect(after.every((t) => t % 20 === 0)).toBe(true);
    out.close();
  });

  it('mid-talkspurt audio waits for its slot (only a talkspurt start goes early)', () => {
    const { clock, out, audible } = setup();
    clock.advance(5);
    out.writeMulaw(payload(1));
    out.writeMulaw(payload(2));
    clock.advance(3);
    out.writeMulaw(payload(3));
    clock.advance(100);
    expect(audible().map((p) => p.atMs)).toEqual([5, 20, 40]);
    out.close();
  });

  it('flush drops queued μ-law at once and says how many 20 ms frames it dropped', () => {
    const { clock, out, audible } = setup();
    clock.advance(10);
    for (let i = 0; i < 50; i++) out.writeMulaw(payload(i));
    clock.advance(45); // early packet at 10, slots at 20 and 40
    expect(audible()).toHaveLength(3);
    expect(out.flush()).toBe(47);
    expect(out.playing).toBe(false);
    clock.advance(200);
    expect(audible()).toHaveLength(3);
    out.close();
  });

  it('re-cuts μ-law to the call ptime (30 ms: 240-byte payloads, same bytes in order)', () => {
    const { clock, out, audible } = setup({ ptimeMs: 30 });
    clock.advance(31);
    const written = [0, 1, 2, 3, 4, 5].map(payload);
    for (const p of written) out.writeMulaw(p);
    clock.advance(300);
    const speech = audible();
    expect(speech.map((p) => p.payload.length)).toEqual([240, 240, 240, 240]);
    expect(Buffer.concat(speech.map((p) => p.payload))).toEqual(Buffer.concat(written));
    out.close();
  });

  it('on a PCMA call (after a re-INVITE) μ-law is transcoded like a frame', () => {
    const { clock, out, audible } = setup({ codec: pcma, payloadType: 8, receiveCodecs: new Map([[8, pcma]]) });
    clock.advance(20);
    const tone = ulaw.encode(Int16Array.from({ length: 160 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 400 * i) / 8000))));
    for (let i = 0; i < 5; i++) out.writeMulaw(tone);
    clock.advance(200);
    const packets = audible().filter((p) => p.payloadType === 8);
    expect(packets.length).toBeGreaterThanOrEqual(4);
    const level = (pcm: Int16Array): number => Math.sqrt(pcm.reduce((s, v) => s + v * v, 0) / pcm.length);
    expect(level(alaw.decode(packets[2]!.payload))).toBeGreaterThan(4000);
    out.close();
  });

  it('rejects anything but 20 ms', () => {
    const { out } = setup();
    expect(() => out.writeMulaw(new Uint8Array(100))).toThrow(RangeError);
    out.close();
  });
});

describe('μ-law pass-through, inbound', () => {
  const packet = (seq: number, bytes: Uint8Array, pt = 0): RtpPacket => {
    const parsed = parseRtp(serializeRtp({ payloadType: pt, sequenceNumber: seq, timestamp: seq * 160, ssrc: 7, payload: bytes }));
    if (!parsed.ok) throw new Error('bad packet');
    return parsed.packet;
  };
  const from = { address: '192.0.2.1', port: 4000 };

  async function run(over: Partial<NegotiatedMedia>, arrivals: Array<RtpPacket | undefined>, slots: number): Promise<AudioFrame[]> {
    const queue = new DropOldestQueue<AudioFrame>(500);
    const path = new InboundPath(media(over), 0, queue, { dtmf: () => undefined, latched: () => undefined });
    let now = 0;
    for (let i = 0; i < slots; i++, now += 20) {
      const p = arrivals[i];
      if (p) path.receive(p, from, now);
      path.playout(now);
    }
    queue.end();
    const frames: AudioFrame[] = [];
    for await (const f of queue) frames.push(f);
    return frames;
  }

  it('each frame carries the payload it was decoded from, in sequence after reordering', async () => {
    const sent = [1, 2, 3, 4, 5, 6].map((n) => payload(n));
    // Packet 3 arrives after packet 4.
    const order = [1, 2, 4, 3, 5, 6];
    const arrivals = order.map((seq) => packet(seq, sent[seq - 1]!));
    const frames = await run({}, [...arrivals, undefined, undefined, undefined, undefined], 10);
    const carried = frames.map((f) => mulawOf(f)).filter((m) => m && m.some((b) => b !== 0xff)) as Uint8Array[];
    // (After the stream stops, the jitter buffer conceals a few more slots: a fading repeat.)
    expect(carried.slice(0, 6).map((m) => Buffer.from(m))).toEqual(sent.map((p) => Buffer.from(p)));
    expect(Buffer.from(frames.map((f) => mulawOf(f)!).find((m) => m.some((b) => b !== 0xff))!)).toEqual(Buffer.from(sent[0]!));
    // Slots with nothing to play carry 20 ms of μ-law silence, so the byte stream keeps time.
    expect(frames.every((f) => mulawOf(f)!.length === 160)).toBe(true);
  });

  it('a lost packet is its concealment, 160 bytes, and nothing on a PCMA call', async () => {
    const sent = [1, 2, 3, 4, 5, 6].map((n) => payload(n));
    const arrivals = [1, 2, undefined, 4, 5, 6].map((seq) => (seq === undefined ? undefined : packet(seq, sent[seq - 1]!)));
    const frames = await run({}, [...arrivals, undefined, undefined, undefined], 9);
    const bytes = Buffer.concat(frames.map((f) => mulawOf(f)!));
    expect(bytes.length).toBe(frames.length * 160);
    for (const n of [0, 1, 3, 4, 5]) expect(bytes.includes(Buffer.from(sent[n]!))).toBe(true);
    const pcma8 = await run({ codec: pcma, payloadType: 8, receiveCodecs: new Map([[8, pcma]]) }, [packet(1, payload(1), 8), packet(2, payload(2), 8)], 6);
    expect(pcma8.every((f) => mulawOf(f) === undefined)).toBe(true);
  });

  it('decodes each buffered packet with its own payload type when PCMU and PCMA share the stream', async () => {
    const mulawLoud = new Uint8Array(160).fill(0x80); // μ-law full scale
    const alawQuiet = new Uint8Array(160).fill(0xd5); // A-law near zero (but loud read as μ-law)
    const both = new Map([
      [0, pcmuMedia().codec],
      [8, pcma],
    ]);
    const frames = await run({ receiveCodecs: both }, [packet(1, mulawLoud, 0), packet(2, alawQuiet, 8), packet(3, mulawLoud, 0), packet(4, alawQuiet, 8)], 8);
    const level = (f: AudioFrame) => Math.sqrt(f.samples.reduce((a, x) => a + x * x, 0) / f.samples.length);
    const played = frames.map(level).filter((l) => l > 0);
    // Loud, quiet, loud, quiet: had the A-law bytes gone through the μ-law decoder they would be loud.
    expect(ulaw.decode(alawQuiet)[0]! ** 2).toBeGreaterThan(100 ** 2);
    expect(alaw.decode(alawQuiet)[0]! ** 2).toBeLessThan(16 ** 2);
    expect(played.slice(0, 4).map((l) => l > 1000)).toEqual([true, false, true, false]);
  });
});
