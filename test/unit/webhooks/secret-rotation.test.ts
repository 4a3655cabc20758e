import { describe, expect, it } from 'vitest';
import { DEFAULT_OVERLAP_MS, isOverlapping, newWebhookSecret, rotate, RotationInProgressError, signingSecrets } from '../../../src/webhooks/secret-rotation.ts';
import { signedHeaders, verify } from '../../../src/webhooks/signing.ts';

const T0 = 1_700_000_000_000;

describe('webhook secret rotation core', () => {
  it('new secrets are whsec_ + base64 of 24 bytes, different each time', () => {
    const a = newWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(24);
    expect(newWebhookSecret()).not.toBe(a);
  });

  it('after a rotation old and new both sign until the overlap ends, then only the new one', () => {
    const state = rotate({ current: 'whsec_old', previous: null, previousUntilMs: null }, 'whsec_new', T0, DEFAULT_OVERLAP_MS);
    expect(signingSecrets(state, T0)).toEqual(['whsec_new', 'whsec_old']);
    expect(signingSecrets(state, T0 + DEFAULT_OVERLAP_MS - 1)).toEqual(['whsec_new', 'whsec_old']);
    expect(isOverlapping(state, T0 + DEFAULT_OVERLAP_MS)).toBe(false);
    expect(signingSecrets(state, T0 + DEFAULT_OVERLAP_MS)).toEqual(['whsec_new']);
  });

  it('an overlap of 0 retires the old secret at once; a second rotation during the overlap is refused unless forced, which drops the oldest', () => {
    expect(signingSecrets(rotate({ current: 'a', previous: null, previousUntilMs: null }, 'b', T0, 0), T0)).toEqual(['b']);
    const once = rotate({ current: 'a', previous: null, previousUntilMs: null }, 'b', T0, 1000);
    expect(() => rotate(once, 'c', T0 + 10, 1000)).toThrow(RotationInProgressError);
    const twice = rotate(once, 'c', T0 + 10, 1000, true);
    expect(signingSecrets(twice, T0 + 10)).toEqual(['c', 'b']);
    // Once the overlap is over, no force is needed.
    expect(signingSecrets(rotate(once, 'c', T0 + 1000, 1000), T0 + 1000)).toEqual(['c', 'b']);
    expect(() => rotate(once, 'd', T0, -1)).toThrow(RangeError);
  });

  it('headers signed with two secrets verify with either, and with neither other secret', () => {
    const [oldS, newS, other] = [newWebhookSecret(), newWebhookSecret(), newWebhookSecret()];
    const h = signedHeaders([newS, oldS], 'msg_1', 1000, '{"a":1}');
    expect(h['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verify(oldS, h, '{"a":1}', 1000)).toBe(true);
    expect(verify(newS, h, '{"a":1}', 1000)).toBe(true);
    expect(verify(other, h, '{"a":1}', 1000)).toBe(false);
    expect(() => signedHeaders([], 'msg_1', 1000, '{}')).toThrow();
  });
});
