import { describe, expect, it } from 'vitest';
import { FramePacer, PacingSchedule, rtpTimestampForSlot, type PacedSend } from '../../../src/media/pacer.ts';
import { ManualClock, type Clock, type Timer } from '../../../src/util/clock.ts';
import { prng } from './prng.ts';

/** A ManualClock whose timers fire up to `maxLateMs` late, like a busy event loop. */
function sluggish(clock: ManualClock, maxLateMs: number, seed = 1): Clock {
  const rand = prng(seed);
  return {
    now: () => clock.now(),
    monotonic: () => clock.monotonic(),
    setTimeout: (fn: () => void, ms: number): Timer => clock.setTimeout(fn, ms + Math.floor(rand() * (maxLateMs + 1))),
  };
}

const TEN_MINUTES_OF_FRAMES = (10 * 60 * 1000) / 20;

describe('PacingSchedule', () => {
  it('computes deadlines as start + n × frame, exact after 10 minutes', () => {
    const s = new PacingSchedule(1_000.5, 20);
    expect(s.dueAt(0)).toBe(1_000.5);
    expect(s.dueAt(TEN_MINUTES_OF_FRAMES)).toBe(1_000.5 + 600_000);
    // A running sum of a non-representable period drifts; the product does not.
    const odd = new PacingSchedule(0, 0.1);
    let sum = 0;
    for (let i = 0; i < TEN_MINUTES_OF_FRAMES; i++) sum += 0.1;
    expect(Math.abs(sum - TEN_MINUTES_OF_FRAMES * 0.1)).toBeGreaterThan(1e-9);
    expect(odd.dueAt(TEN_MINUTES_OF_FRAMES)).toBeCloseTo(3000, 9);
  });

  it('says how many frames are due and late', () => {
    const s = new PacingSchedule(100, 20);
    expect(s.slotAt(99)).toBe(-1);
    expect(s.dueCount(0, 99)).toBe(0);
    expect(s.dueCount(0, 100)).toBe(1);
    expect(s.dueCount(0, 165)).toBe(4);
    expect(s.lateFrames(0, 165)).toBe(3);
    expect(s.lateFrames(4, 165)).toBe(0);
    expect(s.delayUntil(4, 165)).toBe(15);
  });

  it('derives RTP timestamps from the frame count, wrapping at 2^32', () => {
    expect(rtpTimestampForSlot(1000, 3, 160)).toBe(1480);
    expect(rtpTimestampForSlot(0xffff_ff00, 2, 160)).toBe(0x40);
    expect(rtpTimestampForSlot(0, TEN_MINUTES_OF_FRAMES, 160)).toBe(TEN_MINUTES_OF_FRAMES * 160);
  });
});

describe('FramePacer', () => {
  it('sends 10 minutes of frames on their deadlines without drift, despite late timers', () => {
    const manual = new ManualClock(0);
    const start = manual.monotonic();
    const sent: Array<PacedSend<number> & { at: number }> = [];
    const pacer = new FramePacer<number>({
      clock: sluggish(manual, 4),
      samplesPerFrame: 160,
      baseTimestamp: 12_345,
      send: (f) => sent.push({ ...f, at: manual.monotonic() }),
    });
    for (let i = 0; i < TEN_MINUTES_OF_FRAMES; i++) pacer.enqueue(i);
    // In 1 s steps: ManualClock prunes fired timers per advance(), so one huge step is quadratic.
    for (let t = 0; t <= 600_000; t += 1000) manual.advance(1000);

    expect(sent).toHaveLength(TEN_MINUTES_OF_FRAMES);
    let worst = 0;
    let early = 0;
    let misordered = 0;
    for (const [i, f] of sent.entries()) {
      const due = start + i * 20;
      if (f.item !== i) misordered++;
      if (f.at < due) early++;
      worst = Math.max(worst, f.at - due);
    }
    expect({ early, misordered }).toEqual({ early: 0, misordered: 0 });
    // Lateness never accumulates: the last frame is as close to its deadline as the first.
    expect(worst).toBeLessThanOrEqual(4);
    expect(sent.at(-1)!.at - (start + (TEN_MINUTES_OF_FRAMES - 1) * 20)).toBeLessThanOrEqual(4);
    expect(sent.at(-1)!.rtpTimestamp).toBe(12_345 + (TEN_MINUTES_OF_FRAMES - 1) * 160);
    expect(sent.filter((f) => f.marker).map((f) => f.index)).toEqual([0]);
    expect(manual.pendingCount).toBe(0);
  });

  it('flushes queued frames instantly for barge-in and resumes on the grid with a marker', () => {
    const clock = new ManualClock(0);
    const sent: PacedSend<string>[] = [];
    const pacer = new FramePacer<string>({ clock, samplesPerFrame: 160, send: (f) => sent.push(f) });
    for (let i = 0; i < 50; i++) pacer.enqueue(`tts-${i}`);
    clock.advance(105);
    expect(sent).toHaveLength(6);
    expect(pacer.flush()).toBe(44);
    expect(clock.pendingCount).toBe(0);
    clock.advance(1000);
    expect(sent).toHaveLength(6);

    pacer.enqueue('reply');
    clock.advance(20);
    const reply = sent.at(-1)!;
    expect(reply.item).toBe('reply');
    expect(reply.marker).toBe(true);
    // Time went on while we were quiet, and so did the timestamp.
    expect(reply.index).toBe(55);
    expect(reply.rtpTimestamp).toBe(55 * 160);
    expect(pacer.stats).toMatchObject({ sent: 7, flushed: 44, queued: 0 });
  });

  it('keeps consecutive frames 20 ms apart across an idle gap that ends mid-slot', () => {
    const clock = new ManualClock(0);
    const at: number[] = [];
    const pacer = new FramePacer<number>({ clock, samplesPerFrame: 160, send: () => at.push(clock.monotonic()) });
    pacer.enqueue(1);
    clock.advance(0);
    clock.advance(47);
    pacer.enqueue(2);
    pacer.enqueue(3);
    clock.advance(100);
    expect(at).toEqual([0, 47, 60]);
  });

  it('skips slots instead of bursting after a long stall', () => {
    const manual = new ManualClock(0);
    let stallOnce = true;
    const clock: Clock = {
      now: () => manual.now(),
      monotonic: () => manual.monotonic(),
      setTimeout: (fn, ms) => {
        const extra = stallOnce && manual.monotonic() >= 100 ? 500 : 0;
        if (extra) stallOnce = false;
        return manual.setTimeout(fn, ms + extra);
      },
    };
    const sent: Array<PacedSend<number> & { at: number }> = [];
    const pacer = new FramePacer<number>({ clock, samplesPerFrame: 160, maxCatchUpFrames: 3, send: (f) => sent.push({ ...f, at: manual.monotonic() }) });
    for (let i = 0; i < 100; i++) pacer.enqueue(i);
    manual.advance(3000);
    const burst = sent.filter((f) => f.at === sent.find((g) => g.at > 200)!.at);
    expect(burst).toHaveLength(1);
    expect(pacer.stats.skippedSlots).toBeGreaterThan(20);
    const resumed = burst[0]!;
    expect(resumed.marker).toBe(true);
    expect(resumed.rtpTimestamp).toBe(resumed.index * 160);
    expect(sent.map((f) => f.item)).toEqual([...Array(100).keys()]);
  });

  it('sends nothing and holds no timer after close', () => {
    const clock = new ManualClock(0);
    const sent: unknown[] = [];
    const pacer = new FramePacer<number>({ clock, samplesPerFrame: 160, send: (f) => sent.push(f) });
    pacer.enqueue(1);
    pacer.enqueue(2);
    clock.advance(0);
    pacer.close();
    pacer.enqueue(3);
    clock.advance(1000);
    expect(sent).toHaveLength(1);
    expect(clock.pendingCount).toBe(0);
  });
});
