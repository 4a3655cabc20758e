/**
 * Who may open a stream connection (SIP over TCP, and TLS when it comes) to this process. A pure
 * core: the transport asks `admit(address, nowMs)` for each accepted socket and destroys it at
 * once on a refusal, and calls `release` when an admitted one closes. No socket and no timer here.
 *
 * A connection is refused, in this order, when
 *  - `rate`: its source opened connections faster than `acceptRatePerSecond` (token bucket of
 *    `acceptBurst`, refilled on the caller's clock; every attempt takes a token);
 *  - `per_source`: its source already holds `maxPerSource` connections;
 *  - `total`: the process holds `maxConnections`; a tenth of that (`trustedReserve`) is kept for
 *    trusted sources (trunk and registrar addresses), so a flood cannot lock the carrier out;
 *  - `fd_reserve`: the process's open file descriptors leave fewer than `fds.keepFree` free, so
 *    whatever else took them (HTTP, media, a leak), REST and RTP still get theirs.
 * Trusted sources skip the rate and per-source checks, not the total and the fd reserve.
 *
 * A source is an IPv4 address, or an IPv6 /64 (one host usually owns a whole /64).
 */
import net from 'node:net';

export type RefusalReason = 'rate' | 'per_source' | 'total' | 'fd_reserve';
export const REFUSAL_REASONS: readonly RefusalReason[] = ['rate', 'per_source', 'total', 'fd_reserve'];

export interface FdBudget {
  /** The process's soft RLIMIT_NOFILE. */
  limit: number;
  /** Descriptors that must stay free for everything but SIP streams. */
  keepFree: number;
  /** Open descriptors of this process now; undefined where it cannot be measured. */
  open(): number | undefined;
  /** Re-measure at most this often (ms); admissions in between count as one descriptor each. Default 1000. */
  sampleEveryMs?: number;
}

export interface TcpAdmissionOptions {
  maxConnections: number;
  maxPerSource: number;
  /** New connections per second per source, on average. */
  acceptRatePerSecond: number;
  /** Connections a source may open at once before the rate applies (default 2 × rate, at least 1). */
  acceptBurst?: number;
  /** Connections of the total kept for trusted sources (default a tenth of maxConnections). */
  trustedReserve?: number;
  /** Trunk and registrar addresses (default: none). */
  trusted?: (address: string) => boolean;
  fds?: FdBudget;
}

export type Admission = { ok: true; ticket: AdmissionTicket } | { ok: false; reason: RefusalReason };

/** Proof of an admitted connection; `release` it exactly once when the connection closes. */
export interface AdmissionTicket {
  readonly source: string;
}

interface SourceState {
  open: number;
  tokens: number;
  refilledAtMs: number;
}

class Ticket implements AdmissionTicket {
  released = false;
  constructor(
    readonly source: string,
    readonly trusted: boolean,
  ) {}
}

const MIN_PRUNE_AT = 1024;

export class TcpAdmission {
  private readonly sources = new Map<string, SourceState>();
  private pruneAt = MIN_PRUNE_AT;
  private openTotal = 0;
  private openUntrusted = 0;
  private fdSample: { atMs: number; open: number } | undefined;
  private admittedSinceSample = 0;
  readonly refused: Record<RefusalReason, number> = { rate: 0, per_source: 0, total: 0, fd_reserve: 0 };
  readonly burst: number;
  readonly trustedReserve: number;

  constructor(readonly opts: TcpAdmissionOptions) {
    this.burst = Math.max(1, opts.acceptBurst ?? Math.ceil(2 * opts.acceptRatePerSecond));
    this.trustedReserve = Math.min(opts.maxConnections, opts.trustedReserve ?? Math.floor(opts.maxConnections / 10));
  }

  /** Admitted connections still open. */
  get open(): number {
    return this.openTotal;
  }

  /** Sources with state held (open connections or a bucket still refilling), for bound checks. */
  get trackedSources(): number {
    return this.sources.size;
  }

  admit(address: string, nowMs: number): Admission {
    const source = sourceKey(address);
    const trusted = this.opts.trusted?.(stripV4Mapped(address)) ?? false;
    const state = trusted ? undefined : this.stateOf(source, nowMs);
    if (state) {
      if (state.tokens < 1) return this.refuse('rate');
      state.tokens -= 1;
      if (state.open >= this.opts.maxPerSource) return this.refuse('per_source');
    }
    const untrustedCap = this.opts.maxConnections - this.trustedReserve;
    if (this.openTotal >= this.opts.maxConnections || (!trusted && this.openUntrusted >= untrustedCap)) return this.refuse('total');
    if (!this.fdsAllow(nowMs)) return this.refuse('fd_reserve');
    this.openTotal++;
    if (state) {
      state.open++;
      this.openUntrusted++;
    }
    this.admittedSinceSample++;
    return { ok: true, ticket: new Ticket(source, trusted) };
  }

  release(ticket: AdmissionTicket): void {
    const t = ticket as Ticket;
    if (t.released) return;
    t.released = true;
    this.openTotal--;
    if (t.trusted) return;
    this.openUntrusted--;
    const state = this.sources.get(t.source);
    if (state) state.open--;
  }

  private refuse(reason: RefusalReason): Admission {
    this.refused[reason]++;
    return { ok: false, reason };
  }

  /** The source's bucket, refilled to now. */
  private stateOf(source: string, nowMs: number): SourceState {
    let state = this.sources.get(source);
    if (!state) {
      if (this.sources.size >= this.pruneAt) this.prune(nowMs);
      state = { open: 0, tokens: this.burst, refilledAtMs: nowMs };
      this.sources.set(source, state);
      return state;
    }
    this.refill(state, nowMs);
    return state;
  }

  private refill(state: SourceState, nowMs: number): void {
    const elapsed = Math.max(0, nowMs - state.refilledAtMs);
    state.tokens = Math.min(this.burst, state.tokens + (elapsed * this.opts.acceptRatePerSecond) / 1000);
    state.refilledAtMs = nowMs;
  }

  /**
   * Forgets sources with nothing open and a full bucket (they would start afresh anyway), so the
   * table holds at most the sources with open connections plus those seen within a refill time.
   * Amortised: the next sweep waits until the table has doubled.
   */
  private prune(nowMs: number): void {
    for (const [key, state] of this.sources) {
      if (state.open > 0) continue;
      this.refill(state, nowMs);
      if (state.tokens >= this.burst) this.sources.delete(key);
    }
    this.pruneAt = Math.max(MIN_PRUNE_AT, 2 * this.sources.size);
  }

  private fdsAllow(nowMs: number): boolean {
    const fds = this.opts.fds;
    if (!fds) return true;
    const every = fds.sampleEveryMs ?? 1000;
    if (!this.fdSample || nowMs - this.fdSample.atMs >= every) {
      const open = fds.open();
      this.fdSample = open === undefined ? undefined : { atMs: nowMs, open };
      this.admittedSinceSample = 0;
      if (open === undefined) return true;
    }
    // Closes since the sample are not subtracted: between samples the estimate only errs high.
    if (!this.fdSample) return true;
    return this.fdSample.open + this.admittedSinceSample + 1 <= fds.limit - fds.keepFree;
  }
}

/** The rate and per-source key of an address: IPv4 as is, IPv6 by its /64. */
export function sourceKey(address: string): string {
  const addr = stripV4Mapped(address);
  if (net.isIPv6(addr)) return `${expandV6(addr).slice(0, 4).join(':')}::/64`;
  return addr;
}

function stripV4Mapped(addr: string): string {
  return addr.toLowerCase().startsWith('::ffff:') && net.isIPv4(addr.slice(7)) ? addr.slice(7) : addr;
}

/** Eight hextets of an IPv6 address (no zone, no embedded IPv4 beyond the mapped form). */
function expandV6(addr: string): string[] {
  const bare = addr.split('%')[0]!.toLowerCase();
  const [head, tail] = bare.includes('::') ? bare.split('::') : [bare, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((h) => h.replace(/^0+(?=.)/, ''));
}
