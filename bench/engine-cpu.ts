/**
 * CPU per call of pipeline calls (the goal: VAD + denoiser + pipeline under 0.6 % of a core),
 * at the concurrency production runs them: `--calls` (100) calls up at once in the real engine
 * process (lib/voice-world.ts: engine child, provider stand-ins in their own process, loopback
 * SIP/RTP), so Silero batches across calls as it does in production.
 *
 *   node --import tsx bench/engine-cpu.ts [--calls 100] [--window 20] [--windows 1] [--settle 40]
 *       [--phases pipeline,no-denoise,echo] [--ramp-cps 10] [--json FILE] [--cpu-prof DIR] [--heap-prof DIR] [--quiet-wait S]
 *       [--background FIXTURE] [--rtp-port-min PORT]
 *
 * Each call talks the whole time: the question fixture every 0.3–1.5 s after the assistant's
 * reply ends, room tone in between (lib/conversation.ts; `--background noise-street` for a noisy
 * line instead: the VAD's and denoiser's silence gate then never closes). Phases, each on fresh calls:
 *   pipeline     the assistant as shipped: denoiser on (enable_noise_cancellation defaults to true)
 *   no-denoise   the same with enable_noise_cancellation false
 *   echo         the `echo` diagnostics number with the same callers: the media stack alone
 *                (SIP, RTP, jitter buffer, G.711, 8 ↔ 16 kHz), for the "pipeline share"
 * Per phase, over `--window` s once every call is up and `--settle` s have passed; `--windows N`
 * takes N such windows back to back on the same calls (the phase's figures are then over all of
 * them, and `windows` in the JSON gives each one's per-call CPU and the stand-ins' beside it):
 * many readings from one settle, across whatever phases the VM goes through. The settle covers
 * V8's warm-up: code that runs once per turn (the openai client, undici, SSE parsing, SQL) is
 * hot enough to be optimized only after many turns, and for the first minute or so V8's helper
 * threads keep compiling it for minutes. Measured (`--trace-opt`, 100 calls, docs/bench-history.md, 2026-11-28 07:06), TurboFan's
 * time a second: 66 ms 20–40 s after the start, 15 ms at 60–80 s (the default window: about 3 % of
 * the figure), 5 ms at 120–160 s, 2–3 ms at 160–200 s. That is a start-up cost of the process, not
 * of a call: `--settle 120` measures the steady state, `--settle 4` shows the warm-up.
 *   engine CPU    process.cpuUsage() delta in the engine (every thread) ÷ wall ÷ calls up
 *   per thread    /proc/<pid>/task/*: the event-loop thread ('main'), the VAD worker and others
 *   waiting       the event-loop thread's runnable-but-not-running time (schedstat): other work
 *                 on the machine (including the bench's own stand-ins and phones) delaying it
 * pipeline share = pipeline − echo, per call: what the voice session adds on top of a call.
 *
 * Comparing two builds: this VM's speed drifts over minutes (up to 1.6× the CPU for the same
 * work: docs/bench-history.md, 2026-11-27 08:04), more than most changes.
 * Run both at once instead, from two worktrees, each with half the calls and its own
 * `--rtp-port-min` (e.g. `--calls 50 --rtp-port-min 54000` and `--calls 50 --rtp-port-min 58000`):
 * the drift then hits both alike, and the pairs compare where single runs do not (bench/README.md).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { num, parseArgs, sleep, watchdog } from './lib/cli.ts';
import { loadavg, machineInfo, systemBusyPct, systemCpu, threadSchedMs, threadsCpuMs, waitForQuiet } from './lib/machine.ts';
import { converse, startVoiceWorld, updateAssistants, type ConversationResult, type VoiceWorld } from './lib/voice-world.ts';

type Phase = 'pipeline' | 'no-denoise' | 'echo';

interface Snapshot {
  cpuUs: number;
  hrMs: number;
  threads: Map<string, number>;
  sched: { runMs: number; waitMs: number } | undefined;
  standInsMs: number | undefined;
  eldP99: number;
  gc: { scavenges: number; scavengeMs: number; majors: number; majorMs: number };
  vadRuns: number;
  vadWindows: number;
  /** Audio messages the Deepgram stand-in has had (all calls). */
  sttMessages: number;
  /** Calls whose inbound audio the native drain takes. */
  inboundNative: number;
  sys: ReturnType<typeof systemCpu>;
}

async function snapshot(w: VoiceWorld): Promise<Snapshot> {
  const [s, standIns] = await Promise.all([w.engine.stats(), w.standIns.stats()]);
  return {
    cpuUs: s.cpuUs.user + s.cpuUs.system,
    hrMs: s.hrMs,
    threads: threadsCpuMs(w.engine.pid),
    sched: threadSchedMs(w.engine.pid),
    standInsMs: w.standIns.procCpuMs(),
    eldP99: s.eld.p99,
    gc: { scavenges: s.gc.scavenges, scavengeMs: s.gc.scavengeMs.count * (s.gc.scavengeMs.mean || 0), majors: s.gc.majors, majorMs: s.gc.majorMs.count * (s.gc.majorMs.mean || 0) },
    vadRuns: s.vad?.runs ?? 0,
    vadWindows: s.vad?.windows ?? 0,
    sttMessages: standIns.sttAudioMessages,
    inboundNative: s.media.inboundNative,
    sys: systemCpu(),
  };
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** What the API allows an assistant's max_duration (s). */
const MAX_CALL_S = 1200;

/** How long the first call must last: the ramp, the settle, the windows and a margin (s). */
function callSeconds(calls: number, o: { windowS: number; windows: number; settleS: number; rampCps: number }): number {
  return calls / o.rampCps + o.settleS + o.windowS * o.windows + 30;
}

/** One window's per-call CPU (all threads, and by thread) and the stand-ins' CPU over it. */
function windowReading(a: Snapshot, b: Snapshot, callsUp: number): Record<string, unknown> {
  const wall = b.hrMs - a.hrMs;
  const perCall = (ms: number) => r3((ms / wall / callsUp) * 100);
  const threads: Record<string, number> = {};
  for (const [t, ms] of b.threads) threads[t] = perCall(ms - (a.threads.get(t) ?? 0));
  const standIns = a.standInsMs !== undefined && b.standInsMs !== undefined ? r3(((b.standInsMs - a.standInsMs) / wall) * 100) : undefined;
  const perCallAll = perCall((b.cpuUs - a.cpuUs) / 1000);
  return {
    window_s: r3(wall / 1000),
    per_call_pct_of_core: perCallAll,
    per_call_by_thread_pct_of_core: threads,
    stand_ins_pct_of_one_core: standIns,
    // Per call ÷ the stand-ins' CPU: a rough allowance for the VM's speed (it falls somewhat as
    // the VM slows; docs/bench-history.md, 2026-11-28 12:53).
    per_call_to_stand_ins: standIns ? Math.round((perCallAll / standIns) * 10_000) / 10_000 : undefined,
  };
}

async function phase(w: VoiceWorld, name: Phase, calls: number, o: { windowS: number; windows: number; settleS: number; rampCps: number; heapDir: string | undefined }): Promise<Record<string, unknown>> {
  // A call lasts at most its assistant's max_duration (the benchmark's: 600 s; 1200 s at most):
  // every window must end before the first call does.
  if (name !== 'echo') await updateAssistants(w, { enable_noise_cancellation: name === 'pipeline', max_duration: callSeconds(calls, o) > 600 ? MAX_CALL_S : 600 });
  let stop = false;
  let up = 0;
  let done = 0;
  const plan = {
    turns: 10_000,
    stop: () => stop,
    pauseMs: [300, 1500] as [number, number],
    quietMs: 700,
    replyTimeoutMs: 15_000,
    ...(name === 'echo' ? { number: 'echo', greeting: false } : {}),
  };
  const running: Promise<ConversationResult>[] = Array.from({ length: calls }, (_, i) =>
    sleep((i * 1000) / o.rampCps).then(() => converse(w, w.carriers[i % w.carriers.length]!, plan, () => up++).finally(() => done++)),
  );
  const deadline = Date.now() + (calls / o.rampCps) * 1000 + 20_000;
  while (up + done < calls && Date.now() < deadline) await sleep(200);
  await sleep(o.settleS * 1000);
  await w.engine.request('reset');
  const load0 = loadavg();
  if (o.heapDir) await w.engine.request('heapSampleStart');
  const a = await snapshot(w);
  const upAtStart = up - done;
  const windows: Record<string, unknown>[] = [];
  let b = a;
  for (let i = 0; i < o.windows; i++) {
    const from = b;
    const upBefore = up - done;
    await sleep(o.windowS * 1000);
    b = await snapshot(w);
    windows.push(windowReading(from, b, (upBefore + up - done) / 2));
    if (o.windows > 1) console.error(`${name} window ${i + 1}/${o.windows}: ${JSON.stringify(windows[i])}`);
  }
  if (o.heapDir) await w.engine.request('heapSampleStop', { file: path.resolve(o.heapDir, `engine-${name}.heapprofile`) }, 60_000);
  const upAtEnd = up - done;
  stop = true;
  const results = await Promise.all(running);
  const mean = (upAtStart + upAtEnd) / 2;
  const wall = b.hrMs - a.hrMs;
  // The whole span, read as one window (with N = 1 it is the window).
  const whole = windowReading(a, b, mean);
  const failed = results.filter((r) => r.error);
  const out: Record<string, unknown> = {
    phase: name,
    calls_up: [upAtStart, upAtEnd],
    // Calls whose inbound audio the native drain took (native/rtp-udp/fast_drain.c), at the window's ends.
    calls_inbound_native: [a.inboundNative, b.inboundNative],
    calls_failed: failed.length,
    failures: [...new Set(failed.map((r) => r.error))].slice(0, 3),
    replies_per_call_per_minute: r3(results.reduce((s, r) => s + r.answered, 0) / calls / ((results[0] ? results[0].endedAt - results[0].startedAt : wall) / 60_000)),
    window_s: whole.window_s,
    engine_pct_of_one_core: r3(((b.cpuUs - a.cpuUs) / 1000 / wall) * 100),
    per_call_pct_of_core: whole.per_call_pct_of_core,
    per_call_by_thread_pct_of_core: whole.per_call_by_thread_pct_of_core,
    main_thread_on_cpu_pct: a.sched && b.sched ? r3(((b.sched.runMs - a.sched.runMs) / wall) * 100) : undefined,
    main_thread_waiting_pct: a.sched && b.sched ? r3(((b.sched.waitMs - a.sched.waitMs) / wall) * 100) : undefined,
    engine_eld_p99_ms: r3(b.eldP99),
    // The event-loop thread's own pauses; the V8 helper threads' share is in 'other threads'.
    main_gc: {
      scavenges_per_s: r3(((b.gc.scavenges - a.gc.scavenges) / wall) * 1000),
      scavenge_pct_of_one_core: r3(((b.gc.scavengeMs - a.gc.scavengeMs) / wall) * 100),
      majors: b.gc.majors - a.gc.majors,
      major_pct_of_one_core: r3(((b.gc.majorMs - a.gc.majorMs) / wall) * 100),
    },
    vad_runs_per_s: r3(((b.vadRuns - a.vadRuns) / wall) * 1000),
    vad_windows_per_run: b.vadRuns > a.vadRuns ? r3((b.vadWindows - a.vadWindows) / (b.vadRuns - a.vadRuns)) : undefined,
    stt_messages_per_call_per_s: r3(((b.sttMessages - a.sttMessages) / wall / mean) * 1000),
    stand_ins_pct_of_one_core: whole.stand_ins_pct_of_one_core,
    machine_busy_pct: r3(systemBusyPct(a.sys, b.sys)),
    loadavg_before: load0,
    loadavg_after: loadavg(),
    ...(o.windows > 1 ? { windows } : {}),
  };
  await sleep(2000); // calls torn down, records written
  return out;
}

export async function main(argv: string[]): Promise<void> {
  const args = parseArgs(argv);
  const calls = num(args, 'calls', 100, 1, 300);
  const windowS = num(args, 'window', 20, 3, 120);
  const windowCount = num(args, 'windows', 1, 1, 200);
  const settleS = num(args, 'settle', 40, 0, 600);
  const rampCps = num(args, 'ramp-cps', 10, 1, 200);
  const phases = (args.get('phases') ?? 'pipeline,no-denoise,echo').split(',') as Phase[];
  for (const p of phases) if (!['pipeline', 'no-denoise', 'echo'].includes(p)) throw new Error(`unknown phase ${p}`);
  const span = callSeconds(calls, { windowS, windows: windowCount, settleS, rampCps });
  const longest = phases.includes('echo') ? 600 : MAX_CALL_S;
  if (span > longest) throw new Error(`the calls would end before the last window (${Math.round(span)} s of ramp, settle and windows; a call lasts at most ${longest} s${longest === 600 ? ' on the echo number' : ''})`);
  const quietWait = num(args, 'quiet-wait', 0, 0, 600);
  const jsonPath = args.get('json');
  const profDir = args.get('cpu-prof');
  const heapDir = args.get('heap-prof');
  if (heapDir) mkdirSync(heapDir, { recursive: true });
  // Each phase: the ramp, the settle, the window and the teardown (with room to spare).
  const budgetMs = Math.max(570_000, phases.length * (calls / rampCps + settleS + windowS * windowCount * 1.05 + 90) * 1000);
  watchdog(budgetMs + quietWait * 1000, 'engine-cpu');
  const machine = machineInfo();
  if (quietWait > 0) console.error(`machine ${Math.round(await waitForQuiet(quietWait))} % busy at start`);
  const background = args.get('background');
  const w = await startVoiceWorld({
    rtpPortMin: num(args, 'rtp-port-min', 54_000, 1024, 60_000),
    maxCalls: calls,
    turns: false,
    lifetimeMs: budgetMs + 20_000,
    ...(profDir ? { cpuProfDir: profDir } : {}),
    ...(background ? { background } : {}),
  });
  const out: Record<string, unknown> = { bench: 'engine-cpu', machine, calls, args: Object.fromEntries(args) };
  const results: Record<string, any>[] = [];
  out.phases = results;
  try {
    await converse(w, w.carriers[0]!, { turns: 2, pauseMs: [300, 300], quietMs: 700, replyTimeoutMs: 15_000 }); // warm-up
    for (const p of phases) {
      const r = await phase(w, p, calls, { windowS, windows: windowCount, settleS, rampCps, heapDir });
      results.push(r);
      console.error(JSON.stringify(r));
    }
  } finally {
    await w.close();
  }
  const by = (p: Phase) => results.find((r) => r.phase === p);
  const pipe = by('pipeline');
  const echo = by('echo');
  const noDn = by('no-denoise');
  if (pipe && echo) out.pipeline_share_per_call_pct_of_core = r3(pipe.per_call_pct_of_core - echo.per_call_pct_of_core);
  if (pipe && noDn) out.denoiser_per_call_pct_of_core = r3(pipe.per_call_pct_of_core - noDn.per_call_pct_of_core);
  out.goal_pct = 0.6;
  if (jsonPath) writeFileSync(jsonPath, JSON.stringify(out, null, 2));
  console.log(`\nengine-cpu  ${machine.date}  ${machine.cpuModel} × ${machine.cores}  node ${machine.node}  ${calls} calls  background ${background ?? "silence-roomtone"}`);
  for (const r of results) {
    const t = Object.entries(r.per_call_by_thread_pct_of_core as Record<string, number>)
      .filter(([, v]) => v >= 0.005)
      .sort((x, y) => y[1] - x[1])
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    console.log(
      `${String(r.phase).padEnd(11)} ${r.per_call_pct_of_core} % of a core per call (engine ${r.engine_pct_of_one_core} % of a core, ${r.calls_up.join('→')} calls up, ${r.calls_inbound_native.join('→')} with inbound audio in C, ${r.calls_failed} failed)` +
        `  main thread on CPU ${r.main_thread_on_cpu_pct} %, waiting ${r.main_thread_waiting_pct} %, ELD p99 ${r.engine_eld_p99_ms} ms; load ${r.loadavg_before.join(' ')} → ${r.loadavg_after.join(' ')}\n            by thread: ${t}` +
        `\n            main-thread GC: ${r.main_gc.scavenges_per_s} scavenges/s, ${r.main_gc.scavenge_pct_of_one_core} % of a core; ${r.main_gc.majors} major; VAD ${r.vad_runs_per_s} runs/s, ${r.vad_windows_per_run ?? '-'} windows each; STT ${r.stt_messages_per_call_per_s} messages/s per call`,
    );
    const windows = r.windows as { per_call_pct_of_core: number; stand_ins_pct_of_one_core?: number }[] | undefined;
    if (windows) {
      const span = (xs: number[]) => `${Math.min(...xs)}–${Math.max(...xs)}`;
      const standIns = windows.flatMap((w) => (w.stand_ins_pct_of_one_core === undefined ? [] : [w.stand_ins_pct_of_one_core]));
      console.log(`            ${windows.length} windows: ${span(windows.map((w) => w.per_call_pct_of_core))} % of a core per call, stand-ins ${standIns.length ? span(standIns) : '-'} % of a core`);
    }
  }
  if (out.pipeline_share_per_call_pct_of_core !== undefined) console.log(`pipeline share (pipeline − echo): ${out.pipeline_share_per_call_pct_of_core} % of a core per call (goal < 0.6)`);
  if (out.denoiser_per_call_pct_of_core !== undefined) console.log(`denoiser (pipeline − no-denoise): ${out.denoiser_per_call_pct_of_core} % of a core per call`);
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
