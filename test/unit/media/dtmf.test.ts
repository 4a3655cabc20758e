import { describe, expect, it } from 'vitest';
import {
  DtmfReceiver,
  digitToEvent,
  eventToDigit,
  parseDtmfPayload,
  planDtmf,
  serializeDtmfPayload,
  type DtmfDigit,
  type DtmfEvent,
  type DtmfPacket,
} from '../../../src/media/dtmf.ts';

/** A key press as a typical SIP phone sends it: 50 ms updates, three end packets. */
function keyPress(event: number, timestamp: number, durations: number[], endDuration: number): DtmfPacket[] {
  const updates = durations.map((duration, i) => ({
    marker: i === 0,
    timestamp,
    payload: serializeDtmfPayload({ event, end: false, volume: 10, duration }),
  }));
  const end = { marker: false, timestamp, payload: serializeDtmfPayload({ event, end: true, volume: 10, duration: endDuration }) };
  return [...updates, end, end, end];
}

function digits(events: DtmfEvent[]): DtmfDigit[] {
  return events.filter((e): e is DtmfDigit => e.type === 'digit');
}

describe('DTMF payload', () => {
  it('parses the RFC 4733 layout', () => {
    // Event 5, E=1, volume 10, duration 1600 (200 ms at 8 kHz).
    expect(parseDtmfPayload(Uint8Array.of(0x05, 0x8a, 0x06, 0x40))).toEqual({ event: 5, end: true, volume: 10, duration: 1600 });
    expect(parseDtmfPayload(Uint8Array.of(1, 2, 3))).toBeUndefined();
  });

  it('maps digits and events both ways', () => {
    expect([...'0123456789*#ABCD'].map((d) => digitToEvent(d))).toEqual([...Array(16).keys()]);
    expect(eventToDigit(11)).toBe('#');
    expect(eventToDigit(16)).toBe('flash');
    expect(eventToDigit(17)).toBeUndefined();
    expect(digitToEvent('x')).toBeUndefined();
    expect(digitToEvent('12')).toBeUndefined();
  });
});

describe('DtmfReceiver', () => {
  it('turns a realistic packet series with retransmitted ends into exactly one digit', () => {
    const rx = new DtmfReceiver();
    // "7" held for 240 ms: start marked, updates at 50 ms spacing, a duplicated update, 3 ends.
    const packets = keyPress(7, 123_456, [400, 800, 800, 1200, 1600], 1920);
    const out: DtmfEvent[] = [];
    packets.forEach((p, i) => out.push(...rx.receive(p, i * 50)));
    expect(out[0]).toEqual({ type: 'start', digit: '7', event: 7, timestamp: 123_456 });
    const got = digits(out);
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ digit: '7', durationTs: 1920, durationMs: 240, endedBy: 'end-bit', volume: 10 });
    // Late stragglers of the same event (same timestamp) change nothing.
    expect(rx.receive(packets[2]!, 900)).toEqual([]);
    expect(rx.receive(packets.at(-1)!, 950)).toEqual([]);
    expect(rx.poll(5000)).toEqual([]);
  });

  it('reports a digit whose first packets (with the marker) were lost', () => {
    const rx = new DtmfReceiver();
    const packets = keyPress(1, 8000, [400, 800], 1000).slice(1);
    const got = digits(packets.flatMap((p, i) => rx.receive(p, i * 50)));
    expect(got).toEqual([expect.objectContaining({ digit: '1', durationTs: 1000 })]);
  });

  it('reports a digit whose end packets were all lost, once, on timeout', () => {
    const rx = new DtmfReceiver({ endTimeoutMs: 500 });
    const packets = keyPress(9, 1000, [400, 800, 1200], 1600).slice(0, 3);
    packets.forEach((p, i) => rx.receive(p, i * 50));
    expect(rx.inProgress).toBe(true);
    expect(rx.poll(300)).toEqual([]);
    expect(rx.poll(700)).toEqual([expect.objectContaining({ digit: '9', durationTs: 1200, endedBy: 'timeout' })]);
    expect(rx.poll(2000)).toEqual([]);
  });

  it('separates two presses of the same key by their timestamps', () => {
    const rx = new DtmfReceiver();
    const first = keyPress(4, 1000, [400], 800);
    const second = keyPress(4, 1000 + 4000, [400], 640);
    const got = digits([...first, ...second].flatMap((p, i) => rx.receive(p, i * 50)));
    expect(got.map((d) => [d.digit, d.durationTs, d.timestamp])).toEqual([
      ['4', 800, 1000],
      ['4', 640, 5000],
    ]);
  });

  it('closes an unfinished event when a newer one starts and ignores stale packets of older ones', () => {
    const rx = new DtmfReceiver();
    const a = keyPress(2, 1000, [400, 800], 1000);
    const b = keyPress(3, 9000, [400], 800);
    const out = [...a.slice(0, 2), ...b].flatMap((p, i) => rx.receive(p, i * 50));
    expect(digits(out).map((d) => [d.digit, d.endedBy])).toEqual([
      ['2', 'superseded'],
      ['3', 'end-bit'],
    ]);
    expect(rx.receive(a.at(-1)!, 1000)).toEqual([]);
  });

  it('ignores non-DTMF events and short payloads', () => {
    const rx = new DtmfReceiver();
    expect(rx.receive({ marker: true, timestamp: 1, payload: serializeDtmfPayload({ event: 36, end: true, volume: 0, duration: 10 }) }, 0)).toEqual([]);
    expect(rx.receive({ marker: true, timestamp: 1, payload: Uint8Array.of(1) }, 0)).toEqual([]);
  });

  it('joins the segments of an event longer than 65535 timestamp units', () => {
    const rx = new DtmfReceiver();
    const seg1 = keyPress(0, 1000, [400, 65_535], 65_535).slice(0, 2); // no end: segment maxed out
    const seg2 = keyPress(0, 1000 + 65_535, [800], 8000);
    seg2[0] = { ...seg2[0]!, marker: false };
    const got = digits([...seg1, ...seg2].flatMap((p, i) => rx.receive(p, i * 50)));
    expect(got).toEqual([expect.objectContaining({ digit: '0', durationTs: 65_535 + 8000, timestamp: 1000 })]);
  });
});

describe('planDtmf (send side)', () => {
  it('plans a marked start, 20 ms updates and three identical end packets', () => {
    const plan = planDtmf('5', { durationMs: 100 });
    expect(plan.map((s) => s.offsetMs)).toEqual([0, 20, 40, 60, 80, 100, 120]);
    expect(plan.map((s) => s.marker)).toEqual([true, false, false, false, false, false, false]);
    expect(plan.map((s) => s.end)).toEqual([false, false, false, false, true, true, true]);
    expect(plan.map((s) => parseDtmfPayload(s.payload)!.duration)).toEqual([160, 320, 480, 640, 800, 800, 800]);
  });

  it('honours the telephone-event clock rate and update interval', () => {
    const plan = planDtmf('#', { durationMs: 120, intervalMs: 50, clockRate: 48_000 });
    expect(plan.map((s) => parseDtmfPayload(s.payload)!.duration)).toEqual([2400, 4800, 5760, 5760, 5760]);
    expect(plan.map((s) => s.offsetMs)).toEqual([0, 50, 100, 150, 200]);
    expect(() => planDtmf('1', { durationMs: 2000, clockRate: 48_000 })).toThrow(RangeError);
    expect(() => planDtmf('Z')).toThrow(RangeError);
  });

  it('produces sequences the receiver decodes, for every digit, even with packets lost', () => {
    for (const digit of '0123456789*#ABCD') {
      const rx = new DtmfReceiver();
      const timestamp = 0xffff_ff00; // near the wrap, to be sure nothing depends on ordering
      const plan = planDtmf(digit, { durationMs: 160 });
      const got = digits(
        plan
          .filter((_, i) => i !== 1 && i !== plan.length - 2) // one update and one end packet lost
          .flatMap((s) => rx.receive({ marker: s.marker, timestamp, payload: s.payload }, s.offsetMs)),
      );
      expect(got).toEqual([expect.objectContaining({ digit, durationTs: 1280, durationMs: 160, endedBy: 'end-bit' })]);
    }
  });
});
