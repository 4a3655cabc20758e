import { describe, expect, it } from 'vitest';
import { KeypadCollector } from '../../../src/call/tools/keypad.ts';
import { ManualClock } from '../../../src/util/clock.ts';

describe('KeypadCollector (manual clock)', () => {
  it('ends at the # stop key, without it in the digits', async () => {
    const clock = new ManualClock();
    const k = new KeypadCollector({ stopKey: '#', timeoutMs: 5000 }, clock);
    for (const d of '4711#') k.press(d);
    expect(await k.result).toEqual({ digits: '4711', endedBy: 'stop-key' });
    expect(clock.pendingCount).toBe(0);
  });

  it('ends at the * stop key; # is then an ordinary key', async () => {
    const k = new KeypadCollector({ stopKey: '*', timeoutMs: 5000 }, new ManualClock());
    for (const d of '12#3*') k.press(d);
    expect(await k.result).toEqual({ digits: '12#3', endedBy: 'stop-key' });
  });

  it('times out after timeoutMs without a key, each key restarting the wait', async () => {
    const clock = new ManualClock();
    const k = new KeypadCollector({ stopKey: '#', timeoutMs: 5000 }, clock);
    k.press('1');
    clock.advance(4900);
    k.press('2');
    clock.advance(4900);
    expect(k.done).toBe(false);
    clock.advance(100);
    expect(await k.result).toEqual({ digits: '12', endedBy: 'timeout' });
  });

  it('times out with nothing when no key comes at all', async () => {
    const clock = new ManualClock();
    const k = new KeypadCollector({ stopKey: '#', timeoutMs: 3000 }, clock);
    clock.advance(3000);
    expect(await k.result).toEqual({ digits: '', endedBy: 'timeout' });
  });

  it('ends at maxDigits, ignores keys after the end and characters that are no keys', async () => {
    const k = new KeypadCollector({ stopKey: '#', timeoutMs: 3000, maxDigits: 4 }, new ManualClock());
    for (const d of '1x2 3d5') k.press(d);
    expect(await k.result).toEqual({ digits: '123D', endedBy: 'max-digits' });
  });

  it('ends on abort keeping what was pressed; an already aborted signal ends at once', async () => {
    const clock = new ManualClock();
    const ac = new AbortController();
    const k = new KeypadCollector({ stopKey: '#', timeoutMs: 3000 }, clock, ac.signal);
    k.press('9');
    ac.abort();
    expect(await k.result).toEqual({ digits: '9', endedBy: 'aborted' });
    expect(clock.pendingCount).toBe(0);
    const pre = new KeypadCollector({ stopKey: '#', timeoutMs: 3000 }, clock, AbortSignal.abort());
    expect(await pre.result).toEqual({ digits: '', endedBy: 'aborted' });
  });
});
