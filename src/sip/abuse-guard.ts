/**
 * Per-source abuse resistance, consulted for every request before a transaction exists, so a
 * flood or a scanner costs one Map lookup per datagram and nothing else: no transaction, no
 * timers, no response (a reply would only confirm to the scanner that something listens here).
 *
 * - scanner User-Agents (friendly-scanner, sipvicious, sipcli, …): dropped and the source banned;
 * - more than `maxRequestsPerSec` requests in a one-second window: banned;
 * - `maxStrikes` failures (bad credentials, 403/404 probing) within `strikeWindowMs`: banned;
 * - input that cannot be parsed or framed counts as a request and as a strike (`malformed`), so
 *   a source that only sends garbage is banned like any other prober instead of being answered
 *   400 forever.
 *
 * A banned source gets nothing: its requests and responses are dropped, its malformed input is
 * not answered, and the transport sends it no response (see SourceGate, src/sip/source-gate.ts).
 *
 * Sources our trunks trust (allowed_inbound_ips, registrars) are never rate-banned: banning a
 * carrier's edge would take down every customer behind it, and their volume is legitimate.
 */
import type { Clock } from '../util/clock.ts';
import type { SipRequest } from './message.ts';
import { header } from './message.ts';

export interface AbuseGuardOptions {
  clock: Clock;
  maxRequestsPerSec?: number;
  maxStrikes?: number;
  strikeWindowMs?: number;
  banMs?: number;
  /** Sources that are never banned for volume (still subject to scanner drops). */
  trusted?: (ip: string) => boolean;
  /** Bound on tracked sources; the stalest are forgotten first. */
  maxTracked?: number;
  onBan?: (ip: string, why: BanReason) => void;
}

export type BanReason = 'scanner' | 'flood' | 'strikes' | 'malformed';
export type Verdict = 'pass' | 'drop';

/** Tools that announce themselves; matched case-insensitively anywhere in User-Agent. */
const SCANNER_UA = /friendly-scanner|sipvicious|sipcli|sip-scan|sipscan|sundayddr|iwar|\bsmap\b|vaxsipuseragent|pplsip|sipsak|sip\.scan|scanner/i;

interface SourceState {
  windowStart: number;
  count: number;
  strikes: number;
  strikeStart: number;
  bannedUntil: number;
  seen: number;
}

export interface AbuseStats {
  tracked: number;
  banned: number;
  dropped: number;
  scanners: number;
  /** Messages that could not be parsed or framed (trusted sources included). */
  malformed: number;
}

export class AbuseGuard {
  private readonly sources = new Map<string, SourceState>();
  private readonly o: Required<Omit<AbuseGuardOptions, 'onBan' | 'trusted'>> & Pick<AbuseGuardOptions, 'onBan' | 'trusted'>;
  private dropped = 0;
  private scanners = 0;
  private malformedCount = 0;

  constructor(opts: AbuseGuardOptions) {
    this.o = {
      maxRequestsPerSec: 20,
      maxStrikes: 10,
      strikeWindowMs: 60_000,
      banMs: 600_000,
      maxTracked: 50_000,
      ...opts,
    };
  }

  /** Decide on one request; cheap enough for every datagram. */
  check(req: SipRequest, ip: string): Verdict {
    const now = this.o.clock.monotonic();
    const s = this.state(ip, now);
    if (s.bannedUntil > now) return this.drop();
    const ua = header(req, 'user-agent');
    if (ua !== undefined && SCANNER_UA.test(ua)) {
      this.scanners++;
      this.ban(ip, s, now, 'scanner');
      return this.drop();
    }
    if (this.overRate(ip, s, now)) {
      this.ban(ip, s, now, 'flood');
      return this.drop();
    }
    return 'pass';
  }

  /**
   * Input from `ip` the parser or the stream framer rejected. It counts towards the request rate
   * and as a strike (trusted sources: neither); 'drop' when the source is, or now becomes,
   * banned, and then nothing may be sent back, not even a 400.
   */
  malformed(ip: string): Verdict {
    const now = this.o.clock.monotonic();
    const s = this.state(ip, now);
    this.malformedCount++;
    if (s.bannedUntil > now) return this.drop();
    if (this.overRate(ip, s, now)) {
      this.ban(ip, s, now, 'flood');
      return this.drop();
    }
    if (this.addStrike(ip, s, now, 'malformed')) return this.drop();
    return 'pass';
  }

  /** Responses from a banned source are dropped too (they can only belong to probing). */
  isBanned(ip: string): boolean {
    const s = this.sources.get(ip);
    return s !== undefined && s.bannedUntil > this.o.clock.monotonic();
  }

  /** A failed authentication or a probe of a number/source we refuse. */
  strike(ip: string): void {
    if (this.o.trusted?.(ip)) return;
    const now = this.o.clock.monotonic();
    this.addStrike(ip, this.state(ip, now), now, 'strikes');
  }

  /**
   * A ban decided elsewhere (another node of the service) for `forMs` from now: applied as is,
   * without onBan (it is not news to spread). Trusted sources are never banned, whoever asks.
   */
  adopt(ip: string, forMs: number): void {
    if (this.o.trusted?.(ip)) return;
    const now = this.o.clock.monotonic();
    const s = this.state(ip, now);
    s.bannedUntil = Math.max(s.bannedUntil, now + Math.min(forMs, this.o.banMs));
  }

  /** How long a ban lasts. */
  get banMs(): number {
    return this.o.banMs;
  }

  unban(ip: string): void {
    this.sources.delete(ip);
  }

  get stats(): AbuseStats {
    const now = this.o.clock.monotonic();
    let banned = 0;
    for (const s of this.sources.values()) if (s.bannedUntil > now) banned++;
    return { tracked: this.sources.size, banned, dropped: this.dropped, scanners: this.scanners, malformed: this.malformedCount };
  }

  /** Counts one request in the source's one-second window; true when that is one too many. */
  private overRate(ip: string, s: SourceState, now: number): boolean {
    if (now - s.windowStart >= 1000) {
      s.windowStart = now;
      s.count = 0;
    }
    s.count++;
    return s.count > this.o.maxRequestsPerSec && !this.o.trusted?.(ip);
  }

  /** Adds a strike unless the source is trusted; true when it bans the source. */
  private addStrike(ip: string, s: SourceState, now: number, why: BanReason): boolean {
    if (this.o.trusted?.(ip)) return false;
    if (now - s.strikeStart > this.o.strikeWindowMs) {
      s.strikeStart = now;
      s.strikes = 0;
    }
    if (++s.strikes < this.o.maxStrikes) return false;
    this.ban(ip, s, now, why);
    return true;
  }

  private drop(): Verdict {
    this.dropped++;
    return 'drop';
  }

  private ban(ip: string, s: SourceState, now: number, why: BanReason): void {
    s.bannedUntil = now + this.o.banMs;
    this.o.onBan?.(ip, why);
  }

  private state(ip: string, now: number): SourceState {
    let s = this.sources.get(ip);
    if (s) {
      s.seen = now;
      return s;
    }
    if (this.sources.size >= this.o.maxTracked) this.prune(now);
    s = { windowStart: now, count: 0, strikes: 0, strikeStart: now, bannedUntil: 0, seen: now };
    this.sources.set(ip, s);
    return s;
  }

  /** Forget sources that are neither banned nor recently active; if still full, the oldest. */
  private prune(now: number): void {
    for (const [ip, s] of this.sources) {
      if (s.bannedUntil <= now && now - s.seen > this.o.strikeWindowMs) this.sources.delete(ip);
    }
    while (this.sources.size >= this.o.maxTracked) {
      const first = this.sources.keys().next();
      if (first.done) break;
      this.sources.delete(first.value);
    }
  }
}
