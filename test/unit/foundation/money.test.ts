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
  it('adds cents without binary drift', () => {
    let micros = 0;
    for (let i = 0; i < 10; i++) micros += parseDollars('0.1');
    expect(toDollars(micros)).toBe(1);
  });
});
