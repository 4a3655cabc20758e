import { describe, expect, it } from 'vitest';
import { SipStreamFramer } from '../../../src/sip/stream-framer.ts';
import { StreamDeadline } from '../../../src/sip/stream-deadline.ts';

const OPTIONS = '\r\n'.concat(
  'OPTIONS sip:a@example.com SIP/2.0\r\nVia: SIP/2.0/TCP 10.0.0.1;branch=z9hG4bK1\r\nFrom: <sip:b@example.com>;tag=1\r\n',
  'To: <sip:a@example.com>\r\nCall-ID: x\r\nCSeq: 1 OPTIONS\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n',
).slice(2);

/** The transport's use of the core: feed the framer, report what the chunk did. */
function feed(d: StreamDeadline, f: SipStreamFramer, nowMs: number, bytes: string): void {
  const events = f.push(Buffer.from(bytes, 'latin1'));
  d.onInput(nowMs, events.some((e) => e.type === 'message' || e.type === 'ping'), f.midMessage);
}

describe('StreamDeadline', () => {
  it('closes a connection trickling a byte a second at the message deadline, not at the idle timeout', () => {
    const d = new StreamDeadline({ idleTimeoutMs: 300_000, messageTimeoutMs: 10_000 }, 0);
    const f = new SipStreamFramer();
    let now = 0;
    let closedAt: number | undefined;
    // One byte a second, never completing the message; the owner wakes at wakeAtMs.
    for (let i = 0; i < 60 && closedAt === undefined; i++) {
      now = 5_000 + i * 1000;
      if (now >= d.wakeAtMs && d.expired(now)) {
        closedAt = now;
        break;
      }
      feed(d, f, now, OPTIONS[i]!);
    }
    expect(closedAt).toBe(15_000);
    expect(d.expired(15_000)).toBe('message');
    expect(d.expired(14_999)).toBeUndefined();
  });

  it('a complete message resets the idle timer; the next message gets a deadline of its own', () => {
    const d = new StreamDeadline({ idleTimeoutMs: 60_000, messageTimeoutMs: 10_000 }, 0);
    const f = new SipStreamFramer();
    feed(d, f, 1_000, OPTIONS.slice(0, 40));
    expect(d.wakeAtMs).toBe(11_000);
    feed(d, f, 9_000, OPTIONS.slice(40));
    expect(d.wakeAtMs).toBe(69_000);
    // A message and the start of the next in one chunk: the rest is due 10 s from now.
    feed(d, f, 20_000, OPTIONS + OPTIONS.slice(0, 10));
    expect(d.wakeAtMs).toBe(30_000);
    expect(d.expired(30_000)).toBe('message');
  });

  it('keep-alive pings count as traffic; stray CRs and LFs neither extend the connection nor start a deadline', () => {
    const d = new StreamDeadline({ idleTimeoutMs: 60_000, messageTimeoutMs: 10_000 }, 0);
    const f = new SipStreamFramer();
    feed(d, f, 50_000, '\r\n\r\n');
    expect(d.wakeAtMs).toBe(110_000);
    // A lone CRLF (a pong, say), then a LF a second, which never makes a ping: no message begins.
    feed(d, f, 60_000, '\r\n');
    for (let t = 61_000; t < 110_000; t += 1000) {
      feed(d, f, t, '\n');
      expect(d.wakeAtMs).toBe(110_000);
    }
    expect(d.expired(110_000)).toBe('idle');
  });

  it('a message being received is not cut off by the idle timeout', () => {
    const d = new StreamDeadline({ idleTimeoutMs: 60_000, messageTimeoutMs: 10_000 }, 0);
    const f = new SipStreamFramer();
    feed(d, f, 59_000, OPTIONS.slice(0, 30));
    expect(d.expired(60_000)).toBeUndefined();
    feed(d, f, 65_000, OPTIONS.slice(30));
    expect(d.expired(68_999)).toBeUndefined();
    expect(d.wakeAtMs).toBe(125_000);
  });

  it('an inbound connection must bring its first message or ping within the message deadline; stray LFs do not count', () => {
    const d = new StreamDeadline({ idleTimeoutMs: 60_000, messageTimeoutMs: 10_000 }, 0, true);
    const f = new SipStreamFramer();
    feed(d, f, 2_000, '\n');
    feed(d, f, 9_000, OPTIONS.slice(0, 20));
    expect(d.wakeAtMs).toBe(10_000);
    expect(d.expired(10_000)).toBe('message');
    const pinged = new StreamDeadline({ idleTimeoutMs: 60_000, messageTimeoutMs: 10_000 }, 0, true);
    feed(pinged, new SipStreamFramer(), 3_000, '\r\n\r\n');
    expect(pinged.wakeAtMs).toBe(63_000);
  });

  it('sending on the connection keeps it open', () => {
    const d = new StreamDeadline({ idleTimeoutMs: 60_000, messageTimeoutMs: 10_000 }, 0);
    d.onOutput(50_000);
    expect(d.expired(100_000)).toBeUndefined();
    expect(d.expired(110_000)).toBe('idle');
  });
});
