import { describe, expect, it } from 'vitest';
import { SseParser } from '../../../console/src/live/sse.ts';

describe('SseParser (text/event-stream)', () => {
  it('dispatches on a blank line, joins data lines, skips comments, across any chunking', () => {
    const text = ': keep-alive\n\nretry: 3000\n\nevent: call\ndata: {"id":1}\n\nevent: transcript\r\ndata: a\r\ndata: b\r\nid: 7\r\n\r\ndata: plain\n\n';
    const whole = new SseParser().push(text);
    expect(whole).toEqual([
      { event: 'call', data: '{"id":1}' },
      { event: 'transcript', data: 'a\nb', id: '7' },
      { event: 'message', data: 'plain', id: '7' },
    ]);
    // Byte by byte gives the same events (a stream splits anywhere, CRLF included).
    const p = new SseParser();
    const bits = [...text].flatMap((c) => p.push(c));
    expect(bits).toEqual(whole);
  });

  it('keeps an unfinished event until its blank line arrives', () => {
    const p = new SseParser();
    expect(p.push('event: call\ndata: {"id"')).toEqual([]);
    expect(p.push(':2}\n')).toEqual([]);
    expect(p.push('\n')).toEqual([{ event: 'call', data: '{"id":2}' }]);
  });
});
