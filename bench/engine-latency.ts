/**
 * Engine-added latency per turn and barge-in, over real SIP and RTP (issue 4 goals: p50 under
 * 20 ms, p99 under 50 ms, at 1 and 100 concurrent calls; barge-in at most 20 ms).
 *
 * The real engine (startEngine, as in test/integration/e2e) with stand-in providers that answer
 * at once (LLM: no delay; TTS: first byte at once, tone audio; Deepgram: final at once). Per
 * reply: from the engine's end-of-turn decision to the arrival at the caller's phone of the
 * reply's first audible RTP packet. The decision's time is the call's start (the session's
 * `answered` event, the same tick the cascade's clock starts) plus its call-clock time from the
 * stored transcript (audio start − first_frame_out). The stand-ins' own processing (a few ms of
 * HTTP and tone rendering) is inside the figure, so it is an upper bound.
 *
 * Barge-in (1 call, repeated): the caller talks over a long answer; from the interruption
 * decision (the engine's interruptions counter) to the last audible packet at the phone.
 *
 *   node --import tsx bench/engine-latency.ts [--concurrency 1,100] [--turns 2] [--barge 10]
 */
import os from 'node:os';
import type { CallSession } from '../src/call/call-session.ts';
import { TestPhone, type PhoneCall } from '../test/support/test-phone.ts';
import { fixture8k, firstAudible, lastAudible, listen, speak, startWorld, waitQuiet, waitUntil, type Arrival, type World } from '../test/integration/e2e/world.ts';

const arg = (name: string, dflt: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? dflt) : dflt;
};
const levels = arg('concurrency', '1,100').split(',').map(Number);
const turns = Number(arg('turns', '2'));
const bargeReps = Number(arg('barge', '10'));
const QUESTION = fixture8k('utt-opening-hours');
const LONG = 'We are open from nine in the morning to five in the evening, Monday to Friday. On Saturdays we open at ten and close at four. On Sundays we are closed.';

const w = await startWorld({ deepgram: { script: ['What are your opening hours?'] }, audio: { speech: { firstByteLatencyMs: 0 } }, rtpPorts: 600 });
await w.assistant({ initial_message: 'Hello.', enable_noise_cancellation: false, max_duration: 600 });
// record id → performance.now() of the answered event (the tick the cascade's call clock starts)
const answeredAt = new Map<number, number>();
const add = w.engine.sip.registry.add.bind(w.engine.sip.registry);
w.engine.sip.registry.add = (s: CallSession) => {
  s.once('answered', () => answeredAt.set(s.recordId, performance.now()));
  add(s);
};
const phone = await TestPhone.create();

async function oneCall(turns: number): Promise<{ call: PhoneCall; heard: Arrival[] }> {
  const call = await phone.dial(w.target());
  const heard = listen(call);
  if ((await call.outcome).status !== 200) throw new Error('call not answered');
  const t0 = performance.now();
  await safely(call, async () => {
    await waitQuiet(heard, t0 - 1, 700, 20_000); // the greeting
    for (let i = 0; i < turns; i++) {
      await speak(call, QUESTION);
      const asked = performance.now();
      await waitUntil(() => firstAudible(heard, asked) !== undefined, 20_000, 'reply');
      await waitQuiet(heard, asked, 700, 30_000);
    }
  });
  await call.hangup();
  return { call, heard };
}

/** Hang up a call that failed mid-way so it does not hold the engine. */
async function safely<T>(call: PhoneCall, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    await call.hangup().catch(() => undefined);
    throw err;
  }
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
}

async function latencyAt(n: number): Promise<Record<string, number>> {
  w.chat.defaultResponse = { content: 'We are open from nine to five.' };
  let failed = 0;
  // A call that misses a reply (an overloaded loop) is counted, not fatal: the rest still measure.
  const settled = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      new Promise((r) => setTimeout(r, i * 40))
        // A lone call takes more turns so its percentiles rest on more than a couple of replies.
        .then(() => oneCall(n === 1 ? turns * 4 : turns))
        .catch(() => {
          failed++;
          return undefined;
        }),
    ),
  );
  const runs = settled.filter((r) => r !== undefined);
  await new Promise((r) => setTimeout(r, 1500)); // records and transcripts written
  const samples: number[] = [];
  const inside: number[] = [];
  for (const { call, heard } of runs) {
    const rec = (await w.engine.ctx.store.db.selectFrom('calls').select(['id']).where('sip_call_id', '=', call.callId).executeTakeFirst())!;
    const stored = await w.engine.ctx.repos.calls.getById(rec.id);
    const t0 = answeredAt.get(rec.id)!;
    for (const e of (stored?.transcript ?? []) as Record<string, any>[]) {
      if (e.kind !== 'reply' || e.latency?.first_frame_out_ms === undefined) continue;
      const decision = t0 + e.start_ms - e.latency.first_frame_out_ms;
      const first = heard.find((a) => a.at >= decision && a.rms >= 200);
      if (first) samples.push(first.at - decision);
      inside.push(e.latency.first_frame_out_ms);
    }
  }
  return {
    concurrency: n,
    calls_failed: failed,
    replies: samples.length,
    p50_ms: pct(samples, 50),
    p99_ms: pct(samples, 99),
    max_ms: Math.max(...samples),
    engine_first_frame_written_p50_ms: pct(inside, 50),
    engine_first_frame_written_p99_ms: pct(inside, 99),
  };
}

async function bargeIn(): Promise<Record<string, number>> {
  w.chat.defaultResponse = { content: LONG };
  const decisions: number[] = [];
  const counter = w.engine.calls.engineContext.metrics!.interruptions;
  const inc = counter.inc.bind(counter);
  counter.inc = ((labels?: { taken?: string }) => {
    if (labels?.taken === 'true') decisions.push(performance.now());
    return inc(labels as never);
  }) as typeof counter.inc;
  const call = await phone.dial(w.target());
  const heard = listen(call);
  if ((await call.outcome).status !== 200) throw new Error('barge-in call not answered');
  await waitQuiet(heard, performance.now() - 1, 700, 20_000);
  const stops: number[] = [];
  await speak(call, QUESTION);
  const asked = performance.now();
  await waitUntil(() => firstAudible(heard, asked) !== undefined, 20_000, 'answer');
  // Each barge-in is a question, so its reply is the next long answer to interrupt.
  for (let i = 0; i < bargeReps; i++) {
    await new Promise((r) => setTimeout(r, 800));
    const before = decisions.length;
    const barge = speak(call, QUESTION);
    await waitUntil(() => decisions.length > before, 5000, 'interruption');
    const d = decisions[before]!;
    await new Promise((r) => setTimeout(r, 300));
    const last = lastAudible(heard.filter((a) => a.at <= d + 300), d - 2000);
    stops.push(last ? Math.max(0, last.at - d) : 0);
    await barge;
    const ended = performance.now();
    await waitUntil(() => firstAudible(heard, ended) !== undefined, 20_000, 'next answer');
  }
  await call.hangup();
  return { reps: stops.length, p50_ms: pct(stops, 50), max_ms: Math.max(...stops) };
}

const started = Date.now();
const out: Record<string, unknown> = {
  bench: 'engine-latency',
  date: new Date().toISOString(),
  machine: { cpu: os.cpus()[0]?.model, cores: os.availableParallelism(), node: process.version },
  turns_per_call: turns,
  latency: [] as unknown[],
};
// Barge-in first, on an idle engine; then latency from the lowest concurrency up. Each result
// is printed as it comes, so a later failure does not lose the earlier figures.
if (bargeReps > 0) {
  out.barge_in = await bargeIn();
  console.error(JSON.stringify({ barge_in: out.barge_in }));
}
for (const n of levels) {
  const r = await latencyAt(n);
  (out.latency as unknown[]).push(r);
  console.error(JSON.stringify(r));
}
out.total_s = Math.round((Date.now() - started) / 1000);
console.log(JSON.stringify(out, null, 2));
await phone.close();
await w.close();
process.exit(0);
