import { describe, expect, it } from 'vitest';
import { parseDollars, toDollars } from '../../../src/util/money.ts';

describe('money', () => {
  it('parses dollar text exactly into micro-dollars', () => {
    expect(parseDollars('0.01')).toBe(10_000);
    expect(parseDollars('12.5')).toBe(12_500_000);
    expect(parseDollars('0.1')).toBe(100_000);
    expect(parseDollars('-3')).toBe(-3_000_000);
    expect(parseDollars('0.000001')).toBe(1);
  });
  it('rejects what is not an amount', () => {
    for (const bad of ['', 'abc', '1e3', '1.2345678', '1,5', '$5']) expect(() => parseDollars(bad)).toThrow();
  });
  it('stays exact up to its bound and refuses amounts whose micro-dollars would pass 2^53', () => {
    expect(parseDollars('999999999.999999')).toBe(999_999_999_999_999);
    expect(Number.isSafeInteger(parseDollars('999999999.999999'))).toBe(true);
    expect(toDollars(parseDollars('999999999.999999'))).toBe(999999999.999999);
    for (const big of ['1000000000', '999999999999', '9007199254.740993']) expect(() => parseDollars(big)).toThrow();
  });
  it('adds cents without binary drift', () => {
    let micros = 0;
    for (let i = 0; i < 10; i++) micros += parseDollars('0.1');
    expect(toDollars(micros)).toBe(1);
  });
});
