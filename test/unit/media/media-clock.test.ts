/**
 * Stalls and the shared media clock on a ManualClock: outbound RTP keeps following real time
 * after an event-loop stall (bench/tools/outbound-stall.ts), lateness is reported at its full
 * length, stall time is paid back without cutting speech, and one scheduler timer serves every
 * session's loops.
 */
import { describe, expect, it } from 'vitest';
import { rms, type AudioFrame } from '../../../src/audio/frame.ts';
import { ulaw } from '../../../src/media/codecs/g711.ts';
import { pcmu } from '../../../src/media/codecs/pcmu.ts';
import { OutboundTranscoder } from '../../../src/media/codecs/transcode.ts';
import { MediaScheduler, PHASES, beforeEachMediaPass, createTicker, type TickerFactory } from '../../../src/media/media-clock.ts';
import { OutboundPath, type OutboundPacket } from '../../../src/media/rtp-session-outbound.ts';
import { DeadlineTicker } from '../../../src/media/rtp-session-ticker.ts';
import { ManualClock, type Clock } from '../../../src/util/clock.ts';
import { pcmuMedia } from '../../support/negotiated-media.ts';

const media = pcmuMedia();

const tone = (level = 8000): AudioFrame => ({ samples: new Int16Array(320).map((_, i) => (i % 16 < 8 ? level : -level)), sampleRate: 16_000 });
const quiet = (): AudioFrame => ({ samples: new Int16Array(320).fill(3), sampleRate: 16_000 });
const loud = (p: OutboundPacket): boolean => rms(ulaw.decode(p.payload)) > 0.1;

/** A clock whose next timer fires `stall` ms late once: one blocked event loop. */
function stallingClock() {
  const manual = new ManualClock(0);
  let stallNext = 0;
  const clock: Clock = {
    now: () => manual.now(),
    monotonic: () => manual.monotonic(),
    setTimeout: (fn, ms) => {
      const extra = stallNext;
      stallNext = 0;
      return manual.setTimeout(fn, ms + extra);
    },
  };
  return { manual, clock, stall: (ms: number) => (stallNext = ms) };
}

const own: TickerFactory = (clock, interval, onSlot, maxCatchUp) => new DeadlineTicker(clock, interval, onSlot, maxCatchUp);

describe.each([
  ['its own DeadlineTicker', own],
  ['the shared MediaScheduler', createTicker],
] as const)('OutboundPath after a 200 ms stall, on %s', (_name, ticker) => {
  function setup() {
    const { manual, clock, stall } = stallingClock();
    const sent: Array<OutboundPacket & { at: number }> = [];
    const out = new OutboundPath(media, { clock, ticker, send: (p) => sent.push({ ...p, at: manual.monotonic() }), initialTimestamp: 0 });
    out.setSending(true);
    return { manual, stall, sent, out };
  }

  it('advances the RTP timestamp by the skipped slots, marks the next audio packet, reports the whole lateness', () => {
    const { manual, stall, sent, out } = setup();
    for (let i = 0; i < 50; i++) out.write(tone());
    manual.advance(60); // slots 0..3 on time; slot 4's timer is armed, slot 5's is armed at 80
    stall(200); // ... and fires at 300: slots 5..15 are due, 8 are skipped, 3 caught up
    manual.advance(320);
    expect(sent.map((p) => p.timestamp / 8)).toEqual([0, 20, 40, 60, 80, 260, 280, 300, 320, 340, 360, 380]);
    expect(sent.map((p) => p.at)).toEqual([0, 20, 40, 60, 80, 300, 300, 300, 320, 340, 360, 380]);
    expect(sent.map((p) => p.marker)).toEqual([true, false, false, false, false, true, false, false, false, false, false, false]);
    expect(out.tickerStats.skippedSlots).toBe(8);
    expect(out.tickerStats.maxLateMs).toBeGreaterThanOrEqual(200);
    // Speech is kept: the 160 ms owed is below maxLagMs and the tone has no pause to take it from.
    expect(out.counters.lateFramesDropped).toBe(0);
    expect(sent.every(loud)).toBe(true);
    out.close();
    expect(manual.pendingCount).toBe(0);
  });

  it('a real-time writer gets back to its pre-stall delay at the next pause', () => {
    const { manual, stall, out } = setup();
    const queued = () => (out as unknown as { queue: AudioFrame[] }).queue.length;
    // The producer writes one frame per slot, one frame ahead, as an echo does.
    out.write(tone());
    for (let i = 0; i < 5; i++) {
      manual.advance(20);
      out.write(tone());
    }
    const before = queued();
    stall(200);
    manual.advance(20);
    manual.advance(200); // the stalled timer fires; then the producer catches up its 10 slots
    for (let i = 0; i < 10; i++) out.write(tone());
    expect(queued()).toBeGreaterThan(before + 5);
    // A pause in the producer's audio reaches the head of the queue: the lag is paid from it.
    for (let i = 0; i < 40; i++) {
      manual.advance(20);
      out.write(i < 8 ? quiet() : tone());
    }
    expect(out.counters.lateFramesDropped).toBe(8);
    expect(queued()).toBe(before);
    out.close();
  });

  it('a stall while the line is idle owes nothing: the reply written after it keeps its start', () => {
    const { manual, stall, sent, out } = setup();
    manual.advance(60);
    stall(300);
    manual.advance(400); // the stalled timer fires at 400: slots skipped with nothing queued
    expect(out.tickerStats.skippedSlots).toBeGreaterThan(10);
    const before = sent.length;
    // A reply starting with a quiet onset, as synthesized speech does, written right after.
    for (let i = 0; i < 30; i++) out.write(i < 5 ? quiet() : tone());
    manual.advance(30 * 20);
    expect(out.counters.lateFramesDropped).toBe(0);
    const reply = sent.slice(before);
    expect(reply.filter(loud)).toHaveLength(25);
    out.close();
  });

  it('drops what is hopelessly late (beyond maxLagMs) even without a pause', () => {
    const { manual, clock, stall } = stallingClock();
    const out = new OutboundPath(media, { clock, ticker, send: () => undefined, initialTimestamp: 0, maxLagMs: 100 });
    out.setSending(true);
    for (let i = 0; i < 100; i++) out.write(tone());
    manual.advance(20); // slots 0, 1; slot 2's timer armed; slot 3's (due at 60) is armed at 40 ...
    stall(500); // ... and fires at 560
    manual.advance(540);
    // 26 slots due at 560, 3 served, 23 skipped = 460 ms owed; 100 ms of it may stay.
    expect(out.tickerStats.skippedSlots).toBe(23);
    expect(out.counters.lateFramesDropped).toBe(23 - 5);
    out.close();
  });
});

describe('OutboundPath comfort silence', () => {
  it('reuses the cached G.711 silence payload once the resampler tail has gone out', () => {
    const t = new OutboundTranscoder(pcmu, 20);
    const a = t.encodeSilence();
    t.encodeSilence();
    const first = t.encodeSilence()[0];
    expect(t.encodeSilence()[0]).toBe(first); // the same Buffer, not re-encoded
    expect(a[0]!.equals(first!)).toBe(true);
    t.encode(tone());
    const tail = t.encodeSilence()[0]!;
    expect(tail).not.toBe(first); // the filter tail of the tone is still encoded for real
    expect(rms(ulaw.decode(tail))).toBeGreaterThan(0);
    t.encodeSilence();
    expect(t.encodeSilence()[0]).toBe(first);
    t.close();
  });
});

describe('MediaScheduler', () => {
  it('serves every member from one timer, spread over phases, and leaves nothing armed', () => {
    const clock = new ManualClock(0);
    const scheduler = new MediaScheduler(clock, 20);
    const fired: Array<[number, number]> = [];
    // Four sessions a phase, whatever PHASES is.
    const each = 4;
    const tickers = Array.from({ length: each * PHASES }, (_, id) => scheduler.ticker(() => fired.push([id, clock.monotonic()]), 3, { id }));
    for (const t of tickers) t.start();
    expect(clock.pendingCount).toBe(1);
    clock.advance(0);
    expect(fired.length).toBe(tickers.length); // first slot at once, like DeadlineTicker
    fired.length = 0;
    clock.advance(20);
    // The phases of the 20 ms slot, 20 / PHASES ms apart, `each` sessions each (phase 0's next at 20).
    const step = 20 / PHASES;
    const expected = Array.from({ length: PHASES }, (_, p) => Array<number>(each).fill((p + 1) * step)).flat();
    expect(fired.map(([, at]) => at)).toEqual(expected);
    expect(clock.pendingCount).toBe(1);
    for (const t of tickers) t.stop();
    expect(clock.pendingCount).toBe(0);
    expect(scheduler.size).toBe(0);
  });

  it('a session keeps its phase for both loops, catches up short stalls and reports skips', () => {
    const { manual, clock, stall } = stallingClock();
    const scheduler = new MediaScheduler(clock, 20);
    const lane = {};
    const a: Array<[number, number]> = [];
    const b: Array<[number, number]> = [];
    const playout = scheduler.ticker((late, skipped) => a.push([late, skipped]), 10, lane);
    const send = scheduler.ticker((late, skipped) => b.push([late, skipped]), 3, lane);
    playout.start();
    send.start();
    manual.advance(40); // 0, 20, 40; the timer for 60 is armed
    stall(200);
    manual.advance(20); // 60; the timer for 80 fires at 280
    manual.advance(220);
    expect(a.slice(4)).toEqual([[180, 1], [160, 0], [140, 0], [120, 0], [100, 0], [80, 0], [60, 0], [40, 0], [20, 0], [0, 0]]);
    expect(b.slice(4)).toEqual([[40, 8], [20, 0], [0, 0]]);
    expect(playout.stats).toEqual({ skippedSlots: 1, maxLateMs: 200 });
    expect(send.stats).toEqual({ skippedSlots: 8, maxLateMs: 200 });
    playout.stop();
    send.stop();
    expect(manual.pendingCount).toBe(0);
  });

  it('serves the send loops of a pass before the other members, whenever they joined', () => {
    const clock = new ManualClock(0);
    const scheduler = new MediaScheduler(clock, 20);
    const served: Array<[string, number]> = [];
    const session = (k: number) => {
      const lane = {};
      return [
        scheduler.ticker(() => served.push([`in${k}`, clock.monotonic()]), 10, lane),
        scheduler.ticker(() => served.push([`out${k}`, clock.monotonic()]), 3, lane, true),
      ];
    };
    /** Each pass's members in serving order. */
    const passes = (): string[][] => {
      const by = new Map<number, string[]>();
      for (const [name, at] of served) by.set(at, [...(by.get(at) ?? []), name]);
      return [...by.values()];
    };
    const sendsFirst = (pass: string[]): boolean => {
      const sends = pass.filter((n) => n.startsWith('out'));
      return pass.slice(0, sends.length).every((n) => n.startsWith('out'));
    };
    // Four sessions a phase, each joining playout loop first.
    const first = 4 * PHASES;
    const tickers = Array.from({ length: first }, (_, k) => session(k)).flat();
    for (const t of tickers) t.start();
    clock.advance(0);
    expect(passes()[0]!.slice(0, first).every((n) => n.startsWith('out'))).toBe(true);
    // Two more a phase join during a pass (from a member's handler): served in it if due, and
    // in send-first order from the next pass on.
    const joining = Array.from({ length: 2 * PHASES }, (_, k) => session(first + k)).flat();
    const starter = scheduler.ticker(() => {
      if (!joining[0]!.isRunning) for (const t of joining) t.start();
    }, 3);
    starter.start();
    clock.advance(20);
    served.length = 0;
    clock.advance(40);
    const later = passes();
    expect(later.length).toBeGreaterThanOrEqual(2 * PHASES);
    for (const pass of later) {
      // Each phase's four first sessions and two that joined.
      expect(pass.filter((n) => n.startsWith('out')).length).toBe(4 + 2);
      expect(sendsFirst(pass), pass.join(' ')).toBe(true);
    }
    for (const t of [...tickers, ...joining, starter]) t.stop();
    expect(clock.pendingCount).toBe(0);
  });

  it('one member throwing does not starve the others; the error surfaces after the pass', () => {
    const clock = new ManualClock(0);
    const scheduler = new MediaScheduler(clock, 20);
    let served = 0;
    const bad = scheduler.ticker(() => {
      throw new Error('boom');
    });
    const good = scheduler.ticker(() => served++);
    bad.start();
    good.start();
    expect(() => clock.advance(0)).toThrow('boom');
    expect(served).toBe(1);
    bad.stop();
    clock.advance(20);
    expect(served).toBe(2);
    good.stop();
    expect(clock.pendingCount).toBe(0);
  });

  it('runs the pass hooks at the start of every pass, before any member, until unregistered', () => {
    const clock = new ManualClock(0);
    const scheduler = new MediaScheduler(clock, 20);
    const log: string[] = [];
    const unhook = beforeEachMediaPass(() => log.push(`hook@${clock.monotonic()}`));
    const tickers = [0, 1].map((id) => scheduler.ticker(() => log.push(`m${id}@${clock.monotonic()}`), 3, { id }));
    for (const t of tickers) t.start();
    const step = 20 / PHASES;
    clock.advance(step);
    // One pass for the slot due at once (both members), one for the second phase's next slot
    // (with one phase, both members' next slot).
    const next = PHASES > 1 ? [`m1@${step}`] : [`m0@${step}`, `m1@${step}`];
    expect(log).toEqual(['hook@0', 'm0@0', 'm1@0', `hook@${step}`, ...next]);
    unhook();
    log.length = 0;
    clock.advance(20);
    expect(log).toEqual(PHASES > 1 ? ['m0@20', `m1@${20 + step}`] : ['m0@40', 'm1@40']);
    for (const t of tickers) t.stop();
  });

  it('a hook that throws does not stop the pass; the error surfaces after it', () => {
    const clock = new ManualClock(0);
    const scheduler = new MediaScheduler(clock, 20);
    let served = 0;
    const unhook = beforeEachMediaPass(() => {
      throw new Error('drain failed');
    });
    const member = scheduler.ticker(() => served++);
    try {
      member.start();
      expect(() => clock.advance(0)).toThrow('drain failed');
      expect(served).toBe(1);
    } finally {
      unhook();
      member.stop();
    }
  });
});
