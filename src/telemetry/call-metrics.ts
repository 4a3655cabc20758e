/**
 * Calls on /metrics: live calls, finished calls by status, answered calls' setup time and length,
 * and each answered call's receive quality at its end (RFC 3550 loss and interarrival jitter from
 * the RTP session's receiver statistics). Labels stay low-cardinality: direction, mode (the
 * assistant's mode, diagnostic, or none) and status, never a number or a uuid.
 */
import client from 'prom-client';
import type { RtpSessionStats } from '../media/media-types.ts';
import type { CallEnd, CallSession } from '../call/call-session.ts';

export interface CallMetrics {
  /** Counts `session` from now (ringing) until its `ended` event. */
  track(session: Pick<CallSession, 'direction' | 'mode' | 'once'>): void;
}

/** RFC 3550 fraction of the expected packets that never came, over the whole call (0..1). */
export function lossRatio(stats: Pick<RtpSessionStats, 'packetsReceived' | 'lost'>): number | undefined {
  const lost = Math.max(0, stats.lost);
  const expected = stats.packetsReceived + lost;
  return expected > 0 ? lost / expected : undefined;
}

/** Metrics registered on `registry` (the engine's /metrics); unregistered ones without it. */
export function createCallMetrics(registry?: client.Registry): CallMetrics {
  const registers = registry ? [registry] : [];
  const active = new client.Gauge({
    name: 'switchboard_calls_active',
    help: 'Calls in this process now, ringing or answered',
    labelNames: ['direction', 'mode'] as const,
    registers,
  });
  const total = new client.Counter({
    name: 'switchboard_calls_total',
    help: 'Calls ended, by final status (completed, failed, no-answer, busy, declined, canceled, invalid-number)',
    labelNames: ['direction', 'mode', 'status'] as const,
    registers,
  });
  const duration = new client.Histogram({
    name: 'switchboard_call_duration_seconds',
    help: 'Answered calls, from the answer to the end',
    labelNames: ['direction'] as const,
    buckets: [5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600],
    registers,
  });
  const setup = new client.Histogram({
    name: 'switchboard_call_setup_seconds',
    help: 'Answered calls, from the INVITE (received or sent) to the answer',
    labelNames: ['direction'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 20, 30, 60],
    registers,
  });
  const loss = new client.Histogram({
    name: 'switchboard_rtp_packets_lost_ratio',
    help: 'Answered calls at their end: fraction of the expected inbound RTP packets lost (RFC 3550)',
    buckets: [0, 0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1],
    registers,
  });
  const jitter = new client.Histogram({
    name: 'switchboard_rtp_jitter_seconds',
    help: 'Answered calls at their end: inbound RTP interarrival jitter (RFC 3550)',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2],
    registers,
  });
  return {
    track(session) {
      const base = { direction: session.direction, mode: session.mode };
      active.inc(base);
      session.once('ended', (end: CallEnd) => {
        active.dec(base);
        total.inc({ ...base, status: end.status });
        if (!end.answered) return;
        duration.observe({ direction: session.direction }, end.durationMs / 1000);
        if (end.setupMs !== undefined) setup.observe({ direction: session.direction }, end.setupMs / 1000);
        const stats = end.stats;
        if (!stats || stats.packetsReceived === 0) return;
        const ratio = lossRatio(stats);
        if (ratio !== undefined) loss.observe(ratio);
        jitter.observe(stats.jitterMs / 1000);
      });
    },
  };
}
