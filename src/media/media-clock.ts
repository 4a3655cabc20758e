/**
 * One media clock for every call in the process: a `MediaScheduler` per (clock, interval) runs
 * one timer on absolute deadlines and, in each pass, serves every registered slot handler that
 * is due: each session's inbound playout and outbound send, one after the other. With N calls
 * that is one timer wake-up per phase instead of 2 × N timers per 20 ms, so per-slot work no
 * longer interleaves with hundreds of timer callbacks.
 *
 * Sessions are spread over PHASES sub-slots of the interval (10 ms apart at 20 ms; a session's
 * two loops share its phase), so one pass holds half of the calls and the event loop is never
 * blocked by all of them at once; packets also leave in two groups rather than one.
 * Why two and not more: every pass has its costs beyond the calls in it (the timer, waking the
 * thread, draining the RTP ring, the RTP I/O thread's own wake-up for the pass's packets, caches
 * gone cold since the last pass), and a call's work costs less in a fuller pass. Four phases
 * (5 ms apart) cost about 3 % more CPU per pipeline call at 100 calls than two; one phase about
 * 2 % less than two, but then a pass holds every call (docs/bench-history.md, 2026-11-28 01:44).
 *
 * Within a pass, members that send (`first`: each session's outbound loop) are served before the
 * others (inbound playout: decoding, resampling, handing frames to VAD and STT), so a call's packet
 * never waits for the inbound work of the calls ahead of it in the pass; with half of 150 calls
 * per pass that work is a few milliseconds, which used to land on the last sends' timing.
 *
 * Each member keeps DeadlineTicker's contract: its first slot is due at once on start(), later
 * ones on its phase's grid; after a stall it catches up at most `maxCatchUp` slots and reports
 * the skipped ones to its handler; stats count skips and the true lateness (before skipping).
 * A handler that throws does not stop the others: the first error is rethrown after the pass,
 * where an unshared timer's error would have surfaced.
 *
 * Hooks registered with `beforeEachMediaPass` run at the start of every pass, before any slot:
 * the RTP I/O thread's inbound drain (rtp-io/thread-io.ts), so each pass's playout sees every
 * datagram that has arrived, without a wake-up of the event loop for them.
 */
import type { Clock, Timer } from '../util/clock.ts';
import { PHASES } from './media-phases.ts';
import { planCatchUp, type SlotHandler, type SlotTicker, type TickerStats } from './rtp-session-ticker.ts';

/**
 * Makes a session's slot timer; `lane` groups the loops of one session into one phase; `first`
 * serves it before the other members of its pass (a send loop).
 */
export type TickerFactory = (clock: Clock, intervalMs: number, onSlot: SlotHandler, maxCatchUp: number, lane?: object, first?: boolean) => SlotTicker;

const passHooks = new Set<() => void>();

/** Runs `hook` at the start of every pass of every scheduler; returns what unregisters it. */
export function beforeEachMediaPass(hook: () => void): () => void {
  passHooks.add(hook);
  return () => passHooks.delete(hook);
}

export { PHASES };

interface Member {
  readonly onSlot: SlotHandler;
  readonly maxCatchUp: number;
  readonly stats: TickerStats;
  phase: number;
  /** Next slot index on this member's phase grid. */
  nextIndex: number;
  /** When it joined: its first slot's lateness is counted from here, not from the grid. */
  joinedAt: number;
  active: boolean;
  /** Served before the members that are not, in every pass. */
  readonly first: boolean;
}

export class MediaScheduler {
  /** In serving order: the `first` members, then the others (each group in joining order). */
  private members: Member[] = [];
  private readonly phaseCount: number;
  private readonly phaseMs: number;
  private readonly lanePhase = new WeakMap<object, number>();
  private readonly phaseLoad: number[];
  /** Per phase, the slot index in progress at the current pass (reused every pass). */
  private readonly currentSlot: number[];
  private startMs = 0;
  private timer: Timer | undefined;
  private timerAt = Infinity;
  private ticking = false;
  private dirty = false;
  /** Passes run and members served, for diagnostics. */
  readonly counters = { passes: 0, slots: 0 };

  constructor(
    readonly clock: Clock,
    readonly intervalMs: number,
  ) {
    this.phaseCount = intervalMs % PHASES === 0 ? PHASES : 1;
    this.phaseMs = intervalMs / this.phaseCount;
    this.phaseLoad = new Array<number>(this.phaseCount).fill(0);
    this.currentSlot = new Array<number>(this.phaseCount).fill(0);
  }

  /** Members currently registered (each session counts its playout and send loops). */
  get size(): number {
    let n = 0;
    for (const m of this.members) if (m.active) n++;
    return n;
  }

  /** True while the scheduler's one timer is armed. */
  get armed(): boolean {
    return this.timer !== undefined;
  }

  ticker(onSlot: SlotHandler, maxCatchUp = 3, lane?: object, first = false): SlotTicker {
    return new SharedTicker(this, onSlot, maxCatchUp, lane, first);
  }

  /** @internal SharedTicker.start(). */
  join(onSlot: SlotHandler, maxCatchUp: number, stats: TickerStats, lane: object | undefined, first: boolean): Member {
    const now = this.clock.monotonic();
    if (!this.members.some((m) => m.active)) {
      // A fresh grid whenever the process had no media: the first call starts on its own time.
      this.startMs = now;
      this.phaseLoad.fill(0);
    }
    const phase = this.phaseFor(lane);
    this.phaseLoad[phase]!++;
    const member: Member = { onSlot, maxCatchUp, stats, phase, nextIndex: 0, joinedAt: now, active: true, first };
    // The slot in progress on its phase grid (-1 when the phase has not begun yet): due already,
    // so it is served at once; its lateness counts from `joinedAt`.
    member.nextIndex = Math.floor((now - this.phaseStart(phase)) / this.intervalMs);
    // Appended (during a pass: served in it if due); compact() puts a `first` one in its place,
    // at once or after the pass.
    this.members.push(member);
    if (first) this.dirty = true;
    if (!this.ticking) {
      this.compact();
      this.armAt(now, now);
    }
    return member;
  }

  /** @internal SharedTicker.stop(). */
  leave(member: Member): void {
    if (!member.active) return;
    member.active = false;
    this.phaseLoad[member.phase]!--;
    this.dirty = true;
    if (this.ticking) return;
    this.compact();
    if (this.members.length === 0) this.disarm();
  }

  private phaseFor(lane: object | undefined): number {
    if (lane) {
      const known = this.lanePhase.get(lane);
      if (known !== undefined) return known;
    }
    let best = 0;
    for (let p = 1; p < this.phaseCount; p++) if (this.phaseLoad[p]! < this.phaseLoad[best]!) best = p;
    if (lane) this.lanePhase.set(lane, best);
    return best;
  }

  private phaseStart(phase: number): number {
    return this.startMs + phase * this.phaseMs;
  }

  private dueAt(member: Member, index: number): number {
    return this.phaseStart(member.phase) + index * this.intervalMs;
  }

  /** The timer's callback, made once rather than per pass. */
  private readonly onTimer = (): void => this.tick();

  private armAt(at: number, now: number): void {
    if (this.timer && this.timerAt <= at) return;
    this.timer?.cancel();
    this.timerAt = at;
    this.timer = this.clock.setTimeout(this.onTimer, Math.max(0, at - now));
  }

  private disarm(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.timerAt = Infinity;
  }

  private compact(): void {
    if (!this.dirty) return;
    this.dirty = false;
    const first = this.members.filter((m) => m.active && m.first);
    this.members = first.concat(this.members.filter((m) => m.active && !m.first));
  }

  private tick(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.clock.monotonic();
    this.ticking = true;
    this.counters.passes++;
    let failure: { error: unknown } | undefined;
    for (const hook of passHooks) {
      try {
        hook();
      } catch (error) {
        failure ??= { error };
      }
    }
    const members = this.members;
    // Each phase's slot in progress, once per pass rather than per member: most members of a
    // pass are in the other phases and only need this one comparison.
    const currentSlot = this.currentSlot;
    for (let p = 0; p < this.phaseCount; p++) currentSlot[p] = Math.floor((now - this.phaseStart(p)) / this.intervalMs);
    // Members joining during the pass are appended and served in it if due.
    for (let i = 0; i < members.length; i++) {
      const m = members[i]!;
      if (!m.active) continue;
      let due = currentSlot[m.phase]! - m.nextIndex + 1;
      if (due <= 0) continue;
      const skipped = planCatchUp(m.stats, due, now - Math.max(this.dueAt(m, m.nextIndex), m.joinedAt), m.maxCatchUp);
      m.nextIndex += skipped;
      due -= skipped;
      for (let k = 0; k < due && m.active; k++) {
        const dueMs = Math.max(this.dueAt(m, m.nextIndex), m.joinedAt);
        m.nextIndex++;
        this.counters.slots++;
        try {
          m.onSlot(now - dueMs, k === 0 ? skipped : 0, dueMs);
        } catch (error) {
          failure ??= { error };
        }
      }
    }
    this.ticking = false;
    this.compact();
    let next = Infinity;
    for (const m of this.members) {
      const at = this.dueAt(m, m.nextIndex);
      if (at < next) next = at;
    }
    if (next !== Infinity) this.armAt(next, now);
    if (failure) throw failure.error;
  }
}

/** A session loop's view of the shared scheduler: the same API as DeadlineTicker. */
export class SharedTicker implements SlotTicker {
  readonly stats: TickerStats = { skippedSlots: 0, maxLateMs: 0 };
  private member: Member | undefined;

  constructor(
    private readonly scheduler: MediaScheduler,
    private readonly onSlot: SlotHandler,
    private readonly maxCatchUp: number,
    private readonly lane: object | undefined,
    private readonly first = false,
  ) {}

  get intervalMs(): number {
    return this.scheduler.intervalMs;
  }

  get isRunning(): boolean {
    return this.member?.active ?? false;
  }

  start(): void {
    if (this.isRunning) return;
    this.member = this.scheduler.join(this.onSlot, this.maxCatchUp, this.stats, this.lane, this.first);
  }

  stop(): void {
    if (this.member) this.scheduler.leave(this.member);
    this.member = undefined;
  }
}

const schedulers = new WeakMap<Clock, Map<number, MediaScheduler>>();

/** The scheduler all sessions on `clock` with this interval share (created on first use). */
export function mediaScheduler(clock: Clock, intervalMs: number): MediaScheduler {
  let byInterval = schedulers.get(clock);
  if (!byInterval) schedulers.set(clock, (byInterval = new Map()));
  let scheduler = byInterval.get(intervalMs);
  if (!scheduler) byInterval.set(intervalMs, (scheduler = new MediaScheduler(clock, intervalMs)));
  return scheduler;
}

/** The default TickerFactory: a SharedTicker on the clock's scheduler for that interval. */
export const createTicker: TickerFactory = (clock, intervalMs, onSlot, maxCatchUp, lane, first) =>
  mediaScheduler(clock, intervalMs).ticker(onSlot, maxCatchUp, lane, first);
