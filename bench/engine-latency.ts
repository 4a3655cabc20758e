/**
 * Engine-added latency per turn and barge-in of pipeline calls (goals: p50 < 20 ms and p99 <
 * 50 ms at 1 and at 100 concurrent calls; barge-in ≤ 20 ms), with the engine in its own process,
 * the providers in another (lib/voice-world.ts), and calls over loopback SIP and RTP.
 *
 *   node --import tsx bench/engine-latency.ts [--levels 1,100] [--turns 4] [--turns-single 12]
 *       [--barge 10] [--ramp-cps 10] [--llm-ms 0] [--tts-ms 0] [--token-ms 0] [--json FILE]
 *       [--cpu-prof DIR] [--quiet-wait S]
 *
 * Per reply, every time on the machine-wide monotonic clock (lib/mono.ts):
 *   decision   engine: CascadeCall.onEndOfTurn entered (turn-taking decided; lib/turn-probe.ts)
 *   rtp        engine: the reply's first audible PCMU packet handed to socket.send
 *   phone      phones: that packet's arrival (first audible arrival after the decision)
 *   llm        stand-ins: chat request received → first content token written
 *   tts        stand-ins: speech request received → first PCM byte written
 *   engine-added = (rtp − decision) − llm − tts        (and the same with `phone` for `rtp`)
 * The split of rtp − decision into parts uses the engine's own marks (STT final in, chat and
 * speech requests handed to fetch, first frame written to the call's outbound audio).
 *
 * Each call: greeting, then `--turns` × (pause 0.3–1.5 s, the question fixture, the reply, 0.7 s
 * of quiet), then BYE; calls start `--ramp-cps` per second. The caller side sends room tone
 * between questions (the denoiser and VAD run on real line noise, as on a call).
 * Barge-in (1 call): the caller asks again 0.8 s into a long reply; from the interruption
 * decision to the last audible packet the engine sends (and the phone receives).
 */
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { list, num, parseArgs, sleep, watchdog } from './lib/cli.ts';
import type { BargeRecord, TurnRecord } from './lib/turn-probe.ts';
import type { StandInRecord } from './lib/stand-ins-child.ts';
import { loadavg, machineInfo, systemBusyPct, systemCpu, threadSchedMs, waitForQuiet } from './lib/machine.ts';
import { mono } from './lib/mono.ts';
import { percentileOf } from './lib/stats.ts';
import { converse, LONG_REPLY, SHORT_REPLY, sampleCpu, startVoiceWorld, type ConversationResult, type CpuSample, type VoiceWorld } from './lib/voice-world.ts';

export interface Dist {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export function dist(xs: readonly number[]): Dist {
  const v = xs.filter((x) => Number.isFinite(x));
  const r = (x: number) => Math.round(x * 100) / 100;
  return {
    n: v.length,
    p50: r(percentileOf(v, 50)),
    p90: r(percentileOf(v, 90)),
    p99: r(percentileOf(v, 99)),
    max: r(v.length ? Math.max(...v) : NaN),
    mean: r(v.length ? v.reduce((a, b) => a + b, 0) / v.length : NaN),
  };
}

export interface TurnRow {
  call: string;
  decisionToRtp: number;
  decisionToPhone: number | undefined;
  llmStandIn: number;
  ttsStandIn: number;
  engineAdded: number;
  engineAddedAtPhone: number | undefined;
  parts: Record<string, number>;
  /** Frames already in the RTP send queue when the reply's first frame was written. */
  queuedAhead: number | undefined;
  overlaps: string[] | undefined;
  outbound: TurnRecord['outbound'];
}

/** Joins the engine's turn marks with the stand-ins' reports and the phones' arrivals. */
export function joinTurns(turns: TurnRecord[], records: StandInRecord[], callers: Map<string, number[]>): { rows: TurnRow[]; unmatched: number } {
  const byCall = new Map<string, StandInRecord[]>();
  for (const r of records) {
    if (!r.call) continue;
    const list = byCall.get(r.call) ?? [];
    list.push(r);
    byCall.set(r.call, list);
  }
  for (const list of byCall.values()) list.sort((a, b) => a.receivedAt - b.receivedAt);
  const rows: TurnRow[] = [];
  let unmatched = 0;
  for (const t of turns) {
    if (!t.taken) continue;
    if (t.firstRtpAt === undefined || t.firstFrameAt === undefined || t.settledAt === undefined) {
      unmatched++;
      continue;
    }
    const recs = byCall.get(t.call) ?? [];
    const llm = recs.find((r) => r.kind === 'llm' && r.receivedAt >= t.decidedAt && r.firstByteAt !== undefined);
    const tts = llm && recs.find((r) => r.kind === 'tts' && r.receivedAt >= llm.receivedAt && r.firstByteAt !== undefined);
    if (!llm || !tts || t.llmRequestAt === undefined || t.ttsRequestAt === undefined) {
      unmatched++;
      continue;
    }
    const llmStandIn = llm.firstByteAt! - llm.receivedAt;
    const ttsStandIn = tts.firstByteAt! - tts.receivedAt;
    const decisionToRtp = t.firstRtpAt - t.decidedAt;
    const phone = callers.get(t.call)?.find((a) => a >= t.decidedAt);
    const decisionToPhone = phone !== undefined ? phone - t.decidedAt : undefined;
    rows.push({
      call: t.call,
      decisionToRtp,
      decisionToPhone,
      llmStandIn,
      ttsStandIn,
      engineAdded: decisionToRtp - llmStandIn - ttsStandIn,
      engineAddedAtPhone: decisionToPhone !== undefined ? decisionToPhone - llmStandIn - ttsStandIn : undefined,
      queuedAhead: t.queuedAtFirstFrame,
      overlaps: t.overlaps,
      outbound: t.outbound,
      parts: {
        'STT final wait (decision → end-of-turn)': t.settledAt - t.decidedAt,
        'agent (end-of-turn → chat request)': t.llmRequestAt - t.settledAt,
        'chat request → stand-in received': llm.receivedAt - t.llmRequestAt,
        'stand-in LLM (received → first token)': llmStandIn,
        'first token → speech request': t.ttsRequestAt - llm.firstByteAt!,
        'speech request → stand-in received': tts.receivedAt - t.ttsRequestAt,
        'stand-in TTS (received → first audio)': ttsStandIn,
        'first audio → first frame written': t.firstFrameAt - tts.firstByteAt!,
        'first frame written → RTP sent': t.firstRtpAt - t.firstFrameAt,
      },
    });
  }
  return { rows, unmatched };
}

function summarise(rows: TurnRow[]): Record<string, unknown> {
  const parts: Record<string, Dist> = {};
  for (const key of Object.keys(rows[0]?.parts ?? {})) parts[key] = dist(rows.map((r) => r.parts[key]!));
  return {
    engine_added_ms: dist(rows.map((r) => r.engineAdded)),
    engine_added_at_phone_ms: dist(rows.flatMap((r) => (r.engineAddedAtPhone !== undefined ? [r.engineAddedAtPhone] : []))),
    decision_to_rtp_ms: dist(rows.map((r) => r.decisionToRtp)),
    stand_in_llm_ms: dist(rows.map((r) => r.llmStandIn)),
    stand_in_tts_ms: dist(rows.map((r) => r.ttsStandIn)),
    parts_ms: parts,
  };
}

function cpuBetween(a: CpuSample | undefined, b: CpuSample | undefined, calls: number): Record<string, number> | undefined {
  if (!a?.engine || !b?.engine || b.engine.hrMs - a.engine.hrMs < 2000) return undefined;
  const wall = b.engine.hrMs - a.engine.hrMs;
  const cpu = (b.engine.cpuUs.user + b.engine.cpuUs.system - a.engine.cpuUs.user - a.engine.cpuUs.system) / 1000;
  const r = (x: number) => Math.round(x * 1000) / 1000;
  const out: Record<string, number> = {
    window_s: r(wall / 1000),
    calls: r(calls),
    engine_pct_of_one_core: r((cpu / wall) * 100),
    per_call_pct_of_core: r((cpu / wall / calls) * 100),
  };
  if (a.engineSched && b.engineSched) {
    out.main_thread_on_cpu_pct = r(((b.engineSched.runMs - a.engineSched.runMs) / wall) * 100);
    out.main_thread_waiting_pct = r(((b.engineSched.waitMs - a.engineSched.waitMs) / wall) * 100);
  }
  if (a.standInsMs !== undefined && b.standInsMs !== undefined) out.stand_ins_pct_of_one_core = r(((b.standInsMs - a.standInsMs) / wall) * 100);
  if (a.selfMs !== undefined && b.selfMs !== undefined) out.phones_pct_of_one_core = r(((b.selfMs - a.selfMs) / wall) * 100);
  out.engine_eld_p99_ms = r(b.engine.eld.p99);
  return out;
}

async function level(w: VoiceWorld, n: number, turns: number, rampCps: number): Promise<Record<string, unknown>> {
  await w.engine.request('turns');
  await w.standIns.records();
  const load0 = loadavg();
  const sys0 = systemCpu();
  let up = 0;
  let done = 0;
  const samples: Array<CpuSample & { up: number; done: number }> = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const s = await sampleCpu(w, (pid) => threadSchedMs(pid));
      samples.push({ ...s, up, done });
      await sleep(1000);
    }
  })();
  await w.engine.request('reset');
  const plan = { turns, pauseMs: [300, 1500] as [number, number], quietMs: 700, replyTimeoutMs: 15_000 };
  const results: ConversationResult[] = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      sleep((i * 1000) / rampCps).then(() => converse(w, w.carriers[i % w.carriers.length]!, plan, () => up++).finally(() => done++)),
    ),
  );
  sampling = false;
  await sampler;
  const sys1 = systemCpu();
  await sleep(300);
  const { turns: turnRecs } = await w.engine.request<{ turns: TurnRecord[] }>('turns');
  const records = await w.standIns.records();
  const callers = new Map<string, number[]>();
  for (const r of results) if (r.callId && r.caller) callers.set(r.callId, r.caller.audible);
  const { rows, unmatched } = joinTurns(turnRecs, records, callers);
  // CPU over the stretch with (nearly) every call up: from the first sample with 90 % of the
  // calls up to the last one before they drop under 90 %, divided by the mean calls up.
  const active = (s: { up: number; done: number }) => s.up - s.done;
  const peak = Math.max(0, ...samples.map(active));
  const steady = samples.filter((s) => active(s) >= Math.max(1, 0.9 * peak) && s.engine);
  const meanUp = steady.length ? steady.reduce((a, s) => a + active(s), 0) / steady.length : n;
  const cpu = cpuBetween(steady[0], steady[steady.length - 1], meanUp);
  const failed = results.filter((r) => r.error);
  return {
    calls: n,
    calls_failed: failed.length,
    failures: [...new Set(failed.map((r) => r.error))].slice(0, 5),
    questions: results.reduce((a, r) => a + r.asked, 0),
    replies_heard: results.reduce((a, r) => a + r.answered, 0),
    turns_decided: turnRecs.length,
    turns_measured: rows.length,
    turns_unmatched: unmatched,
    ...summarise(rows),
    cpu_steady: cpu ?? 'window too short',
    machine_busy_pct: Math.round(systemBusyPct(sys0, sys1) * 10) / 10,
    loadavg_before: load0,
    loadavg_after: loadavg(),
    rows,
  };
}

async function bargeIn(w: VoiceWorld, reps: number): Promise<Record<string, unknown>> {
  await w.standIns.setReply(LONG_REPLY);
  await w.engine.request('turns');
  const carrier = w.carriers[0]!;
  let callId: string | undefined;
  let audible: number[] = [];
  let errors = 0;
  const { Caller } = await import('./lib/conversation.ts');
  let caller: InstanceType<typeof Caller> | undefined;
  const call = await w.gen.place(carrier, w.target(carrier), 15_000, (leg) => (caller = new Caller(leg, w.background)));
  if (call.status !== 200 || !caller) throw new Error(`barge-in call: ${call.status}`);
  callId = call.dialog?.callId;
  audible = caller.audible;
  const t0 = mono();
  await caller.firstAudible(t0, 15_000);
  await caller.quiet(700, 20_000);
  let saidAt = await caller.say(w.question);
  await caller.firstAudible(saidAt, 15_000);
  for (let i = 0; i < reps; i++) {
    await sleep(800);
    saidAt = await caller.say(w.question); // over the reply: the interruption, then the next turn
    if ((await caller.firstAudible(saidAt, 15_000)) === undefined) errors++;
  }
  await sleep(300);
  await w.gen.hangup(call, 5_000);
  caller.detach();
  await w.standIns.setReply(SHORT_REPLY);
  const { turns, barges } = await w.engine.request<{ turns: TurnRecord[]; barges: BargeRecord[] }>('turns');
  await w.standIns.records();
  const decisions = turns.filter((t) => t.call === callId).map((t) => t.decidedAt).sort((a, b) => a - b);
  const engineSide: number[] = [];
  const phoneSide: number[] = [];
  for (const b of barges.filter((x) => x.call === callId)) {
    engineSide.push(b.lastAudibleAt !== undefined ? b.lastAudibleAt - b.decidedAt : 0);
    const next = decisions.find((d) => d > b.decidedAt) ?? Infinity;
    const heard = audible.filter((a) => a >= b.decidedAt && a < next);
    phoneSide.push(heard.length ? heard[heard.length - 1]! - b.decidedAt : 0);
  }
  return {
    reps,
    interruptions: engineSide.length,
    missed_replies: errors,
    last_audible_sent_after_decision_ms: dist(engineSide),
    last_audible_heard_after_decision_ms: dist(phoneSide),
  };
}

export async function main(argv: string[]): Promise<void> {
  const args = parseArgs(argv);
  const levels = list(args, 'levels', [1, 100], 300);
  const turns = num(args, 'turns', 4, 1, 100);
  const turnsSingle = num(args, 'turns-single', 12, 1, 200);
  const bargeReps = num(args, 'barge', 10, 0, 100);
  const rampCps = num(args, 'ramp-cps', 10, 1, 200);
  const jsonPath = args.get('json');
  const profDir = args.get('cpu-prof');
  const quietWait = num(args, 'quiet-wait', 0, 0, 600);
  const budgetMs = 570_000;
  watchdog(budgetMs + quietWait * 1000, 'engine-latency');
  const machine = machineInfo();
  if (quietWait > 0) console.error(`machine ${Math.round(await waitForQuiet(quietWait))} % busy at start`);
  const w = await startVoiceWorld({
    maxCalls: Math.max(...levels, 1),
    turns: true,
    lifetimeMs: budgetMs + 20_000,
    standIns: { llmDelayMs: num(args, 'llm-ms', 0, 0, 10_000), ttsDelayMs: num(args, 'tts-ms', 0, 0, 10_000), tokenMs: num(args, 'token-ms', 0, 0, 1000) },
    ...(profDir ? { cpuProfDir: profDir } : {}),
  });
  const out: Record<string, unknown> = { bench: 'engine-latency', machine, args: Object.fromEntries(args) };
  try {
    // Warm-up: JIT, the ONNX session, first connections to the stand-ins.
    await converse(w, w.carriers[0]!, { turns: 2, pauseMs: [300, 300], quietMs: 700, replyTimeoutMs: 15_000 });
    if (bargeReps > 0) {
      out.barge_in = await bargeIn(w, bargeReps);
      console.error(JSON.stringify({ barge_in: out.barge_in }));
    }
    const lv: unknown[] = [];
    out.levels = lv;
    for (const n of levels) {
      const r = await level(w, n, n === 1 ? turnsSingle : turns, rampCps);
      lv.push(r);
      const { rows: _rows, ...brief } = r;
      console.error(JSON.stringify(brief));
    }
  } finally {
    await w.close();
  }
  if (jsonPath) writeFileSync(jsonPath, JSON.stringify(out, null, 2));
  printReport(out);
}

function printReport(out: Record<string, any>): void {
  const f = (d: Dist | undefined) => (d && d.n ? `${d.p50} / ${d.p99} / ${d.max}` : '–');
  console.log(`\nengine-latency  ${out.machine.date}  ${out.machine.cpuModel} × ${out.machine.cores}  node ${out.machine.node}  load ${out.machine.loadavg.join(' ')}`);
  if (out.barge_in) {
    const b = out.barge_in;
    console.log(`barge-in (${b.interruptions} of ${b.reps}): last audible packet after the decision, sent ${f(b.last_audible_sent_after_decision_ms)} ms, heard ${f(b.last_audible_heard_after_decision_ms)} ms (p50 / p99 / max)`);
  }
  for (const l of out.levels ?? []) {
    console.log(`\n${l.calls} call(s): ${l.turns_measured} replies measured (${l.questions} asked, ${l.replies_heard} heard, ${l.calls_failed} calls failed), load ${l.loadavg_before.join(' ')} → ${l.loadavg_after.join(' ')}`);
    console.log(`  engine-added, at RTP send     p50 / p99 / max  ${f(l.engine_added_ms)} ms`);
    console.log(`  engine-added, at the phone    p50 / p99 / max  ${f(l.engine_added_at_phone_ms)} ms`);
    console.log(`  decision → RTP (with stand-ins)               ${f(l.decision_to_rtp_ms)} ms`);
    for (const [k, d] of Object.entries(l.parts_ms ?? {})) console.log(`    ${k.padEnd(44)} ${f(d as Dist)}`);
    if (typeof l.cpu_steady === 'object') {
      const c = l.cpu_steady;
      console.log(`  CPU (steady ${c.window_s} s): engine ${c.engine_pct_of_one_core} % of a core = ${c.per_call_pct_of_core} % per call; main thread on CPU ${c.main_thread_on_cpu_pct} %, waiting ${c.main_thread_waiting_pct} %; ELD p99 ${c.engine_eld_p99_ms} ms; stand-ins ${c.stand_ins_pct_of_one_core} %, phones ${c.phones_pct_of_one_core} %`);
    }
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
