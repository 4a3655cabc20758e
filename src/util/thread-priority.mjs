// Lower the scheduling priority of the calling thread (Linux: setpriority on the thread's own id,
// which the kernel applies to that thread alone), and give it a name. Plain JavaScript so that
// worker entries started outside tsx (src/audio/vad/silero-worker.mjs) can use it as well as
// TypeScript modules.
//
// Why: the engine's event-loop thread paces every call's RTP, and on a small machine its helper
// threads (Silero, the denoiser) compete with it for the same cores. Their work tolerates a few
// milliseconds of delay; a packet sent late does not. A niced helper that wakes up takes a core
// from the event loop less readily, and yields it sooner when both are runnable.
import { readlinkSync, writeFileSync } from 'node:fs';
import { setPriority } from 'node:os';

/** Nice value for the engine's helper threads: they get about a tenth of a core the event loop also wants. */
export const HELPER_THREAD_NICE = 10;

/**
 * Sets this thread's nice value (higher = lower priority); returns whether it could. Never throws:
 * where threads cannot be told apart (not Linux) or the call is refused, nothing changes.
 */
export function niceThisThread(nice = HELPER_THREAD_NICE) {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid) || tid <= 0) return false;
    setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}

/**
 * Names this thread (Linux: its `comm`, at most 15 bytes), so `top -H`, `ps -L`, `perf` and
 * /proc/PID/task/TID/stat tell the engine's helper threads apart: Node names none of its own
 * (every worker thread shows as `node`). Returns whether it could; never throws.
 */
export function nameThisThread(name) {
  try {
    writeFileSync('/proc/thread-self/comm', String(name).slice(0, 15));
    return true;
  } catch {
    return false;
  }
}
