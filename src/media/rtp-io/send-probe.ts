/**
 * Send-time diagnostics of the RTP I/O thread: the outbound frame-interval error, measured where
 * packets really leave (the thread's socket.send), for the calls benchmark (bench/calls.ts,
 * bench/lib/engine-child.ts). Off unless asked for; pure apart from the time it is given.
 *
 * The rule is the benchmark's in-thread probe's: per socket, the interval to the previous
 * matching packet against `stepMs` × its RTP timestamp step in `ticksPerStep`, so a skipped slot
 * is not counted as jitter; only datagrams of exactly `bytes` with version 2 and `payloadType`
 * count (for PCMU 20 ms: 172, 0, 160, 20). Errors go into 0.01 ms bins up to 1 s.
 */
import { Histogram, type HistSummary } from '../../util/histogram.ts';

export interface SendProbeFilter {
  bytes: number;
  payloadType: number;
  ticksPerStep: number;
  stepMs: number;
}

export type SendProbeSummary = HistSummary;

/** Per-socket memory of the probe: the last matching packet's send time (-1: none yet) and timestamp. */
export interface ProbeLane {
  probeAt: number;
  probeTs: number;
}

const MAX_MS = 1000;
const BIN_MS = 0.01;
/** Timestamp steps beyond this are a new stream (a re-INVITE, a long hold), not an interval. */
const MAX_STEPS = 50;

export class SendIntervalProbe {
  private readonly errors = new Histogram(MAX_MS, BIN_MS);

  constructor(private readonly filter: SendProbeFilter) {}

  /** A datagram `lane` sent at `nowMs`. */
  record(lane: ProbeLane, packet: Uint8Array, nowMs: number): void {
    const f = this.filter;
    if (packet.length !== f.bytes || packet[0] !== 0x80 || (packet[1]! & 0x7f) !== f.payloadType) return;
    const ts = ((packet[4]! << 24) | (packet[5]! << 16) | (packet[6]! << 8) | packet[7]!) >>> 0;
    if (lane.probeAt >= 0) {
      const steps = ((ts - lane.probeTs) >>> 0) / f.ticksPerStep;
      if (steps >= 1 && steps < MAX_STEPS) this.errors.record(Math.abs(nowMs - lane.probeAt - steps * f.stepMs));
    }
    lane.probeAt = nowMs;
    lane.probeTs = ts;
  }

  reset(): void {
    this.errors.reset();
  }

  summary(): SendProbeSummary {
    return this.errors.summary();
  }
}
