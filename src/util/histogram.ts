/**
 * Fixed-bin latency histogram: O(1) record with no allocation, so it can sit on a per-packet path
 * (the RTP I/O thread's send probe, the benchmarks' load generator) without disturbing what it
 * measures. 10 µs bins up to `maxMs`; anything beyond lands in the last bin (max is kept exactly).
 */
export class Histogram {
  private bins: Uint32Array;
  private readonly binMs: number;
  count = 0;
  max = 0;
  sum = 0;

  constructor(
    readonly maxMs = 1000,
    binMs = 0.01,
  ) {
    this.binMs = binMs;
    this.bins = new Uint32Array(Math.ceil(maxMs / binMs) + 1);
  }

  record(ms: number): void {
    const v = ms < 0 ? 0 : ms;
    const i = Math.min(this.bins.length - 1, Math.floor(v / this.binMs));
    this.bins[i]!++;
    this.count++;
    this.sum += v;
    if (v > this.max) this.max = v;
  }

  /** Value at percentile p (0–100), as the upper edge of the bin it falls in. */
  percentile(p: number): number {
    if (this.count === 0) return NaN;
    const rank = Math.max(1, Math.ceil((p / 100) * this.count));
    let seen = 0;
    for (let i = 0; i < this.bins.length; i++) {
      seen += this.bins[i]!;
      if (seen >= rank) return Math.min(this.max, (i + 1) * this.binMs);
    }
    return this.max;
  }

  get mean(): number {
    return this.count === 0 ? NaN : this.sum / this.count;
  }

  reset(): void {
    this.bins.fill(0);
    this.count = 0;
    this.max = 0;
    this.sum = 0;
  }

  /** A plain summary (for IPC and reports). */
  summary(): HistSummary {
    return { count: this.count, p50: this.percentile(50), p90: this.percentile(90), p99: this.percentile(99), p999: this.percentile(99.9), max: this.max, mean: this.mean };
  }
}

export interface HistSummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
}
