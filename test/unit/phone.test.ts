import { describe, expect, it } from 'vitest';
import { detectCountry, digitsOf, isE164, normalizeCountryCode } from '../../src/util/phone.ts';

describe('isE164', () => {
  it.each(['+14155550100', '+442071838750', '+4930123456', '+12345678', '+123456789012345'])('accepts %s', (n) => {
    expect(isE164(n)).toBe(true);
  });
  it.each(['14155550100', '+04155550100', '+1234567', '+1234567890123456', '+1 415 555 0100', '+1-415-555-0100', '', '+'])(
    'rejects %j',
    (n) => expect(isE164(n)).toBe(false),
  );
});

describe('detectCountry', () => {
  it.each([
    ['+14155550100', 'US'],
    ['+14165550100', 'CA'], // Toronto area code
    ['+16045550100', 'CA'],
    ['+17875550100', 'PR'],
    ['+18765550100', 'JM'],
    ['+442071838750', 'GB'],
    ['+4930123456', 'DE'],
    ['+33123456789', 'FR'],
    ['+34912345678', 'ES'],
    ['+390612345678', 'IT'],
    ['+31201234567', 'NL'],
    ['+353112345678', 'IE'],
    ['+351211234567', 'PT'],
    ['+48221234567', 'PL'],
    ['+74951234567', 'RU'],
    ['+77011234567', 'KZ'],
    ['+919812345678', 'IN'],
    ['+8613812345678', 'CN'],
    ['+81312345678', 'JP'],
    ['+6591234567', 'SG'],
    ['+971501234567', 'AE'],
    ['+5511912345678', 'BR'],
    ['+525512345678', 'MX'],
    ['+541112345678', 'AR'],
    ['+27211234567', 'ZA'],
    ['+2348012345678', 'NG'],
  ])('%s → %s', (n, c) => expect(detectCountry(n)).toBe(c));

  it('returns undefined for unknown calling codes and non-E.164 input', () => {
    expect(detectCountry('+88212345678')).toBeUndefined(); // international networks
    expect(detectCountry('4155550100')).toBeUndefined();
  });
});

describe('normalizeCountryCode', () => {
  it('accepts alpha-2 in any case and ISO 3166-2 subdivision codes', () => {
    expect(normalizeCountryCode('us')).toBe('US');
    expect(normalizeCountryCode('GB')).toBe('GB');
    expect(normalizeCountryCode('US-CA')).toBe('US');
    expect(normalizeCountryCode('gb-eng')).toBe('GB');
  });
  it('rejects unknown or malformed codes', () => {
    for (const bad of ['ZZ', 'USA', 'U', '', '12', 'US-', 'UK']) expect(normalizeCountryCode(bad)).toBeUndefined();
  });
});

it('digitsOf strips everything but digits', () => {
  expect(digitsOf('+1 (415) 555-0100')).toBe('14155550100');
});
