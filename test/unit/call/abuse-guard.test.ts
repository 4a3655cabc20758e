import { describe, expect, it } from 'vitest';
import { AbuseGuard } from '../../../src/sip/abuse-guard.ts';
import type { SipRequest } from '../../../src/sip/message.ts';
import { ManualClock } from '../../../src/util/clock.ts';

const req = (ua?: string): SipRequest => ({
  kind: 'request',
  method: 'OPTIONS',
  uri: 'sip:x@y',
  version: 'SIP/2.0',
  headers: ua ? [{ name: 'user-agent', value: ua }] : [],
  body: Buffer.alloc(0),
});

describe('AbuseGuard', () => {
  it('drops and bans scanners at once', () => {
    const clock = new ManualClock();
    const bans: string[] = [];
    const g = new AbuseGuard({ clock, onBan: (ip, why) => bans.push(`${ip}:${why}`) });
    expect(g.check(req('friendly-scanner'), '1.2.3.4')).toBe('drop');
    expect(g.check(req('Linphone/5'), '1.2.3.4')).toBe('drop');
    expect(g.check(req('Linphone/5'), '1.2.3.5')).toBe('pass');
    expect(bans).toEqual(['1.2.3.4:scanner']);
  });

  it('bans above the request rate and lifts the ban after banMs', () => {
    const clock = new ManualClock();
    const g = new AbuseGuard({ clock, maxRequestsPerSec: 5, banMs: 10_000 });
    const verdicts = Array.from({ length: 7 }, () => g.check(req(), '9.9.9.9'));
    expect(verdicts.filter((v) => v === 'pass')).toHaveLength(5);
    clock.advance(5_000);
    expect(g.check(req(), '9.9.9.9')).toBe('drop');
    clock.advance(5_001);
    expect(g.check(req(), '9.9.9.9')).toBe('pass');
  });

  it('a steady rate under the limit is never banned', () => {
    const clock = new ManualClock();
    const g = new AbuseGuard({ clock, maxRequestsPerSec: 5 });
    for (let i = 0; i < 100; i++) {
      expect(g.check(req(), '8.8.8.8')).toBe('pass');
      clock.advance(250);
    }
  });

  it('trusted sources are exempt from flood and strike bans', () => {
    const clock = new ManualClock();
    const g = new AbuseGuard({ clock, maxRequestsPerSec: 1, maxStrikes: 1, trusted: (ip) => ip === '10.0.0.1' });
    for (let i = 0; i < 10; i++) expect(g.check(req(), '10.0.0.1')).toBe('pass');
    g.strike('10.0.0.1');
    expect(g.isBanned('10.0.0.1')).toBe(false);
  });

  it('strikes within the window ban; spread out they do not', () => {
    const clock = new ManualClock();
    const g = new AbuseGuard({ clock, maxStrikes: 3, strikeWindowMs: 1000 });
    g.strike('5.5.5.5');
    clock.advance(1500);
    g.strike('5.5.5.5');
    g.strike('5.5.5.5');
    expect(g.isBanned('5.5.5.5')).toBe(false);
    g.strike('5.5.5.5');
    expect(g.isBanned('5.5.5.5')).toBe(true);
  });

  it('malformed input counts as strikes: the source is banned (reason malformed) and its input is dropped from then on', () => {
    const clock = new ManualClock();
    const bans: string[] = [];
    const g = new AbuseGuard({ clock, maxStrikes: 4, onBan: (ip, why) => bans.push(`${ip}:${why}`) });
    const verdicts = Array.from({ length: 6 }, () => {
      clock.advance(100);
      return g.malformed('6.6.6.6');
    });
    expect(verdicts).toEqual(['pass', 'pass', 'pass', 'drop', 'drop', 'drop']);
    expect(bans).toEqual(['6.6.6.6:malformed']);
    expect(g.isBanned('6.6.6.6')).toBe(true);
    expect(g.check(req(), '6.6.6.6')).toBe('drop');
    // Another source is untouched.
    expect(g.malformed('6.6.6.7')).toBe('pass');
    expect(g.check(req(), '6.6.6.7')).toBe('pass');
    expect(g.stats).toMatchObject({ banned: 1, malformed: 7 });
  });

  it('malformed input counts towards the request rate too', () => {
    const clock = new ManualClock();
    const bans: string[] = [];
    const g = new AbuseGuard({ clock, maxRequestsPerSec: 5, maxStrikes: 100, onBan: (ip, why) => bans.push(`${ip}:${why}`) });
    for (let i = 0; i < 3; i++) expect(g.malformed('7.7.7.7')).toBe('pass');
    expect(g.check(req(), '7.7.7.7')).toBe('pass');
    expect(g.check(req(), '7.7.7.7')).toBe('pass');
    expect(g.malformed('7.7.7.7')).toBe('drop');
    expect(bans).toEqual(['7.7.7.7:flood']);
  });

  it('a trusted source sending malformed input is counted but never banned for it', () => {
    const clock = new ManualClock();
    const g = new AbuseGuard({ clock, maxRequestsPerSec: 2, maxStrikes: 2, trusted: (ip) => ip === '10.0.0.1' });
    for (let i = 0; i < 10; i++) expect(g.malformed('10.0.0.1')).toBe('pass');
    expect(g.isBanned('10.0.0.1')).toBe(false);
    expect(g.stats.malformed).toBe(10);
  });

  it('keeps its memory bounded', () => {
    const clock = new ManualClock();
    const g = new AbuseGuard({ clock, maxTracked: 100 });
    for (let i = 0; i < 1000; i++) g.check(req(), `10.1.${i >> 8}.${i & 255}`);
    expect(g.stats.tracked).toBeLessThanOrEqual(100);
  });
});
