/** Time as a dependency: production uses the system clock, tests a ManualClock. */
export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Monotonic milliseconds, for measuring intervals. */
  monotonic(): number;
  setTimeout(fn: () => void, ms: number): Timer;
}

/** A system timer's handle: one small object (a per-frame timer, as the players arm, makes garbage at 50 a second per call). */
class SystemTimer implements Timer {
  constructor(private readonly handle: ReturnType<typeof setTimeout>) {}

  cancel(): void {
    clearTimeout(this.handle);
  }
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout: (fn, ms) => new SystemTimer(setTimeout(fn, ms)),
};

interface Pending {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

function before(a: Pending, b: Pending): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/**
 * A clock that only moves when told to; timers fire in order of due time, then creation.
 * Timers sit in a binary heap so a long simulated call (tens of thousands of frames) stays fast.
 */
export class ManualClock implements Clock {
  private current: number;
  private seq = 0;
  private heap: Pending[] = [];
  private live = 0;

  constructor(startMs = 1_700_000_000_000) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  monotonic(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): Timer {
    const entry: Pending = { at: this.current + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.push(entry);
    this.live++;
    return {
      cancel: () => {
        if (entry.cancelled) return;
        entry.cancelled = true;
        this.live--;
      },
    };
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      const top = this.heap[0];
      if (!top || top.at > target) break;
      this.pop();
      if (top.cancelled) continue;
      top.cancelled = true;
      this.live--;
      this.current = Math.max(this.current, top.at);
      top.fn();
    }
    this.current = target;
  }

  /** Number of timers still waiting. */
  get pendingCount(): number {
    return this.live;
  }

  private push(entry: Pending): void {
    const h = this.heap;
    h.push(entry);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop()!;
    if (h.length === 0) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && before(h[l]!, h[m]!)) m = l;
      if (r < h.length && before(h[r]!, h[m]!)) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}
