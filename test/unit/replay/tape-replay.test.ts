import { describe, expect, it } from 'vitest';
import { FRAME_MS, rms, type AudioFrame } from '../../../src/audio/frame.ts';
import { parseCallTape, TapeRecorder, type CallTape } from '../../../src/call/tape.ts';
import { VirtualMedia } from '../../../src/call/virtual-media.ts';
import { InboundPath } from '../../../src/media/rtp-session-inbound.ts';
import { DropOldestQueue } from '../../../src/media/rtp-session-queue.ts';
import type { NegotiatedMedia } from '../../../src/media/sdp-negotiate.ts';
import { TapeFeed } from '../../../src/replay/tape-replay.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { CallerStream, g711Media, type Arrival } from '../../support/call-tape.ts';

interface Heard {
  frames: Int16Array[];
  dtmf: { digit: string; durationMs: number; atMs: number }[];
}

/** A tape as `record` keeps it: through the recorder, to JSON text and back. */
function tapeOf(arrivals: Arrival[], endMs: number, changes: { atMs: number; media: NegotiatedMedia }[] = []): CallTape {
  const origin = 70_000;
  const rec = new TapeRecorder({ call: { uuid: 'c', direction: 'inbound' }, originMs: origin });
  rec.media(g711Media(), origin);
  const pending = [...changes];
  for (const a of arrivals) {
    for (let c = pending[0]; c && c.atMs <= a.atMs; c = pending[0]) {
      pending.shift();
      rec.media(c.media, origin + c.atMs);
    }
    rec.packet(a.packet, origin + a.atMs);
  }
  rec.hangup('remote-hangup', origin + endMs);
  return parseCallTape(JSON.parse(JSON.stringify(rec)));
}

/**
 * The live chain, driven directly the way an RtpSession drives it: each packet at its arrival,
 * a playout slot every 20 ms from the answer, re-INVITEs when they happened.
 */
async function live(arrivals: Arrival[], endMs: number, changes: { atMs: number; media: NegotiatedMedia }[] = []): Promise<Heard> {
  const queue = new DropOldestQueue<AudioFrame>(100_000);
  const heard: Heard = { frames: [], dtmf: [] };
  let now = 0;
  const path = new InboundPath(g711Media(), 0, queue, { dtmf: (digit, durationMs) => heard.dtmf.push({ digit, durationMs, atMs: now }), latched: () => undefined });
  const from = g711Media().remote;
  const pending = [...changes];
  let i = 0;
  for (let slot = 1; slot * FRAME_MS <= endMs; slot++) {
    const slotMs = slot * FRAME_MS;
    for (;;) {
      const change = pending[0];
      const a = arrivals[i];
      if (change && change.atMs <= slotMs && (!a || change.atMs <= a.atMs)) {
        now = change.atMs;
        path.update(change.media, now);
        pending.shift();
      } else if (a && a.atMs <= slotMs) {
        now = a.atMs;
        path.receive(a.packet, from, now);
        i++;
      } else break;
    }
    now = slotMs;
    path.playout(now);
  }
  queue.end();
  for await (const f of queue) heard.frames.push(f.samples);
  return heard;
}

/** The replay: the tape through TapeFeed into a VirtualMedia on a ManualClock, read like an engine reads a call. */
async function replay(tape: CallTape): Promise<Heard & { feed: TapeFeed; media: VirtualMedia }> {
  const clock = new ManualClock(0);
  const heard: Heard = { frames: [], dtmf: [] };
  let media: VirtualMedia | undefined;
  const feed = new TapeFeed(tape, clock, 0, { dtmf: (digit, durationMs) => media?.dtmf(digit, durationMs) });
  media = new VirtualMedia(clock, { items: [], source: feed, hangUpAtMs: feed.endMs });
  const m = media;
  m.on('dtmf', (e) => heard.dtmf.push({ ...e, atMs: m.nowMs }));
  await m.drive(async () => {
    for await (const f of m.inbound) heard.frames.push(f.samples);
  });
  feed.close();
  return { ...heard, feed, media: m };
}

describe('TapeFeed: a recorded tape through the production inbound chain on a virtual clock', () => {
  it('gives the engine the frames and DTMF the live chain gave, at the same times', async () => {
    const arrivals = new CallerStream(0x1111, 8).audio(0, 40, 0).audio(800, 50, 440).audio(1800, 20, 0).key(2_200, '5', 120).audio(2_400, 30, 0).sorted();
    const endMs = 3_000;
    const tape = tapeOf(arrivals, endMs);
    expect(tape.packets).toHaveLength(arrivals.length);

    const want = await live(arrivals, endMs);
    const got = await replay(tape);
    // One frame per 20 ms slot from the answer to the hang-up, sample for sample the live ones.
    expect(got.frames).toHaveLength(endMs / FRAME_MS);
    expect(got.frames.length).toBe(want.frames.length);
    got.frames.forEach((f, k) => expect([...f], `frame ${k}`).toEqual([...want.frames[k]!]));
    // The tone is there (after the jitter buffer's delay), and silence around it.
    const loud = got.frames.map((f, k) => (rms(f) > 0.05 ? k : -1)).filter((k) => k >= 0);
    expect(loud.length).toBeGreaterThanOrEqual(45);
    expect(loud[0]! * FRAME_MS).toBeGreaterThanOrEqual(800);
    expect(loud[0]! * FRAME_MS).toBeLessThan(900);
    // The key press, reported when its end packet arrived, as live.
    expect(want.dtmf).toHaveLength(1);
    expect(got.dtmf).toHaveLength(1);
    expect(got.dtmf[0]).toMatchObject({ digit: '5', durationMs: 120 });
    expect(Math.abs(got.dtmf[0]!.atMs - want.dtmf[0]!.atMs)).toBeLessThanOrEqual(1);
    expect(got.feed.counters).toMatchObject({ dtmfReceived: 1, packets: arrivals.length });
    expect(got.media.closedCause).toBe('remote-hangup');
    expect(got.media.closedAtMs).toBe(endMs);
  });

  it('follows a re-INVITE to another codec when it happened', async () => {
    const arrivals = new CallerStream(0x2222, 4).audio(0, 25, 300).audio(500, 25, 300, 'pcma').sorted();
    const changes = [{ atMs: 495, media: g711Media('pcma') }];
    const tape = tapeOf(arrivals, 1_100, changes);
    expect(tape.media.map((m) => [m.atMs, m.codec])).toEqual([
      [0, 'PCMU'],
      [495, 'PCMA'],
    ]);
    const want = await live(arrivals, 1_100, changes);
    const got = await replay(tape);
    got.frames.forEach((f, k) => expect([...f], `frame ${k}`).toEqual([...want.frames[k]!]));
    // Audio on both sides of the change: the A-law half decodes too.
    const loudAfter = got.frames.slice(30).filter((f) => rms(f) > 0.05).length;
    expect(loudAfter).toBeGreaterThanOrEqual(20);
  });

  it('starts where the live engine run began: earlier frames unheard, times from there', async () => {
    const arrivals = new CallerStream(0x4444, 5).audio(0, 30, 440).key(700, '2').audio(900, 20, 0).sorted();
    const origin = 10_000;
    const rec = new TapeRecorder({ call: { uuid: 'run', direction: 'inbound' }, originMs: origin });
    rec.media(g711Media(), origin);
    rec.engineRun(7, origin + 53.5);
    for (const a of arrivals) rec.packet(a.packet, origin + a.atMs);
    rec.hangup('remote-hangup', origin + 1_400);
    const tape = parseCallTape(JSON.parse(JSON.stringify(rec)));
    const want = await live(arrivals, 1_400);
    const got = await replay(tape);
    expect(got.feed.zeroMs).toBe(53.5);
    // The live engine's first frame is the one of the first playout slot after it started (60 ms).
    expect(got.frames.length).toBe(want.frames.length - 2);
    got.frames.forEach((f, k) => expect([...f], `frame ${k}`).toEqual([...want.frames[k + 2]!]));
    expect(got.dtmf).toHaveLength(1);
    expect(got.dtmf[0]!.atMs).toBeCloseTo(want.dtmf[0]!.atMs - 53.5, 5);
    expect(got.media.closedAtMs).toBe(1_360);
  });

  it('starts a tape kept from mid-call (after a swap) with silence until its first packet', async () => {
    const arrivals = new CallerStream(0x3333, 0).audio(1_000, 20, 500).sorted();
    const origin = 0;
    const rec = new TapeRecorder({ call: { uuid: 'late', direction: 'inbound' }, originMs: origin });
    rec.media(g711Media(), 990);
    for (const a of arrivals) rec.packet(a.packet, a.atMs);
    rec.hangup('local-hangup', 1_600);
    const got = await replay(parseCallTape(rec.toJSON()));
    expect(got.frames).toHaveLength(80);
    expect(got.frames.slice(0, 50).every((f) => rms(f) === 0)).toBe(true);
    expect(got.frames.slice(50).some((f) => rms(f) > 0.05)).toBe(true);
  });
});
