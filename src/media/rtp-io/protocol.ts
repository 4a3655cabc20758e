/**
 * What the event-loop thread (./thread-io.ts) and the RTP I/O thread (./worker.ts) say to each
 * other besides the packets (which go through the rings, ./ring.ts): socket set-up and tear-down,
 * wake-ups, and the send probe. Also the timing constants both sides share, and the time base.
 */
import type { SendProbeFilter, SendProbeSummary } from './send-probe.ts';

/** The worker's timer period while it has work: the resolution of its send times. */
export const TICK_MS = 1;
/**
 * A packet leaves at the first tick no earlier than this before its due time: ticks come about
 * every TICK_MS, so sending up to half a tick early centres the error on the due time.
 */
export const SEND_EARLY_MS = TICK_MS / 2;
/** With nothing queued or handed over for this long, the worker stops ticking until woken. */
export const IDLE_BEFORE_SLEEP_MS = 100;
/**
 * Inbound datagrams wait in their ring for the event-loop thread, which drains it at the start of
 * every media-clock pass (thread-io.ts): every 5 ms under load, and playout only happens in those
 * passes anyway. The worker sends a wake-up message only for datagrams left undrained this long
 * (a process with little or no media running): at 100 calls a message every few ms cost both
 * threads more than the datagrams themselves, a context switch each on this kind of VM. Arrival
 * times are stamped in the worker, so the wait changes no timing the jitter buffer sees.
 */
export const INBOUND_WAKE_AFTER_MS = 8;
/** Each direction's ring: about a second of 150 calls' G.711 both ways, and then some. */
export const RING_BYTES = 2 ** 21;

/** Words of the shared control block. */
export const CONTROL = {
  /** 1 while the worker sleeps (not ticking): a producer that sees it posts a `wake`. */
  WORKER_SLEEPING: 0,
  /** 1 from the worker's `inbound` message until the event-loop thread starts draining. */
  MAIN_WAKE_PENDING: 1,
  /** Drains of the inbound ring so far (the event-loop thread counts them; the worker watches). */
  MAIN_DRAINS: 2,
  WORDS: 4,
} as const;

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
  | { op: 'probe'; req: number; action: 'reset' | 'read' | 'stop' };

export type FromWorker =
  | { type: 'ready'; native: boolean }
  | { type: 'reply'; req: number; error?: { code?: string; message: string }; bound?: { address: string; family: string; port: number }; probe?: SendProbeSummary }
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
