/**
 * The SIP edge's counters on /metrics: bans (a fixed metric name, without labels; the
 * reason is in the log line), malformed input, and INVITEs refused by a new-call rate limit.
 * Label values are bounded: trunk ids, of which a process keeps at most MAX_TRUNK_SERIES before
 * the rest are counted under "other" (trunks come and go through the API; a series per deleted
 * trunk must not pile up forever).
 */
import client from 'prom-client';
import { KNOWN_METHODS } from './methods.ts';

const MAX_TRUNK_SERIES = 1000;

export interface SipMetrics {
  ban(): void;
  malformed(): void;
  /** An INVITE refused by the trunk's rate (`trunk` its sip_trunks id) or the process's. */
  rateLimited(limit: 'trunk' | 'process', trunk: string): void;
  /** A request that got past the abuse guard (its method; unknown ones as `other`). */
  requestReceived(method: string): void;
  /** A response handed to the transport (its status code). */
  responseSent(code: number): void;
}

/** Counters registered on `registry` (the engine's /metrics); unregistered ones without it. */
export function createSipMetrics(registry?: client.Registry): SipMetrics {
  const registers = registry ? [registry] : [];
  const bans = new client.Counter({
    name: 'switchboard_sip_abuse_bans_total',
    help: 'SIP sources banned by the abuse guard (scanner, flood, strikes or malformed input)',
    registers,
  });
  const malformed = new client.Counter({
    name: 'switchboard_sip_malformed_total',
    help: 'SIP messages that could not be parsed or framed',
    registers,
  });
  const limited = new client.Counter({
    name: 'switchboard_sip_calls_rate_limited_total',
    help: 'New INVITEs refused with 503 by a new-call rate limit (limit: trunk or process; trunk: the SIP trunk id)',
    labelNames: ['limit', 'trunk'] as const,
    registers,
  });
  const requests = new client.Counter({
    name: 'switchboard_sip_requests_total',
    help: 'SIP requests received past the abuse guard, by method (retransmissions included; unknown methods as other)',
    labelNames: ['method'] as const,
    registers,
  });
  const responses = new client.Counter({
    name: 'switchboard_sip_responses_total',
    help: 'SIP responses sent, by status code (retransmissions included)',
    labelNames: ['code'] as const,
    registers,
  });
  const trunkSeries = new Set<string>();
  return {
    ban: () => bans.inc(),
    requestReceived: (method) => requests.inc({ method: KNOWN_METHODS.includes(method) ? method : 'other' }),
    // Codes outside 100-699 are not SIP (the parser refuses them): one bucket, not a series each.
    responseSent: (code) => responses.inc({ code: code >= 100 && code <= 699 ? String(Math.trunc(code)) : 'other' }),
    malformed: () => malformed.inc(),
    rateLimited(limit, trunk) {
      if (!trunkSeries.has(trunk) && trunkSeries.size >= MAX_TRUNK_SERIES) trunk = 'other';
      else trunkSeries.add(trunk);
      limited.inc({ limit, trunk });
    },
  };
}
