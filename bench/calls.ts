/**
 * Concurrent G.711 calls with media both ways, the engine in its own process.
 *
 *   node --import tsx bench/calls.ts [--levels 25,50,100,150,200] [--window 15] [--sub 3]
 *        [--settle 3] [--ramp-cps 50] [--vad] [--no-probe] [--json out.json] [--cpu-prof DIR]
 *        [--quiet-wait S] [--heap-prof DIR]
 *
 * The engine is `startEngine()` in a child process (lib/engine-child.ts); this process is the
 * load generator: carriers on 127.0.0.11, .12, … (one `ip` trunk and account each, so no call
 * cap of 200 per account or trunk is hit), calls to the `echo` diagnostics number (or, with
 * --vad, to each trunk's number whose stand-in engine is echo + Silero VAD on every frame),
 * PCMU 20 ms both ways. N ramps up; at each level, after `settle` seconds, a `window`-second
 * measurement cut into `sub`-second sub-windows reads:
 * - engine CPU: process.cpuUsage() deltas over IPC (all threads), % of all cores; /proc cross-check;
 * - how long the engine's event-loop thread was runnable but waiting for a CPU (schedstat): the
 *   part of every delay caused by other work on the machine;
 * - engine event-loop delay (monitorEventLoopDelay in the child, and GET /metrics'
 *   nodejs_eventloop_lag_p99_seconds, which prom-client resets at every scrape);
 * - outbound frame-interval error: at the engine's socket.send (probe) and at arrival here;
 * - with --heap-prof DIR, a sampling heap profile of the engine per level (bench/tools/heap-summary.ts);
 * - the engine event-loop thread's GC pauses (perf_hooks 'gc' entries): scavenges and major GCs;
 * - memory per call after a forced GC: heap and RSS against the no-call baseline;
 * - packets: sent by the engine vs nominal (skipped slots), loss both ways.
 * Latency figures are given for the whole window (median of the sub-windows) and for the
 * sub-window in which the engine waited least for a CPU, since on a shared machine other
 * processes come and go; the JSON output keeps every sub-window.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { spawnEngine, scrapeMetrics, type EngineProc } from './lib/engine-proc.ts';
import type { ChildStats } from './lib/engine-child.ts';
import { LoadGen, provisionCarriers, type PlacedCall, type Carrier } from './lib/loadgen.ts';
import { cores, loadavg, machineInfo, systemBusyPct, systemCpu, threadSchedMs, waitForQuiet } from './lib/machine.ts';
import { fmt, type HistSummary } from './lib/stats.ts';
import { list, num, parseArgs, sleep, watchdog } from './lib/cli.ts';

/** One sub-window's figures. */
export interface Sample {
  seconds: number;
  engineCpuPct: number;
  engineCpuPctProc: number;
  loadgenCpuPct: number;
  machineBusyPct: number;
  /** Machine busy minus engine minus load generator: other work on the box. */
  otherCpuPct: number;
  /** Engine main (event-loop) thread: on a CPU, and runnable but waiting for one, % of the window. */
  mainRunPct: number;
  mainWaitPct: number;
  eld: HistSummary;
  eldMetricsP99Ms: number;
  /** The engine's event-loop thread's GC pauses in the window: scavenges and other (major) pauses per second, their p99 and max. */
  gcScavengesPerS: number;
  gcScavengeP99Ms: number;
  gcScavengeMaxMs: number;
  gcMajorPerS: number;
  gcMajorMaxMs: number;
  engineSendInterval: HistSummary;
  rxInterval: HistSummary;
  rxGrid: HistSummary;
  /** Packets the engine sent, % of 50 per call-second (skipped slots show here, not as loss). */
  engineSentPct: number;
  /** Packets that reached the load generator, % of 50 per call-second. */
  deliveryPct: number;
  lossOutPct: number;
  lossInPct: number;
  audiblePct: number;
  engineLateFrames: number;
  engineConcealed: number;
  engineSkippedSlots: number;
  engineInboundQueueDropped: number;
  loadgenEldP99Ms: number;
  loadgenLateTicks: number;
  vadWindowsPerRun?: number;
}

export interface LevelResult {
  calls: number;
  failedSetups: number;
  droppedCalls: number;
  /** Over the whole window. */
  engineCpuPct: number;
  /** (engine CPU − CPU with no call) ÷ calls, % of one core. */
  cpuPerCallPctCore: number;
  engineSentPct: number;
  mainWaitPct: number;
  /** Median over the sub-windows of each figure. */
  median: Sample;
  /** The sub-window in which the engine's thread waited least for a CPU. */
  quietest: Sample;
  samples: Sample[];
  rssMiB: number;
  heapUsedMiB: number;
  memPerCallKiB: number;
  heapPerCallKiB: number;
  engineOutboundMaxLateMs: number;
  vadErrors?: number;
}

export async function main(argv: string[]): Promise<void> {
  const args = parseArgs(argv);
  const levels = list(args, 'levels', [25, 50, 100, 150, 200], 1000).sort((a, b) => a - b);
  const windowS = num(args, 'window', 15, 1, 60);
  const subS = Math.min(windowS, num(args, 'sub', 3, 1, 60));
  const settleS = num(args, 'settle', 3, 0, 30);
  const rampCps = num(args, 'ramp-cps', 50, 1, 500);
  const vad = args.has('vad');
  const probe = !args.has('no-probe');
  const jsonOut = args.get('json');
  const profDir = args.get('cpu-prof');
  const heapDir = args.get('heap-prof');
  if (heapDir) mkdirSync(heapDir, { recursive: true });
  const maxN = levels[levels.length - 1]!;
  const perCarrier = 150;
  const carriersN = Math.max(1, Math.ceil(maxN / perCarrier));
  const budgetMs = 20_000 + maxN * 2 * (1000 / rampCps) + levels.length * (windowS + settleS + 8) * 1000 + 30_000;
  const quietS = num(args, 'quiet-wait', 0, 0, 600);
  if (quietS > 0) console.log(`# waited for a quiet machine: ${fmt(await waitForQuiet(quietS), 0)} % busy before the start`);
  watchdog(budgetMs, 'calls benchmark');

  const info = machineInfo();
  console.log(`# calls benchmark${vad ? ' (echo + Silero VAD per call)' : ' (echo diagnostics)'} — ${info.date}`);
  console.log(`# ${info.cores} cores, ${info.cpuModel}, ${info.memTotalGiB} GiB, node ${info.node}; load average before: ${info.loadavg.join(' ')}`);
  console.log(`# levels ${levels.join(',')}, window ${windowS} s in ${subS} s sub-windows, settle ${settleS} s, ${carriersN} carrier(s), send probe ${probe ? 'on' : 'off'}`);

  const engine = await spawnEngine({ accounts: carriersN, vad, probe, lifetimeMs: budgetMs + 20_000, rtpPortMin: 40_000, rtpPortMax: 40_000 + maxN * 2 + 200, ...(profDir ? { cpuProfDir: profDir } : {}) });
  const gen = new LoadGen();
  let carriers: Array<Carrier & { number: string }> = [];
  const calls: PlacedCall[] = [];
  const results: LevelResult[] = [];
  let stoppedBecause: string | undefined;
  let idleCpuPct = NaN;
  try {
    carriers = await provisionCarriers(engine, carriersN, { assistant: vad });
    const target = (c: Carrier & { number: string }) => `sip:${vad ? c.number : 'echo'}@127.0.0.1:${engine.sipPort}`;
    gen.startClock();

    // Warm-up: a few calls so JIT, codec tables, ONNX and SQLite statements are hot before the baseline.
    const warm = await Promise.all(carriers.slice(0, 1).flatMap((c) => Array.from({ length: 5 }, () => gen.place(c, target(c)))));
    await sleep(2000);
    await Promise.all(warm.map((c) => gen.hangup(c)));
    await sleep(1500);
    const baseMem = await engine.memory();
    const idle = await measure(engine, gen, 0, 3);
    idleCpuPct = idle.engineCpuPct;
    console.log(`# engine pid ${engine.pid}; with no call: RSS ${fmt(baseMem.rssMiB, 1)} MiB, heap ${fmt(baseMem.heapUsedMiB, 1)} MiB, CPU ${fmt(idleCpuPct, 2)} % of ${cores()} cores`);

    let failedTotal = 0;
    for (const n of levels) {
      // Ramp to n calls at rampCps, round-robin over the carriers.
      let failed = 0;
      const t0 = performance.now();
      const placing: Array<Promise<void>> = [];
      const have = calls.length;
      for (let i = have; i < n; i++) {
        const wait = t0 + ((i - have) * 1000) / rampCps - performance.now();
        if (wait > 0) await sleep(wait);
        const c = carriers[i % carriers.length]!;
        placing.push(
          gen.place(c, target(c)).then((call) => {
            if (call.status === 200) calls.push(call);
            else failed++;
          }),
        );
      }
      await Promise.all(placing);
      failedTotal += failed;
      await sleep(settleS * 1000);

      const live = calls.filter((c) => !c.endedEarly).length;
      const s0 = await engine.stats();
      if (heapDir) await engine.request('heapSampleStart');
      const samples: Sample[] = [];
      for (let t = 0; t < windowS - 1e-9; t += subS) samples.push(await measure(engine, gen, live, Math.min(subS, windowS - t)));
      const heapFile = heapDir ? path.join(heapDir, `engine-${n}-calls.heapprofile`) : undefined;
      if (heapFile) await engine.request('heapSampleStop', { file: path.resolve(heapFile) }, 60_000);
      const s1 = await engine.stats();
      const mem = await engine.memory();
      const dropped = calls.filter((c) => c.endedEarly).length;
      const secs = samples.reduce((a, x) => a + x.seconds, 0);
      const wavg = (f: (x: Sample) => number) => samples.reduce((a, x) => a + f(x) * x.seconds, 0) / secs;
      const engineCpuPct = wavg((x) => x.engineCpuPct);
      const r: LevelResult = {
        calls: live,
        failedSetups: failed,
        droppedCalls: dropped,
        engineCpuPct,
        cpuPerCallPctCore: live > 0 ? ((engineCpuPct - idleCpuPct) * cores()) / live : NaN,
        engineSentPct: wavg((x) => x.engineSentPct),
        mainWaitPct: wavg((x) => x.mainWaitPct),
        median: medianSample(samples),
        quietest: [...samples].sort((a, b) => a.mainWaitPct - b.mainWaitPct)[0]!,
        samples,
        rssMiB: mem.rssMiB,
        heapUsedMiB: mem.heapUsedMiB,
        memPerCallKiB: live > 0 ? ((mem.rssMiB - baseMem.rssMiB) * 1024) / live : NaN,
        heapPerCallKiB: live > 0 ? ((mem.heapUsedMiB - baseMem.heapUsedMiB) * 1024) / live : NaN,
        engineOutboundMaxLateMs: s1.media.outboundMaxLateMs,
        ...(vad && s0.vad && s1.vad ? { vadErrors: s1.vad.errors } : {}),
      };
      results.push(r);
      printLevel(r, vad);
      if (r.engineCpuPct > 95) {
        stoppedBecause = `engine CPU ${fmt(r.engineCpuPct, 0)} % at ${n} calls: saturated, not ramping further`;
        break;
      }
      if (failed > n / 2) {
        stoppedBecause = `${failed} of the setups for level ${n} failed: not ramping further`;
        break;
      }
    }
    if (stoppedBecause) console.log(`# ${stoppedBecause}`);
    summarise(results, failedTotal, idleCpuPct);
  } finally {
    const byes = await Promise.all(calls.map((c) => gen.hangup(c, 5000)));
    const badByes = byes.filter((s) => s !== 200 && s !== 0).length;
    if (badByes) console.log(`# ${badByes} BYE(s) did not get a 200`);
    await gen.close(carriers);
    await engine.close();
    console.log(`# load average after: ${loadavg().join(' ')}`);
  }
  if (jsonOut) {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(jsonOut, JSON.stringify({ info, loadavgAfter: loadavg(), vad, probe, windowS, subS, settleS, idleCpuPct, results, stoppedBecause }, null, 2));
  }
}

function summarise(results: LevelResult[], failedTotal: number, idleCpuPct: number): void {
  // A level only counts when media really flowed: every call up and ≥ 99.5 % of the engine's
  // packets sent (under CPU starvation the engine skips slots, which also lowers its CPU figure).
  const ok = (r: LevelResult) => r.engineCpuPct < 70 && r.failedSetups === 0 && r.droppedCalls === 0 && r.engineSentPct >= 99.5;
  const clean = results.filter(ok);
  console.log(`# largest N under 70 % engine CPU with every call up and ≥ 99.5 % of packets sent: ${clean.length ? Math.max(...clean.map((r) => r.calls)) : 'none'}; failed setups in total: ${failedTotal}`);
  const goals = (s: Sample) => s.engineSendInterval.p99 < 3 && s.eld.p99 < 5;
  const whole = clean.filter((r) => goals(r.median)).map((r) => r.calls);
  const quiet = clean.filter((r) => goals(r.quietest)).map((r) => r.calls);
  console.log(`# … also meeting send-interval error p99 < 3 ms and event-loop delay p99 < 5 ms: ${whole.length ? Math.max(...whole) : 'none'} (median sub-window), ${quiet.length ? Math.max(...quiet) : 'none'} (quietest sub-window)`);
  const worstWait = Math.max(...results.map((r) => r.mainWaitPct));
  if (worstWait > 5) console.log(`# the engine's event-loop thread waited for a CPU ${fmt(worstWait, 0)} % of a window at worst: other work on the machine; latency figures are pessimistic`);
  // CPU time per call is the figure least disturbed by other work: project from the largest level
  // that sent ≥ 99.5 % (or, failing that, the one that sent the most).
  const ref = results.filter((r) => r.engineSentPct >= 99.5).pop() ?? [...results].sort((a, b) => b.engineSentPct - a.engineSentPct)[0];
  if (ref && Number.isFinite(ref.cpuPerCallPctCore)) {
    const n = Math.floor(((70 - idleCpuPct) * cores()) / ref.cpuPerCallPctCore);
    console.log(`# projection from N=${ref.calls} (${fmt(ref.cpuPerCallPctCore, 3)} % of a core per call, ${fmt(ref.engineSentPct, 1)} % sent): ${n} calls at 70 % of ${cores()} cores, if CPU were the only limit`);
  }
}

/** One sub-window: IPC stats around it, /proc and schedstat, the load generator's receive window. */
async function measure(engine: EngineProc, gen: LoadGen, live: number, seconds: number): Promise<Sample> {
  await engine.request('reset');
  await scrapeMetrics(engine.httpUrl).catch(() => undefined);
  const s0 = await engine.stats();
  const p0 = engine.procCpuMs();
  const sched0 = threadSchedMs(engine.pid);
  const sys0 = systemCpu();
  const g0 = process.cpuUsage();
  const w0 = performance.now();
  gen.startWindow();
  await sleep(seconds * 1000);
  const w = gen.endWindow();
  const wallMs = performance.now() - w0;
  const g = process.cpuUsage(g0);
  const sys1 = systemCpu();
  const p1 = engine.procCpuMs();
  const sched1 = threadSchedMs(engine.pid);
  const s1: ChildStats = await engine.stats();
  const metrics = await scrapeMetrics(engine.httpUrl).catch(() => new Map<string, number>());
  const k = cores();
  const cpuMs = (s1.cpuUs.user + s1.cpuUs.system - s0.cpuUs.user - s0.cpuUs.system) / 1000;
  const childWall = s1.hrMs - s0.hrMs;
  const m0 = s0.media;
  const m1 = s1.media;
  const inRecv = m1.packetsReceived - m0.packetsReceived;
  const inLost = Math.max(0, m1.lost - m0.lost);
  const engineCpuPct = (cpuMs / (childWall * k)) * 100;
  const engineCpuPctProc = p0 !== undefined && p1 !== undefined ? ((p1 - p0) / (wallMs * k)) * 100 : NaN;
  const loadgenCpuPct = ((g.user + g.system) / 1000 / (wallMs * k)) * 100;
  const machineBusyPct = systemBusyPct(sys0, sys1);
  return {
    seconds: wallMs / 1000,
    engineCpuPct,
    engineCpuPctProc,
    loadgenCpuPct,
    machineBusyPct,
    otherCpuPct: machineBusyPct - (Number.isFinite(engineCpuPctProc) ? engineCpuPctProc : engineCpuPct) - loadgenCpuPct,
    mainRunPct: sched0 && sched1 ? ((sched1.runMs - sched0.runMs) / wallMs) * 100 : NaN,
    mainWaitPct: sched0 && sched1 ? ((sched1.waitMs - sched0.waitMs) / wallMs) * 100 : NaN,
    eld: s1.eld,
    // prom-client's histogram samples every 10 ms (Node's default resolution) and, like ours,
    // counts the whole interval: subtract the resolution to get the delay.
    eldMetricsP99Ms: Math.max(0, (metrics.get('nodejs_eventloop_lag_p99_seconds') ?? NaN) * 1000 - 10),
    gcScavengesPerS: s1.gc.scavenges / (wallMs / 1000),
    gcScavengeP99Ms: s1.gc.scavengeMs.p99,
    gcScavengeMaxMs: s1.gc.scavengeMs.max,
    gcMajorPerS: s1.gc.majors / (wallMs / 1000),
    gcMajorMaxMs: s1.gc.majorMs.max,
    engineSendInterval: s1.sendInterval,
    rxInterval: w.interval.summary(),
    rxGrid: w.grid.summary(),
    engineSentPct: live > 0 ? ((m1.packetsSent - m0.packetsSent) / (live * (childWall / 20))) * 100 : NaN,
    deliveryPct: live > 0 ? (w.received / (live * (wallMs / 20))) * 100 : NaN,
    lossOutPct: w.expected > 0 ? Math.max(0, (1 - w.received / w.expected) * 100) : NaN,
    lossInPct: inRecv + inLost > 0 ? (inLost / (inRecv + inLost)) * 100 : NaN,
    audiblePct: w.received > 0 ? (w.audible / w.received) * 100 : NaN,
    engineLateFrames: m1.lateFrames - m0.lateFrames,
    engineConcealed: m1.concealedFrames - m0.concealedFrames,
    engineSkippedSlots: m1.outboundSkippedSlots - m0.outboundSkippedSlots,
    engineInboundQueueDropped: m1.inboundQueueDropped - m0.inboundQueueDropped,
    loadgenEldP99Ms: Math.max(0, gen.eld.percentile(99) / 1e6 - 5),
    loadgenLateTicks: gen.lateTicks,
    ...(s0.vad && s1.vad && s1.vad.runs > s0.vad.runs ? { vadWindowsPerRun: (s1.vad.windows - s0.vad.windows) / Math.max(1, s1.vad.runs - s0.vad.runs) } : {}),
  };
}

/** Field-by-field median over the sub-windows (histogram summaries too). */
function medianSample(samples: Sample[]): Sample {
  const med = (xs: number[]) => {
    const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
    if (s.length === 0) return NaN;
    return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  const first = samples[0]!;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(first) as Array<keyof Sample>) {
    const v = first[key];
    if (typeof v === 'number') out[key] = med(samples.map((x) => x[key] as number));
    else if (v && typeof v === 'object') {
      const h: Record<string, number> = {};
      for (const hk of Object.keys(v)) h[hk] = med(samples.map((x) => (x[key] as unknown as Record<string, number>)[hk]!));
      out[key] = h;
    }
  }
  return out as unknown as Sample;
}

function printLevel(r: LevelResult, vad: boolean): void {
  const line = (label: string, s: Sample) =>
    `${label}: engine CPU ${fmt(s.engineCpuPct, 1)}% (/proc ${fmt(s.engineCpuPctProc, 1)}%), main thread on CPU ${fmt(s.mainRunPct, 0)}% waiting ${fmt(s.mainWaitPct, 1)}%, machine ${fmt(s.machineBusyPct, 0)}% (other work ${fmt(s.otherCpuPct, 0)}%)` +
    `\n      ELD p50/p99/max ${fmt(s.eld.p50)}/${fmt(s.eld.p99)}/${fmt(s.eld.max)} ms (/metrics p99 ${fmt(s.eldMetricsP99Ms)})` +
    `; send-interval err p50/p99/max ${fmt(s.engineSendInterval.p50)}/${fmt(s.engineSendInterval.p99)}/${fmt(s.engineSendInterval.max)} ms` +
    `\n      GC pauses: scavenge ${fmt(s.gcScavengesPerS, 1)}/s p99/max ${fmt(s.gcScavengeP99Ms)}/${fmt(s.gcScavengeMaxMs)} ms, other ${fmt(s.gcMajorPerS, 1)}/s max ${fmt(s.gcMajorMaxMs)} ms` +
    `\n      rx-interval err p50/p99 ${fmt(s.rxInterval.p50)}/${fmt(s.rxInterval.p99)} ms, rx grid p50/p99 ${fmt(s.rxGrid.p50)}/${fmt(s.rxGrid.p99)} ms; sent ${fmt(s.engineSentPct, 1)}%` +
    `; loadgen CPU ${fmt(s.loadgenCpuPct, 1)}%, ELD p99 ${fmt(s.loadgenEldP99Ms)} ms${vad ? `; VAD ${fmt(s.vadWindowsPerRun ?? NaN, 1)} windows/run` : ''}`;
  const all = r.samples;
  const sum = (f: (s: Sample) => number) => all.reduce((a, s) => a + f(s), 0);
  console.log(
    `N=${r.calls}: engine CPU ${fmt(r.engineCpuPct, 1)}% of ${cores()} cores (${fmt(r.cpuPerCallPctCore, 3)}% of a core per call), packets sent ${fmt(r.engineSentPct, 1)}% of nominal, main thread waiting for a CPU ${fmt(r.mainWaitPct, 1)}%` +
      `\n    memory after GC: RSS ${fmt(r.rssMiB, 1)} MiB (${fmt(r.memPerCallKiB, 0)} KiB/call), heap ${fmt(r.heapUsedMiB, 1)} MiB (${fmt(r.heapPerCallKiB, 0)} KiB/call)` +
      `\n    loss out ${fmt(Math.max(...all.map((s) => s.lossOutPct)), 3)}% in ${fmt(Math.max(...all.map((s) => s.lossInPct)), 3)}%; engine: late ${sum((s) => s.engineLateFrames)}, concealed ${sum((s) => s.engineConcealed)}, skipped slots ${sum((s) => s.engineSkippedSlots)}, inbound queue drops ${sum((s) => s.engineInboundQueueDropped)}; failed setups ${r.failedSetups}, dropped calls ${r.droppedCalls}${r.vadErrors ? `, VAD errors ${r.vadErrors}` : ''}` +
      `\n    ${line(`median of ${all.length}`, r.median)}` +
      `\n    ${line(`quietest ${fmt(r.quietest.seconds, 0)} s`, r.quietest)}`,
  );
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
