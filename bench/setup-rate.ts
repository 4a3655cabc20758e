/**
 * Call setup rate: calls started at a fixed rate for `duration` seconds, each one INVITE → 200 →
 * ACK → `hold` ms of PCMU both ways → BYE → 200, against the engine in its own process.
 *
 *   node --import tsx bench/setup-rate.ts [--rates 50,100,150] [--duration 20] [--hold 1000]
 *        [--carriers 2] [--all] [--json out.json] [--cpu-prof DIR] [--quiet-wait S] [--leak-check S]
 *
 * Calls go to the `echo` diagnostics number, round-robin over carriers on 127.0.0.11, .12, …
 * (each with its own `ip` trunk and account). A call fails when the INVITE gets no 200 within
 * 10 s, no RTP comes back from the engine during the hold, the engine ends it early, or the BYE
 * gets no 200 within 10 s. Setup latency is INVITE sent → 200 received (the UA ACKs at once).
 * Rates run in ascending order and stop at the first one with a failure unless --all.
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { spawnEngine, scrapeMetrics } from './lib/engine-proc.ts';
import { LoadGen, provisionCarriers, type Carrier } from './lib/loadgen.ts';
import { cores, loadavg, machineInfo, systemBusyPct, systemCpu, threadSchedMs, waitForQuiet } from './lib/machine.ts';
import { fmt, percentileOf } from './lib/stats.ts';
import { list, num, parseArgs, sleep, watchdog } from './lib/cli.ts';

export interface RateResult {
  targetCps: number;
  attempted: number;
  answered: number;
  completed: number;
  failures: Record<string, number>;
  achievedCps: number;
  setupP50Ms: number;
  setupP99Ms: number;
  setupMaxMs: number;
  byeP50Ms: number;
  byeP99Ms: number;
  peakConcurrent: number;
  engineCpuPct: number;
  /** Engine CPU per completed call (setup, hold with media, teardown), ms. */
  cpuMsPerCall: number;
  /** Engine main thread runnable but waiting for a CPU, % of the time. */
  mainWaitPct: number;
  /** Engine main thread on a CPU, % of the time. */
  mainRunPct: number;
  machineBusyPct: number;
  engineEldP99Ms: number;
  engineEldMaxMs: number;
  rssMiB: number;
}

export async function main(argv: string[]): Promise<void> {
  const args = parseArgs(argv);
  const rates = list(args, 'rates', [50, 100, 150], 500).sort((a, b) => a - b);
  const durationS = num(args, 'duration', 20, 1, 60);
  const holdMs = num(args, 'hold', 1000, 100, 10_000);
  const carriersN = num(args, 'carriers', 2, 1, 20);
  const all = args.has('all');
  const afterS = num(args, 'leak-check', 0, 0, 120);
  const jsonOut = args.get('json');
  const profDir = args.get('cpu-prof');

  const quietS = num(args, 'quiet-wait', 0, 0, 600);
  if (quietS > 0) console.log(`# waited for a quiet machine: ${fmt(await waitForQuiet(quietS), 0)} % busy before the start`);
  watchdog(30_000 + rates.length * (durationS * 1000 + holdMs + 25_000), 'setup-rate benchmark');
  const info = machineInfo();
  console.log(`# setup-rate benchmark — ${info.date}`);
  console.log(`# ${info.cores} cores, ${info.cpuModel}, node ${info.node}; load average before: ${info.loadavg.join(' ')}`);
  console.log(`# rates ${rates.join(',')} cps, ${durationS} s each, ${holdMs} ms of media per call, ${carriersN} carrier(s)`);

  const maxConcurrent = Math.ceil((rates[rates.length - 1]! * (holdMs + 2000)) / 1000);
  const engine = await spawnEngine({
    accounts: carriersN,
    probe: false,
    lifetimeMs: 30_000 + rates.length * (durationS * 1000 + holdMs + 25_000) + 20_000,
    rtpPortMin: 40_000,
    rtpPortMax: 40_000 + Math.max(2000, maxConcurrent * 4),
    ...(profDir ? { cpuProfDir: profDir } : {}),
  });
  const gen = new LoadGen();
  let carriers: Carrier[] = [];
  const results: RateResult[] = [];
  try {
    carriers = await provisionCarriers(engine, carriersN);
    const target = `sip:echo@127.0.0.1:${engine.sipPort}`;
    gen.startClock();
    // Warm-up.
    await Promise.all(carriers.map(async (c) => gen.hangup(await gen.place(c, target))));
    await sleep(1000);
    const mem0 = await engine.memory();

    for (const rate of rates) {
      const failures: Record<string, number> = {};
      const fail = (why: string) => (failures[why] = (failures[why] ?? 0) + 1);
      const setup: number[] = [];
      const bye: number[] = [];
      let answered = 0;
      let completed = 0;
      let concurrent = 0;
      let peak = 0;
      const total = Math.round(rate * durationS);
      await engine.request('reset');
      const s0 = await engine.stats();
      const sys0 = systemCpu();
      const sched0 = threadSchedMs(engine.pid);
      const t0 = performance.now();
      const tasks: Array<Promise<void>> = [];
      for (let i = 0; i < total; i++) {
        const wait = t0 + (i * 1000) / rate - performance.now();
        if (wait > 0) await sleep(wait);
        const c = carriers[i % carriers.length]!;
        tasks.push(
          (async () => {
            concurrent++;
            peak = Math.max(peak, concurrent);
            try {
              const call = await gen.place(c, target);
              if (call.status !== 200) return void fail(`INVITE ${call.status}`);
              answered++;
              setup.push(call.setupMs);
              await sleep(holdMs);
              if (call.endedEarly) {
                fail(`ended by engine (${call.endedEarly})`);
                return void (await gen.hangup(call));
              }
              const heard = call.leg.received;
              const b0 = performance.now();
              const status = await gen.hangup(call);
              if (heard === 0) return void fail('no RTP from engine');
              if (status !== 200) return void fail(status === -1 ? 'BYE timeout' : `BYE ${status}`);
              bye.push(performance.now() - b0);
              completed++;
            } finally {
              concurrent--;
            }
          })(),
        );
      }
      const startedIn = (performance.now() - t0) / 1000;
      await Promise.all(tasks);
      const sys1 = systemCpu();
      const sched1 = threadSchedMs(engine.pid);
      const s1 = await engine.stats();
      const cpuMs = (s1.cpuUs.user + s1.cpuUs.system - s0.cpuUs.user - s0.cpuUs.system) / 1000;
      const r: RateResult = {
        targetCps: rate,
        attempted: total,
        answered,
        completed,
        failures,
        achievedCps: total / startedIn,
        setupP50Ms: percentileOf(setup, 50),
        setupP99Ms: percentileOf(setup, 99),
        setupMaxMs: percentileOf(setup, 100),
        byeP50Ms: percentileOf(bye, 50),
        byeP99Ms: percentileOf(bye, 99),
        peakConcurrent: peak,
        engineCpuPct: (cpuMs / ((s1.hrMs - s0.hrMs) * cores())) * 100,
        cpuMsPerCall: cpuMs / Math.max(1, completed),
        mainWaitPct: sched0 && sched1 ? ((sched1.waitMs - sched0.waitMs) / (s1.hrMs - s0.hrMs)) * 100 : NaN,
        mainRunPct: sched0 && sched1 ? ((sched1.runMs - sched0.runMs) / (s1.hrMs - s0.hrMs)) * 100 : NaN,
        machineBusyPct: systemBusyPct(sys0, sys1),
        engineEldP99Ms: s1.eld.p99,
        engineEldMaxMs: s1.eld.max,
        rssMiB: s1.rssMiB,
      };
      results.push(r);
      const failed = total - completed;
      console.log(
        `${rate} cps: ${completed}/${total} completed, started at ${fmt(r.achievedCps, 1)} cps, failures ${failed}${failed ? ` ${JSON.stringify(failures)}` : ''}` +
          `\n    setup p50/p99/max ${fmt(r.setupP50Ms)}/${fmt(r.setupP99Ms)}/${fmt(r.setupMaxMs)} ms, BYE p50/p99 ${fmt(r.byeP50Ms)}/${fmt(r.byeP99Ms)} ms, peak ${peak} concurrent` +
          `\n    engine CPU ${fmt(r.engineCpuPct, 1)}% of ${cores()} cores (${fmt(r.cpuMsPerCall, 1)} ms per call), main thread on CPU ${fmt(r.mainRunPct, 0)}% and waiting for one ${fmt(r.mainWaitPct, 1)}%, machine busy ${fmt(r.machineBusyPct, 1)}%, engine ELD p99/max ${fmt(r.engineEldP99Ms)}/${fmt(r.engineEldMaxMs)} ms, RSS ${fmt(r.rssMiB, 1)} MiB`,
      );
      // Let the engine finish ending calls before the next rate.
      for (let i = 0; i < 50 && (await engine.stats()).media.calls > 0; i++) await sleep(200);
      await sleep(1000);
      if (failed > 0 && !all) {
        console.log(`# stopping at ${rate} cps: it had failures`);
        break;
      }
    }
    const clean = results.filter((r) => r.completed === r.attempted).map((r) => r.targetCps);
    console.log(`# highest rate sustained ${durationS} s with no failure: ${clean.length ? `${Math.max(...clean)} cps` : 'none'}`);
    if (afterS > 0) {
      // Timer J keeps non-INVITE server transactions 32 s (64 × T1): wait past it, then compare
      // memory after a full GC with the baseline taken after the warm-up.
      await sleep(afterS * 1000);
      const mem1 = await engine.memory();
      const ended = results.reduce((a, r) => a + r.answered, 0);
      console.log(
        `# ${afterS} s after the last call: heap after GC ${fmt(mem0.heapUsedMiB, 1)} → ${fmt(mem1.heapUsedMiB, 1)} MiB ` +
          `(${fmt(((mem1.heapUsedMiB - mem0.heapUsedMiB) * 1024 * 1024) / Math.max(1, ended), 0)} bytes per call over ${ended} calls), RSS ${fmt(mem0.rssMiB, 1)} → ${fmt(mem1.rssMiB, 1)} MiB`,
      );
    }
    await scrapeMetrics(engine.httpUrl).catch(() => undefined);
  } finally {
    await gen.close(carriers);
    await engine.close();
    console.log(`# load average after: ${loadavg().join(' ')}`);
  }
  if (jsonOut) {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(jsonOut, JSON.stringify({ info, loadavgAfter: loadavg(), durationS, holdMs, results }, null, 2));
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main(process.argv.slice(2)).then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
