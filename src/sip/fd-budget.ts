/**
 * How many file descriptors SIP stream connections may take. Every accepted TCP connection is a
 * descriptor, and so is every RTP/RTCP socket, REST connection, provider connection and the
 * store; when the process runs out, accept() and bind() fail everywhere at once (new calls got
 * 503 "no free RTP port pair", /healthz stopped answering). So SIP streams get a budget derived
 * from the process's soft RLIMIT_NOFILE (Node raises it to the hard limit at start-up; Linux
 * shows it in /proc/self/limits, Node has no API for it):
 *
 *   reserve        = 1024 (runtime, store, logs, models, threads, REST clients, webhooks)
 *                  + 6 × calls that fit (an RTP and an RTCP socket, up to four provider
 *                    connections per call; calls that fit = min(max live calls, RTP port pairs)),
 *                    at most half the limit;
 *   max SIP conns  = limit − reserve, at least 64 and at most 10,000.
 *
 * The reserve is also checked live: a new SIP connection is refused while the process's open
 * descriptors (counted in /proc/self/fd) would leave fewer than `reserve` free, whoever took them.
 */
import { readdirSync, readFileSync } from 'node:fs';

export const FD_BUDGET_RULE = Object.freeze({
  baseReserve: 1024,
  perCall: 6,
  minConnections: 64,
  maxConnections: 10_000,
  /** When the limit cannot be read (not Linux): what Node's platforms commonly start with. */
  fallbackLimit: 1024,
});

/** The soft "Max open files" of this process, or undefined where /proc is missing. */
export function readSoftFdLimit(limitsText?: string): number | undefined {
  let text = limitsText;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/limits', 'latin1');
    } catch {
      return undefined;
    }
  }
  const line = text.split('\n').find((l) => l.startsWith('Max open files'));
  const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
  if (soft === undefined) return undefined;
  if (soft === 'unlimited') return Number.MAX_SAFE_INTEGER;
  const n = Number(soft);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

/** Open descriptors of this process, or undefined where /proc is missing. */
export function countOpenFds(): number | undefined {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return undefined;
  }
}

export interface FdPlan {
  limit: number;
  reserve: number;
  maxConnections: number;
}

/** The default reserve and connection cap for `limit` descriptors (see the rule above). */
export function planFds(limit: number, maxLiveCalls: number, rtpPortMin: number, rtpPortMax: number): FdPlan {
  const rule = FD_BUDGET_RULE;
  const firstEven = rtpPortMin % 2 === 0 ? rtpPortMin : rtpPortMin + 1;
  const pairs = Math.max(0, Math.floor((rtpPortMax - firstEven + 1) / 2));
  const calls = Math.min(maxLiveCalls, pairs);
  const reserve = Math.min(rule.baseReserve + rule.perCall * calls, Math.floor(limit / 2));
  const maxConnections = Math.min(rule.maxConnections, Math.max(rule.minConnections, limit - reserve));
  return { limit, reserve, maxConnections };
}
