/**
 * One clock for every process of a benchmark: CLOCK_MONOTONIC (what `process.hrtime` reads on
 * Linux) is system-wide, so a time taken in the engine, in the stand-ins and in the load
 * generator can be subtracted directly. `performance.now()` cannot: each process has its own
 * origin. Milliseconds with microsecond resolution.
 */
export function mono(): number {
  return Number(process.hrtime.bigint() / 1000n) / 1000;
}
