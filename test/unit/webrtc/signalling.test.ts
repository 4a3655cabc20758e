/** The signalling protocol's pure parts: message parsing, the per-socket message rate, the origin rule. */
import { describe, expect, it } from 'vitest';
import { MAX_MESSAGE_BYTES, MessageRate, originAllowed, parseClientMessage } from '../../../src/webrtc/signalling.ts';

describe('parseClientMessage', () => {
  it('reads the four messages and nothing else', () => {
    expect(parseClientMessage('{"type":"auth","key":"sk-1"}')).toEqual({ type: 'auth', key: 'sk-1' });
    expect(parseClientMessage('{"type":"call","assistant_id":3,"sdp":"v=0"}')).toEqual({ type: 'call', assistant_id: 3, sdp: 'v=0' });
    expect(parseClientMessage('{"type":"candidate","candidate":"candidate:1 1 udp 1 127.0.0.1 9 typ host","sdpMid":"0","sdpMLineIndex":0}')).toMatchObject({ type: 'candidate' });
    expect(parseClientMessage('{"type":"hangup"}')).toEqual({ type: 'hangup' });
    for (const bad of ['', 'nope', '[]', '{"type":"dial"}', '{"type":"call","assistant_id":"3","sdp":"v=0"}', '{"type":"call","assistant_id":-1,"sdp":"v=0"}', '{"type":"auth","key":""}']) {
      expect(parseClientMessage(bad), bad).toBeUndefined();
    }
    expect(parseClientMessage(JSON.stringify({ type: 'call', assistant_id: 1, sdp: 'x'.repeat(MAX_MESSAGE_BYTES + 1) }))).toBeUndefined();
  });
});

describe('MessageRate', () => {
  it('lets a burst through, refuses past it, and refills at the rate', () => {
    const rate = new MessageRate(0, 20, 40);
    let ok = 0;
    for (let i = 0; i < 60; i++) if (rate.take(0)) ok++;
    expect(ok).toBe(40);
    expect(rate.take(0)).toBe(false);
    expect(rate.take(100)).toBe(true); // 2 tokens back after 100 ms
    expect(rate.take(100)).toBe(true);
    expect(rate.take(100)).toBe(false);
    // A steady 20 a second goes on for ever.
    for (let t = 1_000; t < 11_000; t += 50) expect(rate.take(t)).toBe(true);
  });
});

describe('originAllowed', () => {
  it('takes the same origin, the ones opened, and requests without Origin; refuses others', () => {
    expect(originAllowed('http://127.0.0.1:8080', '127.0.0.1:8080', [])).toBe(true);
    expect(originAllowed('https://app.example', 'api.example', [])).toBe(false);
    expect(originAllowed('https://app.example', 'api.example', ['https://app.example'])).toBe(true);
    expect(originAllowed('https://app.example/', 'api.example', ['https://app.example'])).toBe(true);
    expect(originAllowed('https://other.example', 'api.example', ['*'])).toBe(true);
    expect(originAllowed(undefined, 'api.example', [])).toBe(true);
    expect(originAllowed('null', 'api.example', [])).toBe(false);
    expect(originAllowed('http://127.0.0.1:8080', undefined, [])).toBe(false);
  });
});
