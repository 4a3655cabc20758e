/** The session's socket-free parts on a ManualClock: queue, ticker, outbound slots, inbound playout. */
import { describe, expect, it } from 'vitest';
import { rms } from '../../../src/audio/frame.ts';
import { ulaw } from '../../../src/media/codecs/g711.ts';
import type { AudioFrame } from '../../../src/audio/frame.ts';
import { serializeRtp, parseRtp, type RtpPacket } from '../../../src/media/rtp-packet.ts';
import { InboundPath } from '../../../src/media/rtp-session-inbound.ts';
import { OutboundPath, type OutboundPacket } from '../../../src/media/rtp-session-outbound.ts';
import { DropOldestQueue } from '../../../src/media/rtp-session-queue.ts';
import { DeadlineTicker } from '../../../src/media/rtp-session-ticker.ts';
import type { NegotiatedMedia } from '../../../src/media/sdp-negotiate.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { pcmuMedia } from '../../support/negotiated-media.ts';

const media = pcmuMedia;

const tone = (level = 8000): AudioFrame => ({ samples: new Int16Array(320).map((_, i) => (i % 16 < 8 ? level : -level)), sampleRate: 16_000 });

describe('DropOldestQueue', () => {
  it('hands items to a waiting reader, drops the oldest when full, ends cleanly', async () => {
    const q = new DropOldestQueue<number>(3);
    const it = q[Symbol.asyncIterator]();
    const waiting = it.next();
    q.push(1);
    expect(await waiting).toEqual({ value: 1, done: false });
    for (let i = 2; i <= 7; i++) q.push(i);
    expect(q.dropped).toBe(3);
    q.end();
    expect(q.push(8)).toBe(false);
    const rest: number[] = [];
    for await (const n of q) rest.push(n);
    expect(rest).toEqual([5, 6, 7]);
  });
});

describe('DeadlineTicker', () => {
  it('fires on start + n × interval, catches up a short stall, skips a long one', () => {
    const manual = new ManualClock();
    // Per timer armed: how late it fires, as after a blocked event loop.
    const stalls = [0, 50, 150];
    const clock = {
      now: () => manual.now(),
      monotonic: () => manual.monotonic(),
      setTimeout: (fn: () => void, ms: number) => {
        return manual.setTimeout(fn, ms + (stalls.shift() ?? 0));
      },
    };
    const fired: number[] = [];
    const t = new DeadlineTicker(clock, 20, (late) => fired.push(late), 3);
    t.start();
    manual.advance(70);
    expect(fired).toEqual([0, 50, 30, 10]);
    fired.length = 0;
    manual.advance(160);
    expect(fired).toEqual([50, 30, 10]);
    expect(t.stats.skippedSlots).toBe(5);
    t.stop();
    manual.advance(1000);
    expect(fired.length).toBe(3);
    expect(manual.pendingCount).toBe(0);
  });
});

describe('OutboundPath', () => {
  function setup(over: Partial<NegotiatedMedia> = {}) {
    const clock = new ManualClock();
    const sent: OutboundPacket[] = [];
    const out = new OutboundPath(media(over), { clock, send: (p) => sent.push({ ...p }), initialTimestamp: 1000 });
    out.setSending(true);
    return { clock, sent, out };
  }

  it('sends one packet per slot: silence while idle, audio with a marker, then silence again', () => {
    const { clock, sent, out } = setup();
    clock.advance(40); // slots at 0, 20, 40: silence
    out.write(tone());
    out.write(tone());
    clock.advance(60);
    expect(sent.map((p) => p.timestamp)).toEqual([1000, 1160, 1320, 1480, 1640, 1800]);
    const loud = sent.map((p) => rms(ulaw.decode(p.payload)) > 0.1);
    expect(loud).toEqual([false, false, false, true, true, false]);
    expect(sent.map((p) => p.marker)).toEqual([false, false, false, true, false, false]);
    out.close();
    expect(clock.pendingCount).toBe(0);
  });

  it('flush() empties the queue at once and marks the next talkspurt', () => {
    const { clock, sent, out } = setup();
    for (let i = 0; i < 10; i++) out.write(tone());
    clock.advance(20);
    expect(out.flush()).toBe(8);
    expect(out.playing).toBe(false);
    out.write(tone());
    clock.advance(20);
    expect(sent.map((p) => p.marker)).toEqual([true, false, true]);
    out.close();
  });

  it('DTMF takes over the slots, keeps the event timestamp, and holds audio back', async () => {
    const { clock, sent, out } = setup();
    for (let i = 0; i < 20; i++) out.write(tone());
    const done = out.sendDtmf('1', { durationMs: 60 });
    clock.advance(200);
    await done;
    const events = sent.filter((p) => p.payloadType === 101);
    expect(events.length).toBe(5); // 2 updates + 3 end packets
    expect(new Set(events.map((p) => p.timestamp)).size).toBe(1);
    expect(events[0]!.marker).toBe(true);
    expect(sent[0]!.payloadType).toBe(101); // audio waited for the key press
    expect(out.counters.dtmfSent).toBe(1);
    out.close();
  });

  it('on hold sends nothing and refuses frames; close rejects pending DTMF', async () => {
    const { clock, sent, out } = setup();
    out.setSending(false);
    expect(out.write(tone())).toBe(false);
    clock.advance(100);
    expect(sent.length).toBe(0);
    out.setSending(true);
    const pending = out.sendDtmf('12');
    out.close();
    await expect(pending).rejects.toMatchObject({ code: 'MEDIA_CLOSED' });
  });
});

describe('InboundPath', () => {
  const packet = (seq: number, payload = new Uint8Array(160).fill(0x10)): RtpPacket => {
    const parsed = parseRtp(serializeRtp({ payloadType: 0, sequenceNumber: seq, timestamp: seq * 160, ssrc: 7, payload }));
    if (!parsed.ok) throw new Error('bad packet');
    return parsed.packet;
  };

  it('plays one frame per slot: silence before media, decoded audio after, from the SDP source only', () => {
    const queue = new DropOldestQueue<AudioFrame>(100);
    const latched: unknown[] = [];
    const path = new InboundPath(media(), 0, queue, { dtmf: () => undefined, latched: (s) => latched.push(s) });
    const from = { address: '192.0.2.1', port: 4000 };
    let now = 0;
    for (let i = 0; i < 3; i++, now += 20) path.playout(now);
    for (let seq = 1; seq <= 10; seq++, now += 20) {
      path.receive(packet(seq), from, now);
      path.receive(packet(seq + 500), { address: '198.51.100.9', port: 4000 }, now);
      path.playout(now);
    }
    expect(queue.size).toBe(13);
    expect(path.counters.silenceFrames).toBeGreaterThanOrEqual(3);
    expect(path.counters.framesDelivered).toBe(13);
    expect(path.droppedByFilter).toBe(10);
    expect(latched).toEqual([from]);
    expect(path.counters.packets).toBe(10);
  });
});
