import { describe, expect, it } from 'vitest';
import { backoffMs } from '../../../src/webhooks/delivery.ts';
import { sign, signedHeaders, verify } from '../../../src/webhooks/signing.ts';

describe('Standard Webhooks signing', () => {
  it('matches the standard’s published test vector', () => {
    expect(sign('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('verifies its own headers and rejects tampering, other secrets and stale timestamps', () => {
    const secret = 'whsec_c2VjcmV0LWtleS1ieXRlcw==';
    const h = signedHeaders(secret, 'msg_1', 1_700_000_000, '{"a":1}');
    expect(verify(secret, { ...h }, '{"a":1}', 1_700_000_010)).toBe(true);
    expect(verify(secret, { ...h, 'webhook-signature': `v1,zzz ${h['webhook-signature']}` }, '{"a":1}', 1_700_000_010)).toBe(true);
    expect(verify(secret, { ...h }, '{"a":2}', 1_700_000_010)).toBe(false);
    expect(verify('whsec_b3RoZXI=', { ...h }, '{"a":1}', 1_700_000_010)).toBe(false);
    expect(verify(secret, { ...h }, '{"a":1}', 1_700_001_000)).toBe(false);
    expect(verify(secret, { ...h, 'webhook-id': 'msg_2' }, '{"a":1}', 1_700_000_010)).toBe(false);
  });

  it('accepts only a timestamp of digits: "1e9", "+…", " …", "….0" do not verify a signature made over the digits', () => {
    const secret = 'whsec_c2VjcmV0LWtleS1ieXRlcw==';
    const h = signedHeaders(secret, 'msg_1', 1_000_000_000, '{}');
    expect(verify(secret, h, '{}', 1_000_000_000)).toBe(true);
    for (const ts of ['1e9', '+1000000000', ' 1000000000', '1000000000.0', '0x3B9ACA00', '', '1000000000 ']) {
      expect(verify(secret, { ...h, 'webhook-timestamp': ts }, '{}', 1_000_000_000), JSON.stringify(ts)).toBe(false);
    }
  });

  it('backs off exponentially with a cap', () => {
    expect([1, 2, 3, 4].map((n) => backoffMs(n))).toEqual([5_000, 10_000, 20_000, 40_000]);
    expect(backoffMs(30)).toBe(3_600_000);
  });
});
