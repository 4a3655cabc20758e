/**
 * The one garbage-collector setting the engine makes (SWITCHBOARD_HEAP_GROWING_PERCENT).
 *
 * After each full collection V8 sets the old generation's next limit to its live size times a
 * factor it picks from how fast the program allocates. A media engine allocates little and
 * steadily (a few MB a second at 150 calls, most of it dying young), so V8 picks a small factor,
 * and once the room left under the limit is smaller than the young generation (32 MB at its
 * default 16 MB semi-spaces) it starts incremental marking again as soon as it can: a full
 * collection every second or two, each freeing 1–2 MB, each pausing the event loop for 4–12 ms,
 * and every pause delays the RTP packets due meanwhile. Measured at 150 calls: one run in three
 * fell into that regime (send-interval p99 6–11 ms against 2.5–3.5). A fixed factor (3 by
 * default, so a 40 MB live heap may grow to 120 MB before the next full collection) keeps the
 * room above the young generation: docs/bench-history.md, 2026-11-26 19:46.
 *
 * V8 reads the flag each time it computes a limit, so setting it at start-up, before the calls
 * come, is enough.
 */
import v8 from 'node:v8';

export function applyHeapGrowing(percent: number): void {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${Math.round(percent)}`);
}
