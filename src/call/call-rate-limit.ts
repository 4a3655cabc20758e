/**
 * New-call rate limits: a token bucket per trunk and, optionally, one for the whole process. A
 * pure core: every decision takes the time, nothing here owns a timer.
 *
 * The live-call caps (per trunk, per account, per process) bound how many calls exist; they say
 * nothing about how fast calls arrive, so a flood from a trusted carrier address fills its
 * trunk's cap within a second and locks its real callers out until those calls end. A bucket
 * lets a trunk burst to `burst` calls at once and sustain `perSec` after that; INVITEs beyond it
 * are refused with 503 and a Retry-After computed from the bucket, before they cost a live-call
 * slot, a store write or RTP ports.
 */

export interface CallRate {
  /** Sustained new calls per second; 0 turns the limit off. */
  perSec: number;
  /** Calls admitted at once from a full bucket (at least 1). */
  burst: number;
}

export class TokenBucket {
  private tokens: number;
  private at: number;

  constructor(
    private readonly rate: CallRate,
    nowMs: number,
  ) {
    this.tokens = rate.burst;
    this.at = nowMs;
  }

  /** Milliseconds until a token is there; 0 when one is now. */
  waitMs(nowMs: number): number {
    this.refill(nowMs);
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) * 1000) / this.rate.perSec);
  }

  /** Takes a token; only after waitMs() said 0. */
  take(nowMs: number): void {
    this.refill(nowMs);
    this.tokens -= 1;
  }

  /** A full bucket behaves exactly like a new one, so it can be forgotten. */
  isFull(nowMs: number): boolean {
    this.refill(nowMs);
    return this.tokens >= this.rate.burst;
  }

  private refill(nowMs: number): void {
    if (nowMs <= this.at) return;
    this.tokens = Math.min(this.rate.burst, this.tokens + ((nowMs - this.at) * this.rate.perSec) / 1000);
    this.at = nowMs;
  }
}

export type RateVerdict = { ok: true } | { ok: false; limit: 'trunk' | 'process'; retryAfterMs: number };

export interface CallRateLimiterOptions {
  perTrunk: CallRate;
  /** All trunks together; perSec 0 (the default) leaves the process unlimited. */
  process?: CallRate;
  /** Buckets kept before full (idle) ones are forgotten; default 10 000. */
  maxTracked?: number;
}

export class CallRateLimiter {
  private readonly trunks = new Map<string, TokenBucket>();
  private readonly process: TokenBucket | undefined;
  private readonly maxTracked: number;

  constructor(
    private readonly opts: CallRateLimiterOptions,
    nowMs: number,
  ) {
    for (const [name, rate] of [['perTrunk', opts.perTrunk], ['process', opts.process]] as const) {
      if (rate && (!(rate.perSec >= 0) || !(rate.burst >= 1))) throw new RangeError(`${name}: perSec must be ≥ 0 and burst ≥ 1`);
    }
    this.process = opts.process && opts.process.perSec > 0 ? new TokenBucket(opts.process, nowMs) : undefined;
    this.maxTracked = opts.maxTracked ?? 10_000;
  }

  /**
   * One new call on `trunkKey` at `nowMs`: admitted (a token taken from the trunk's bucket and the
   * process's) or refused with how long until it would be admitted. A refusal takes nothing.
   */
  admit(trunkKey: string, nowMs: number): RateVerdict {
    const trunk = this.opts.perTrunk.perSec > 0 ? this.bucketFor(trunkKey, nowMs) : undefined;
    const trunkWait = trunk?.waitMs(nowMs) ?? 0;
    const processWait = this.process?.waitMs(nowMs) ?? 0;
    if (trunkWait > 0 || processWait > 0) {
      return { ok: false, limit: trunkWait >= processWait ? 'trunk' : 'process', retryAfterMs: Math.max(trunkWait, processWait) };
    }
    trunk?.take(nowMs);
    this.process?.take(nowMs);
    return { ok: true };
  }

  /** Buckets held (bounded by maxTracked, plus the one being added). */
  get tracked(): number {
    return this.trunks.size;
  }

  private bucketFor(key: string, nowMs: number): TokenBucket {
    let bucket = this.trunks.get(key);
    if (bucket) return bucket;
    if (this.trunks.size >= this.maxTracked) this.prune(nowMs);
    bucket = new TokenBucket(this.opts.perTrunk, nowMs);
    this.trunks.set(key, bucket);
    return bucket;
  }

  /** Forgets full buckets (no loss: a new one starts full); if none is full, the oldest. */
  private prune(nowMs: number): void {
    for (const [key, bucket] of this.trunks) if (bucket.isFull(nowMs)) this.trunks.delete(key);
    if (this.trunks.size >= this.maxTracked) {
      const oldest = this.trunks.keys().next();
      if (!oldest.done) this.trunks.delete(oldest.value);
    }
  }
}

/** Retry-After (whole seconds, at least 1) for a refusal that clears in `ms`. */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
