/**
 * A reply's first packet at once (OutboundPath, on a ManualClock): audio written while the line
 * carries silence leaves with the write, stamped with the next slot's timestamp and the marker;
 * the rest rides the grid one slot ahead; silence comes back on the grid; timestamps never repeat
 * or skip. Real-time writers, flush, RTCP's media clock and the cases that must wait.
 */
import { describe, expect, it } from 'vitest';
import { rms, type AudioFrame } from '../../../src/audio/frame.ts';
import { ulaw } from '../../../src/media/codecs/g711.ts';
import { OutboundPath, type OutboundPacket } from '../../../src/media/rtp-session-outbound.ts';
import type { NegotiatedMedia } from '../../../src/media/sdp-negotiate.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { pcmuMedia } from '../../support/negotiated-media.ts';
import { prng } from './prng.ts';

const TS0 = 1000;
const tone = (level = 8000): AudioFrame => ({ samples: new Int16Array(320).map((_, i) => (i % 16 < 8 ? level : -level)), sampleRate: 16_000 });

type Sent = OutboundPacket & { atMs: number };

function setup(over: Partial<NegotiatedMedia> = {}) {
  const clock = new ManualClock(0);
  const sent: Sent[] = [];
  const out = new OutboundPath(pcmuMedia(over), { clock, send: (p) => sent.push({ ...p, atMs: clock.monotonic() }), initialTimestamp: TS0 });
  out.setSending(true);
  const loud = (p: OutboundPacket): boolean => p.payloadType === 0 && rms(ulaw.decode(p.payload)) > 0.1;
  const audible = (): Sent[] => sent.filter(loud);
  const queued = (): number => (out as unknown as { queue: unknown[] }).queue.length;
  return { clock, sent, out, audible, queued };
}

/** Every packet one ptime of timestamp after the one before: nothing repeated, nothing skipped. */
function expectContinuous(sent: readonly Sent[], ticks = 160): void {
  expect(sent.map((p) => p.timestamp)).toEqual(sent.map((_, i) => (TS0 + ticks * i) >>> 0));
}

describe('OutboundPath: a reply starts at once', () => {
  it('sends the first packet at write time with the marker, the rest one slot ahead, then silence on the grid again', () => {
    const { clock, sent, out, audible } = setup();
    clock.advance(47); // slots at 0, 20, 40 carried silence; the next is due at 60
    for (let i = 0; i < 5; i++) expect(out.write(tone())).toBe(true);
    // Left with the write, 13 ms before its slot, stamped as that slot's packet.
    expect(sent.at(-1)).toMatchObject({ atMs: 47, marker: true, timestamp: TS0 + 3 * 160 });
    expect(out.playing).toBe(true);
    clock.advance(200);
    expect(audible().map((p) => p.atMs)).toEqual([47, 60, 80, 100, 120]);
    expect(audible().map((p) => p.marker)).toEqual([true, false, false, false, false]);
    expect(sent.filter((p) => p.marker)).toHaveLength(1);
    expectContinuous(sent);
    // Slot 140 sent nothing (its packet went at 120); silence is back on the 20 ms grid.
    const after = sent.filter((p) => p.atMs > 120).map((p) => p.atMs);
    expect(after).toEqual([160, 180, 200, 220, 240]);
    expect(out.playing).toBe(false);
    out.close();
  });

  it('a second reply after silence starts at once again, with its own marker', () => {
    const { clock, sent, out, audible } = setup();
    clock.advance(47);
    out.write(tone());
    out.write(tone());
    clock.advance(100); // 47, 60; slot 80 empty; silence from 100
    out.write(tone());
    expect(sent.at(-1)).toMatchObject({ atMs: 147, marker: true });
    clock.advance(100);
    expect(audible().map((p) => [p.atMs, p.marker])).toEqual([
      [47, true],
      [60, false],
      [147, true],
    ]);
    expectContinuous(sent);
    out.close();
  });

  it('a real-time writer (one frame per slot, just after it) starts at once, then is paced by the grid: even spacing, one marker, no drift', () => {
    const { clock, sent, out, audible, queued } = setup();
    clock.advance(45);
    // An echo or a bridge: a frame 5 ms after every slot, for 4 seconds.
    for (let i = 0; i < 200; i++) {
      out.write(tone());
      expect(queued()).toBeLessThanOrEqual(1);
      clock.advance(20);
    }
    clock.advance(100);
    const speech = audible();
    expect(speech).toHaveLength(200);
    // The first left with its write (45); slot 60 then had nothing (its packet had gone), so the
    // second, written at 65, waits for slot 80, and every later one for the slot after its write:
    // 45, 80, 100, 120, ... evenly spaced on the media clock, whatever the writer's timing.
    expect(speech[0]!.atMs).toBe(45);
    expect(speech.slice(1).map((p) => p.atMs)).toEqual(speech.slice(1).map((_, i) => 80 + 20 * i));
    expect(sent.filter((p) => p.marker)).toHaveLength(1);
    expectContinuous(sent);
    out.close();
  });

  it('a jittery real-time writer is sent on the grid: intervals stay 20 ms, delay bounded and not growing, timestamps continuous', () => {
    const { clock, sent, out, audible, queued } = setup();
    const rand = prng(11);
    const writes: number[] = [];
    clock.advance(40);
    // Writes due every 20 ms at phase 10 of the grid, each up to ±15 ms off: some land after the
    // next slot, some two between the same slots.
    for (let i = 0; i < 300; i++) {
      const due = 50 + 20 * i + Math.round((rand() * 2 - 1) * 15);
      clock.advance(Math.max(0, due - clock.monotonic()));
      writes.push(clock.monotonic());
      out.write(tone());
      expect(queued()).toBeLessThanOrEqual(3);
    }
    clock.advance(200);
    const speech = audible();
    expect(speech.length).toBeGreaterThanOrEqual(299);
    // Everything leaves on a slot except a talkspurt's first packet (marked): when a write came too
    // late for its slot, silence filled it and the next write starts a new talkspurt at once.
    for (const p of speech) if (p.atMs % 20 !== 0) expect(p.marker).toBe(true);
    expect(speech.filter((p) => p.atMs % 20 === 0).length).toBeGreaterThan(speech.length / 2);
    const delays = speech.map((p, i) => p.atMs - writes[i]!);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...delays.slice(-100))).toBeLessThanOrEqual(Math.max(...delays.slice(0, 200)));
    expectContinuous(sent);
    out.close();
  });

  it('flush() in an early talkspurt drops what waits (not what went) and the next reply starts at once', () => {
    const { clock, sent, out, audible } = setup();
    clock.advance(47);
    for (let i = 0; i < 10; i++) out.write(tone());
    clock.advance(20); // 47 early, 60 one ahead
    expect(audible()).toHaveLength(2);
    expect(out.flush()).toBe(8);
    expect(out.playing).toBe(false);
    clock.advance(13); // slot 80: its packet already went with 60's, so nothing
    expect(sent.filter((p) => p.atMs === 80)).toHaveLength(0);
    clock.advance(7);
    // The line is silent again (flushed): the next reply goes at once, as slot 100's packet.
    out.write(tone());
    expect(sent.at(-1)).toMatchObject({ atMs: 87, marker: true, timestamp: TS0 + 5 * 160 });
    clock.advance(100);
    expect(audible().map((p) => p.marker)).toEqual([true, false, true]);
    expectContinuous(sent);
    out.close();
  });

  it('flush() right after the early packet, and a new reply before the next slot: it rides that slot, marked', () => {
    const { clock, sent, out, audible } = setup();
    clock.advance(47);
    out.write(tone());
    out.write(tone());
    expect(out.flush()).toBe(1);
    out.write(tone()); // still one ahead: waits for slot 60, which sends it as 80's packet
    clock.advance(60);
    expect(audible().map((p) => [p.atMs, p.marker])).toEqual([
      [47, true],
      [60, true],
    ]);
    expectContinuous(sent);
    out.close();
  });

  it("RTCP's media clock (rtpTimestampAt) stays on the grid through early talkspurts", () => {
    const { clock, out } = setup();
    // On the grid the first slot (at 0) leaves the timestamp at the next packet's: TS0 + 160 + 8/ms.
    const grid = (t: number): number => TS0 + 160 + 8 * t;
    const check = (): void => expect(out.rtpTimestampAt(clock.monotonic())).toBe(grid(clock.monotonic()));
    clock.advance(47);
    check();
    out.write(tone());
    out.write(tone());
    check(); // ahead
    for (let i = 0; i < 6; i++) {
      clock.advance(9);
      check();
      clock.advance(11);
      check();
      out.write(tone()); // after slot 80's empty slot: rejoining, ahead again
      check();
    }
    clock.advance(200);
    check();
    out.close();
  });

  it('waits for the slot: mid-talkspurt, ptime 30, DTMF under way, before the first slot, and while the next slot is overdue', () => {
    // Mid-talkspurt: only the first packet of a reply goes early.
    {
      const { clock, out, audible } = setup();
      clock.advance(5);
      out.write(tone());
      out.write(tone());
      clock.advance(3);
      out.write(tone());
      clock.advance(100);
      expect(audible().map((p) => p.atMs)).toEqual([5, 20, 40]);
      out.close();
    }
    // ptime 30: one frame is not a packet.
    {
      const { clock, out, audible } = setup({ ptimeMs: 30 });
      clock.advance(37);
      out.write(tone());
      out.write(tone());
      clock.advance(100);
      expect(audible()[0]!.atMs).toBe(60);
      out.close();
    }
    // A key press under way keeps the line.
    {
      const { clock, sent, out } = setup();
      clock.advance(5);
      out.sendDtmf('5', { durationMs: 40 }).catch(() => undefined);
      clock.advance(20);
      out.write(tone());
      expect(sent.at(-1)!.payloadType).toBe(101);
      out.close();
    }
    // No grid yet: the first slot (due at once) sends it.
    {
      const { clock, sent, out } = setup();
      out.write(tone());
      expect(sent).toHaveLength(0);
      clock.advance(0);
      expect(sent[0]).toMatchObject({ atMs: 0, marker: true });
      out.close();
    }
  });

  it('after a stall the overdue slot goes first: a write before it waits, and timestamps follow real time', () => {
    const manual = new ManualClock(0);
    let stallNext = 0;
    const clock = {
      now: () => manual.now(),
      monotonic: () => manual.monotonic(),
      setTimeout: (fn: () => void, ms: number) => {
        const extra = stallNext;
        stallNext = 0;
        return manual.setTimeout(fn, ms + extra);
      },
    };
    const sent: Sent[] = [];
    const out = new OutboundPath(pcmuMedia(), { clock, send: (p) => sent.push({ ...p, atMs: manual.monotonic() }), initialTimestamp: TS0 });
    out.setSending(true);
    manual.advance(40); // 0, 20, 40; the timer for 60 is armed
    stallNext = 100;
    manual.advance(20); // 60; the timer for 80 fires at 180
    manual.advance(110);
    out.write(tone()); // at 170: slots 80..160 are overdue, so no early packet stamped 80
    expect(sent.at(-1)!.atMs).toBe(60);
    manual.advance(10);
    const first = sent.find((p) => p.marker)!;
    expect(first.atMs).toBe(180);
    // At 180 six slots are due: 80..120 are skipped, 140..180 caught up. The reply is stamped
    // 140's (real time as far as the catch-up goes), not the stalled slot 80's.
    expect(first.timestamp).toBe(TS0 + 7 * 160);
    expect(sent.filter((p) => p.atMs === 180).map((p) => p.timestamp)).toEqual([7, 8, 9].map((n) => TS0 + n * 160));
    out.close();
  });
});
