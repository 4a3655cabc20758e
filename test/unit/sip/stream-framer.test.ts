import { describe, expect, it } from 'vitest';
import { header } from '../../../src/sip/message.ts';
import { SipStreamFramer, type FramerEvent } from '../../../src/sip/stream-framer.ts';
import { torture } from './torture-fixtures.ts';

const callIds = (events: FramerEvent[]) =>
  events.map((e) => (e.type === 'message' && e.result.ok ? header(e.result.message, 'call-id') : e.type));

describe('SipStreamFramer', () => {
  it('emits back-to-back messages from one chunk', () => {
    const f = new SipStreamFramer();
    const events = f.push(Buffer.concat([torture('esc01'), torture('mpart01'), torture('zeromf')]));
    expect(callIds(events)).toEqual([
      'esc01.239409asdfakjkn23onasd0-3234',
      '3d9485ad0c49859b@Zmx1ZmZ5LW1hYy0xNi5sb2NhbA..',
      'zeromf.jfasdlfnm2o2l43r5u0asdfas',
    ]);
    expect(f.buffered).toBe(0);
  });

  it('reassembles a message fed one byte at a time', () => {
    const f = new SipStreamFramer();
    const input = torture('mpart01');
    const events: FramerEvent[] = [];
    for (let i = 0; i < input.length; i++) events.push(...f.push(input.subarray(i, i + 1)));
    expect(events).toHaveLength(1);
    const e = events[0]!;
    expect(e.type === 'message' && e.result.ok && e.result.message.body.length).toBe(553);
    expect(e.type === 'message' && e.raw.equals(input)).toBe(true);
  });

  it('reports double-CRLF pings and skips lone CRLFs between messages', () => {
    const f = new SipStreamFramer();
    expect(f.push(Buffer.from('\r\n'))).toEqual([]);
    expect(f.push(Buffer.from('\r\n'))).toEqual([{ type: 'ping' }]);
    expect(f.push(Buffer.from('\r\n'))).toEqual([]);
    expect(callIds(f.push(torture('zeromf')))).toEqual(['zeromf.jfasdlfnm2o2l43r5u0asdfas']);
    expect(callIds(f.push(Buffer.concat([Buffer.from('\r\n\r\n'), torture('zeromf')])))).toEqual(['ping', 'zeromf.jfasdlfnm2o2l43r5u0asdfas']);
  });

  it('clerr: waits for the rest of a body that has not arrived', () => {
    const f = new SipStreamFramer();
    expect(f.push(torture('clerr'))).toEqual([]);
    expect(f.error).toBeUndefined();
    expect(f.buffered).toBe(torture('clerr').length);
  });

  it('ncl and mcl01: framing is lost for good, with a 400 the caller can still send', () => {
    for (const name of ['ncl', 'mcl01']) {
      const f = new SipStreamFramer();
      const [event, ...rest] = f.push(torture(name));
      expect(rest).toEqual([]);
      expect(event?.type).toBe('error');
      if (event?.type !== 'error') continue;
      expect(event.error).toMatch(/Content-Length/);
      expect(event.result?.ok === false && event.result.status).toBe(400);
      expect(f.error).toBeDefined();
      expect(f.push(torture('zeromf'))).toEqual([]);
    }
  });

  it('a message without Content-Length is framed as bodiless and reported', () => {
    const f = new SipStreamFramer();
    const [event] = f.push(torture('inv2543'));
    expect(event?.type === 'message' && event.result.ok === false && event.result.status).toBe(400);
    expect(f.error).toBeUndefined();
  });

  it('caps buffered bytes and message size', () => {
    const small = new SipStreamFramer({ maxBufferBytes: 100, maxMessageBytes: 100 });
    const [e1] = small.push(torture('clerr'));
    expect(e1?.type).toBe('error');

    const f = new SipStreamFramer({ maxMessageBytes: 1000 });
    const [e2] = f.push(torture('clerr'));
    expect(e2?.type === 'error' && e2.error).toBe('message too large');
    expect(e2?.type === 'error' && e2.result?.ok === false && e2.result.status).toBe(513);

    const lines = new SipStreamFramer({ maxLineBytes: 50 });
    expect(lines.push(Buffer.from(`INVITE sip:${'a'.repeat(100)}`))[0]?.type).toBe('error');
  });

  it('stays linear when a large body trickles in one byte at a time', () => {
    const body = Buffer.alloc(60_000, 0x61);
    const head = Buffer.from(
      'MESSAGE sip:a@h SIP/2.0\r\nVia: SIP/2.0/TCP h;branch=z9hG4bK1\r\nTo: <sip:a@h>\r\nFrom: <sip:b@h>;tag=1\r\n' +
        `Call-ID: big\r\nCSeq: 1 MESSAGE\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    const input = Buffer.concat([head, body]);
    const f = new SipStreamFramer();
    const events: FramerEvent[] = [];
    const started = performance.now();
    for (let i = 0; i < input.length; i++) events.push(...f.push(input.subarray(i, i + 1)));
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(events).toHaveLength(1);
    expect(events[0]?.type === 'message' && events[0].result.ok && events[0].result.message.body.equals(body)).toBe(true);
  });
});
