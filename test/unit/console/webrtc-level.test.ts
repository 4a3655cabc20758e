/** The talk page's level meter arithmetic (console/src/webrtc/level.ts). */
import { describe, expect, it } from 'vitest';
import { dbfsOf, METER_FLOOR_DBFS, meterPosition, rmsOf } from '../../../console/src/webrtc/level.ts';
import { signallingUrl } from '../../../console/src/webrtc/signalling-url.ts';

describe('level meter', () => {
  it('measures a full-scale sine at -3 dBFS, silence at the floor, and places the meter between', () => {
    const sine = Float32Array.from({ length: 1024 }, (_, i) => Math.sin((2 * Math.PI * i) / 64));
    expect(dbfsOf(rmsOf(sine))).toBeCloseTo(-3.01, 1);
    expect(dbfsOf(rmsOf(new Float32Array(1024)))).toBe(METER_FLOOR_DBFS);
    expect(dbfsOf(rmsOf([]))).toBe(METER_FLOOR_DBFS);
    expect(meterPosition(METER_FLOOR_DBFS)).toBe(0);
    expect(meterPosition(0)).toBe(1);
    expect(meterPosition(-30)).toBeCloseTo(0.5);
    expect(meterPosition(6)).toBe(1);
  });

  it('opens the signalling socket on the page’s own origin, wss under https, with nothing in the query', () => {
    expect(signallingUrl({ protocol: 'https:', host: 'calls.example' })).toBe('wss://calls.example/api/user/webrtc');
    expect(signallingUrl({ protocol: 'http:', host: '127.0.0.1:3000' })).toBe('ws://127.0.0.1:3000/api/user/webrtc');
  });
});
