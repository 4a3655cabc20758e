/**
 * What the event-loop thread (./thread-io.ts) and the RTP I/O thread (./worker.ts) say to each
 * other besides the packets (which go through the rings, ./ring.ts): socket set-up and tear-down,
 * wake-ups, and the send probe. Also the timing constants both sides share, and the time base.
 */
import { PHASE_MS, PHASES } from '../media-phases.ts';
import type { SendProbeFilter, SendProbeSummary } from './send-probe.ts';

/**
 * The resolution of the worker's timer (Node timers count whole milliseconds): its send times
 * fall within about this much of the due time, and it is the least wait it arms.
 */
export const TICK_MS = 1;
/**
 * A wake-up sends every packet due within this long after it. The worker aims its timer half of
 * it before the due time, and the timer fires within about that either side of its aim (worker.ts,
 * arm()): packets leave within about a tick of their due time, centred on it, and a timer that
 * fires a little early still sends.
 */
export const SEND_EARLY_MS = TICK_MS;
/**
 * The grid the worker plans on: the media clock's phases (../media-phases.ts: two 10 ms slots per
 * 20 ms frame). A session hands its packet over in its phase's pass, due one slot later
 * (SEND_LEAD_MS), which under load is when the other phase's pass runs: so the worker's wake-up
 * that sends a pass's packets is also the one that sweeps the sockets for the next pass, one
 * wake-up per pass. With its queue empty after sending, the worker arms its timer for the next
 * slot that had packets a grid period ago (every slot under load, its own call's slot again for a
 * lone call), when the packets handed over meanwhile are due: no wake-up message per slot. A
 * guess only: packets due earlier than the armed time earn a message (CONTROL.NEXT_WAKE), and
 * other ptimes simply take that way.
 */
export const GRID_PHASE_MS = PHASE_MS;
export const GRID_PHASES = PHASES;
/**
 * Inbound datagrams wait in their ring for the event-loop thread, which drains it at the start of
 * every media-clock pass (thread-io.ts): every 10 ms under load, and playout only happens in those
 * passes anyway. The worker sends a wake-up message only for datagrams left undrained this long
 * (a process with little or no media running): at 100 calls a message every few ms cost both
 * threads more than the datagrams themselves, a context switch each on this kind of VM. Arrival
 * times are stamped in the worker, so the wait changes no timing the jitter buffer sees.
 * It exceeds the time between two passes under load (PHASE_MS) by room for a late timer:
 * otherwise every datagram that misses its pass by a hair (the worker's sweep just after the
 * pass rather than just before it) would earn a message of its own.
 */
export const INBOUND_WAKE_AFTER_MS = PHASE_MS + 2;
/** Each direction's ring: about a second of 150 calls' G.711 both ways, and then some. */
export const RING_BYTES = 2 ** 21;

/** Words of the shared control block. */
export const CONTROL = {
  /** 1 while the worker sleeps (no timer armed): a producer that sees it posts a `wake`. */
  WORKER_SLEEPING: 0,
  /** 1 from the worker's `inbound` message until the event-loop thread starts draining. */
  MAIN_WAKE_PENDING: 1,
  /** Drains of the inbound ring so far (the event-loop thread counts them; the worker watches). */
  MAIN_DRAINS: 2,
  /**
   * While awake: when the worker's timer fires, as wakeMark(); a producer handing over a packet
   * due before it posts a `wake` (and lowers it, so one message serves a burst).
   */
  NEXT_WAKE: 3,
  WORDS: 4,
} as const;

/**
 * A time in ms (the event-loop thread's base) as the Int32 mark CONTROL.NEXT_WAKE holds: whole
 * milliseconds, wrapping every 2^32 ms; compare two with `markBefore`, which holds across a wrap.
 */
export function wakeMark(ms: number): number {
  return Math.floor(ms) | 0;
}

/** Mark `a` is earlier than mark `b` (both within 2^31 ms of each other). */
export function markBefore(a: number, b: number): boolean {
  return ((a - b) | 0) < 0;
}

/** Why the worker has woken so far (for diagnostics and tests). */
export interface WorkerWakeUps {
  /** Its timer fired. */
  timer: number;
  /** A producer posted a `wake` (a packet due before the timer, or the first after sleeping). */
  message: number;
  /** Native sockets read because datagrams came (a wake-up each, unless others came with them). */
  polledReads: number;
  /** Native sockets read by the sweep of a wake-up the thread had anyway. */
  sweptReads: number;
}

export interface WorkerInit {
  outbound: SharedArrayBuffer;
  inbound: SharedArrayBuffer;
  control: SharedArrayBuffer;
  /** The event-loop thread's time base (hrOriginMs()), so the worker can use its times. */
  originMs: number;
  /** Use the native socket module (native/rtp-udp) when it loads; dgram otherwise. */
  native: boolean;
}

export type ToWorker =
  | { op: 'bind'; req: number; id: number; host: string; port: number }
  | { op: 'connect'; req: number; id: number; address: string; port: number }
  | { op: 'disconnect'; id: number }
  | { op: 'close'; req: number; id: number }
  | { op: 'wake' }
  | { op: 'probe'; req: number; action: 'start'; filter: SendProbeFilter }
  | { op: 'probe'; req: number; action: 'reset' | 'read' | 'stop' }
  | { op: 'wake-ups'; req: number };

export type FromWorker =
  | { type: 'ready'; native: boolean }
  | { type: 'reply'; req: number; error?: { code?: string; message: string }; bound?: { address: string; family: string; port: number }; probe?: SendProbeSummary; wakeUps?: WorkerWakeUps }
  | { type: 'inbound' }
  | { type: 'error'; id: number; code?: string; message: string };

/**
 * Where this thread's `performance.now()` starts on the monotonic clock every thread shares
 * (process.hrtime), in ms. Another thread's time t is ours at t + (theirs − ours). Not
 * `performance.timeOrigin`: that is a wall-clock reading per thread, and NTP may have moved the
 * wall clock between the two threads' starts.
 */
export function hrOriginMs(): number {
  let best = Infinity;
  let origin = 0;
  for (let i = 0; i < 5; i++) {
    const before = performance.now();
    const hr = Number(process.hrtime.bigint()) / 1e6;
    const after = performance.now();
    if (after - before < best) {
      best = after - before;
      origin = hr - (before + after) / 2;
    }
  }
  return origin;
}
