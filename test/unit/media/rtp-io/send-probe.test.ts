import { describe, expect, it } from 'vitest';
import { SendIntervalProbe, type ProbeLane } from '../../../../src/media/rtp-io/send-probe.ts';

/** A PCMU 20 ms RTP packet (12-byte header + 160 bytes) with timestamp `ts`. */
function pcmu(ts: number, payloadType = 0, bytes = 172): Uint8Array {
  const p = new Uint8Array(bytes);
  p[0] = 0x80;
  p[1] = payloadType;
  new DataView(p.buffer).setUint32(4, ts >>> 0);
  return p;
}

describe('SendIntervalProbe', () => {
  const filter = { bytes: 172, payloadType: 0, ticksPerStep: 160, stepMs: 20 };

  it('histograms |interval − 20 ms × timestamp steps| per socket, a skipped slot not counted as jitter', () => {
    const probe = new SendIntervalProbe(filter);
    const a: ProbeLane = { probeAt: -1, probeTs: 0 };
    const b: ProbeLane = { probeAt: -1, probeTs: 0 };
    probe.record(a, pcmu(1000), 0);
    probe.record(b, pcmu(5000), 3);
    probe.record(a, pcmu(1160), 21); // 1 ms late
    probe.record(a, pcmu(1480), 61); // two steps (a slot skipped) in 40 ms: on time
    probe.record(b, pcmu(5160), 26); // 3 ms late on its own socket
    const s = probe.summary();
    expect(s.count).toBe(3);
    expect(s.max).toBeCloseTo(3, 6);
    expect(s.mean).toBeCloseTo(4 / 3, 6);
  });

  it('ignores other payload types, sizes and timestamp jumps of a new stream, and resets', () => {
    const probe = new SendIntervalProbe(filter);
    const lane: ProbeLane = { probeAt: -1, probeTs: 0 };
    probe.record(lane, pcmu(0), 0);
    probe.record(lane, pcmu(160, 101), 20); // telephone-event
    probe.record(lane, pcmu(160, 0, 100), 20); // another size
    probe.record(lane, pcmu(160 * 60), 25); // 60 steps later: a new stream, not an interval
    expect(probe.summary().count).toBe(0);
    probe.record(lane, pcmu(160 * 61), 45.5);
    expect(probe.summary()).toMatchObject({ count: 1, max: 0.5 });
    probe.reset();
    expect(probe.summary().count).toBe(0);
  });
});
