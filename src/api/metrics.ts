import client from 'prom-client';
import { REFUSAL_REASONS, type RefusalReason } from '../sip/tcp-admission.ts';
import type { Expiry } from '../sip/stream-deadline.ts';

/** One registry per engine instance (tests build several apps in one process). */
export function createMetrics() {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const httpDuration = new client.Histogram({
    name: 'switchboard_http_request_duration_seconds',
    help: 'REST request duration',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const rateLimited = new client.Counter({
    name: 'switchboard_rate_limited_total',
    help: 'REST requests refused with 429 by a rate limit (per API key, keyless chat per address, WhatsApp freeform)',
    registers: [registry],
  });
  return { registry, httpDuration, rateLimited };
}

export type Metrics = ReturnType<typeof createMetrics>;

export interface SipTcpStats {
  open: number;
  refused: Readonly<Record<RefusalReason, number>>;
  expired: Readonly<Record<Expiry, number>>;
}

/** SIP over TCP connections: open now, refused at accept (by reason), closed at a deadline. Read at scrape time. */
export function registerSipTcpMetrics(registry: client.Registry, read: () => SipTcpStats): void {
  new client.Gauge({
    name: 'switchboard_sip_tcp_connections',
    help: 'Open SIP over TCP connections',
    registers: [registry],
    collect() {
      this.set(read().open);
    },
  });
  new client.Counter({
    name: 'switchboard_sip_tcp_refused_total',
    help: 'Inbound SIP over TCP connections reset at accept: rate (per-source accept rate), per_source, total (connection cap), fd_reserve (descriptors kept for REST and media)',
    labelNames: ['reason'] as const,
    registers: [registry],
    collect() {
      const refused = read().refused;
      this.reset();
      for (const reason of REFUSAL_REASONS) this.inc({ reason }, refused[reason]);
    },
  });
  new client.Counter({
    name: 'switchboard_sip_tcp_expired_total',
    help: 'SIP over TCP connections closed at a deadline: message (a message not complete in time), idle',
    labelNames: ['deadline'] as const,
    registers: [registry],
    collect() {
      const expired = read().expired;
      this.reset();
      for (const deadline of ['message', 'idle'] as const) this.inc({ deadline }, expired[deadline]);
    },
  });
}
