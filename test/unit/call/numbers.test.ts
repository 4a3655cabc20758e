import { describe, expect, it } from 'vitest';
import { formatForTrunk, toE164, userOf } from '../../../src/call/numbers.ts';

describe('calling formats', () => {
  it.each([
    ['+442071838750', '+e164', 'GB', '+442071838750'],
    ['442071838750', 'e164', 'GB', '+442071838750'],
    ['02071838750', 'national', 'GB', '+442071838750'],
    ['4155550100', 'national', 'US', '+14155550100'],
    ['14155550100', 'national', 'US', '+14155550100'],
    ['0612345678', 'national', 'IT', '+390612345678'],
    ['0044207183', 'national', 'GB', '+44207183'],
    ['+1 (415) 555-0100', 'national', 'US', '+14155550100'],
    ['12', '+e164', 'US', undefined],
  ] as const)('%s (%s, %s) → %s', (raw, format, country, e164) => {
    expect(toE164(raw, format, country)).toBe(e164);
  });

  it.each([
    ['+442071838750', '+e164', 'GB', '+442071838750'],
    ['+442071838750', 'e164', 'GB', '442071838750'],
    ['+442071838750', 'national', 'GB', '02071838750'],
    ['+14155550100', 'national', 'US', '4155550100'],
    ['+33123456789', 'national', 'GB', '+33123456789'],
  ] as const)('%s shaped for a %s/%s trunk → %s', (e164, format, country, wire) => {
    expect(formatForTrunk(e164, format, country)).toBe(wire);
  });

  it('reads user parts of URIs and name-addrs', () => {
    expect(userOf('sip:+14155550100@carrier.example;user=phone')).toBe('+14155550100');
    expect(userOf('"Ada" <sip:ada@example.com>;tag=1')).toBe('ada');
    expect(userOf('<tel:+14155550100>')).toBe('+14155550100');
    expect(userOf('sip:example.com')).toBeUndefined();
    expect(userOf('garbage')).toBeUndefined();
  });
});
