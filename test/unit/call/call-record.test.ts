import { describe, expect, it } from 'vitest';
import { causeForSipStatus, statusFor } from '../../../src/call/call-record.ts';

describe('call statuses', () => {
  it.each([
    [486, 'busy'],
    [600, 'busy'],
    [603, 'declined'],
    [408, 'no-answer'],
    [480, 'no-answer'],
    [404, 'invalid-number'],
    [484, 'invalid-number'],
    [487, 'canceled'],
    [500, 'failed'],
    [503, 'failed'],
    [403, 'failed'],
  ])('outbound final %i → %s', (sip, status) => {
    expect(statusFor({ answered: false, cause: causeForSipStatus(sip) })).toBe(status);
  });

  it('answered calls complete whoever hangs up', () => {
    for (const cause of ['remote-hangup', 'local-hangup', 'max-duration', 'rtp-timeout'] as const) {
      expect(statusFor({ answered: true, cause })).toBe('completed');
    }
    expect(statusFor({ answered: true, cause: 'error' })).toBe('failed');
  });
});
