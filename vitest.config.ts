import { defineConfig } from 'vitest/config';

/**
 * Two groups, one after the other. Suites that judge real time on the wire (media pacing, calls
 * with real RTP, Silero on live audio, browser calls, the interop peers, process lifecycles) run
 * one file at a time, so no other suite's CPU bends their clocks. Everything else (unit cores on
 * manual clocks, the REST API over inject or loopback HTTP, stores, chat) waits mostly on I/O and
 * runs three files at a time on CI's two cores.
 */
const REAL_TIME = [
  'test/interop/**/*.test.ts',
  'test/integration/{e2e,calls,call-tools,media,cascade,realtime-calls,realtime,lifecycle,sip,webrtc,cluster,campaigns}/**/*.test.ts',
  'test/integration/console/browser-call*.test.ts',
  // Silero and the denoiser on real audio: CPU-bound, with per-test deadlines.
  'test/unit/{vad,denoise}/**/*.test.ts',
];
/** Calls end to end that assert what happens, never how fast: they share the CPU well. */
const ORDER_ONLY = [
  'test/integration/e2e/provider-failures.test.ts',
  'test/integration/e2e/calls-more.test.ts',
  'test/integration/e2e/sweeper.test.ts',
  'test/integration/realtime-calls/failures.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One PostgreSQL server per run, started only if a test asks for it (test/support/postgres.ts).
    globalSetup: ['test/support/postgres-global.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'parallel',
          include: ['test/**/*.test.ts'],
          exclude: REAL_TIME,
          maxWorkers: 3,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'order-only',
          include: ORDER_ONLY,
          maxWorkers: 3,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'real-time',
          include: REAL_TIME,
          exclude: ORDER_ONLY,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
