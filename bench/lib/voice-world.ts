/**
 * Three processes for the voice benchmarks (engine-latency.ts, engine-cpu.ts):
 *
 *   this process: phones               engine child                    stand-ins child
 *   ────────────────────               ────────────                    ───────────────
 *   UserAgent per carrier ──SIP/UDP──▶ startEngine(loadConfig())  ─HTTP─▶ OpenAI chat (SSE) + speech (PCM)
 *   PCMU leg per call     ◀─RTP/UDP──▶ CallSession → conductor →  ─WS──▶  Deepgram live
 *   (lib/conversation.ts)              pipeline cascade (VAD, denoiser,
 *                                      STT, agent, TTS, speaker)
 *            ◀──────────── IPC: stats, turn timestamps ───────────▶ IPC: per-request latency
 *
 * The engine is `startEngine()` exactly as `switchboard serve` runs it, its providers chosen by
 * the environment a deployment sets (OPENAI_BASE_URL, DEEPGRAM_BASE_URL and keys) and pointed at
 * the stand-ins; the assistant is made through the REST API, as a user makes one.
 */
import type { ChildStats } from './engine-child.ts';
import { spawnEngine, type EngineProc } from './engine-proc.ts';
import { Caller, pcmuFrames } from './conversation.ts';
import { LoadGen, provisionCarriers, type Carrier, type PlacedCall } from './loadgen.ts';
import { mono } from './mono.ts';
import { spawnStandIns, type StandIns } from './stand-ins-proc.ts';
import type { StandInsOptions } from './stand-ins-child.ts';
import { procCpuMs } from './machine.ts';

export const QUESTION = 'utt-opening-hours';
export const QUESTION_TEXT = 'What are your opening hours?';
export const SHORT_REPLY = 'We are open from nine to five.';
export const LONG_REPLY =
  'We are open from nine in the morning to five in the evening, Monday to Friday. On Saturdays we open at ten and close at four. On Sundays we are closed, and on public holidays we open at noon.';

export interface VoiceWorldOptions {
  /** Most calls up at once (ports, carriers). */
  maxCalls: number;
  turns: boolean;
  /** The engine's RTP send-interval probe (calls.ts's); off unless asked. */
  probe?: boolean;
  /** Assistant fields over the defaults below. */
  assistant?: Record<string, unknown>;
  standIns?: Partial<StandInsOptions>;
  cpuProfDir?: string;
  lifetimeMs: number;
  /** Fixture the callers send between their questions; default `silence-roomtone` (a quiet line). */
  background?: string;
  rtpPortMin?: number;
}

export interface VoiceWorld {
  engine: EngineProc;
  standIns: StandIns;
  gen: LoadGen;
  carriers: Array<Carrier & { number: string; apiKey: string; assistantId?: number }>;
  question: Buffer[];
  background: Buffer[];
  target(carrier: Carrier & { number: string }): string;
  close(): Promise<void>;
}

export const BENCH_ASSISTANT: Record<string, unknown> = {
  name: 'bench front desk',
  voice_id: 121, // an OpenAI TTS voice (catalog)
  language_id: 1,
  transcriber_provider_id: 1, // Deepgram live
  llm_model_id: 1,
  timezone: 'Europe/Paris',
  initial_message: 'Hello.',
  system_prompt: 'You are the front desk of a restaurant.',
  max_duration: 600,
};

export async function startVoiceWorld(o: VoiceWorldOptions): Promise<VoiceWorld> {
  const standIns = await spawnStandIns({ transcript: QUESTION_TEXT, reply: SHORT_REPLY, lifetimeMs: o.lifetimeMs, ...o.standIns });
  const carriersN = Math.max(1, Math.ceil(o.maxCalls / 150));
  const rtpMin = o.rtpPortMin ?? 54_000;
  let engine: EngineProc;
  try {
    engine = await spawnEngine({
      accounts: carriersN,
      probe: o.probe ?? false,
      turns: o.turns,
      lifetimeMs: o.lifetimeMs,
      rtpPortMin: rtpMin,
      rtpPortMax: rtpMin + o.maxCalls * 2 + 200,
      env: {
        OPENAI_API_KEY: standIns.openaiKey,
        OPENAI_BASE_URL: standIns.openaiBaseUrl,
        DEEPGRAM_API_KEY: standIns.deepgramKey,
        DEEPGRAM_BASE_URL: standIns.deepgramUrl,
      },
      ...(o.cpuProfDir ? { cpuProfDir: o.cpuProfDir } : {}),
    });
  } catch (err) {
    await standIns.close();
    throw err;
  }
  const gen = new LoadGen();
  const carriers = await provisionCarriers(engine, carriersN, { pipeline: { ...BENCH_ASSISTANT, ...o.assistant } });
  gen.startClock();
  return {
    engine,
    standIns,
    gen,
    carriers,
    question: pcmuFrames(QUESTION),
    background: pcmuFrames(o.background ?? 'silence-roomtone'),
    target: (c) => `sip:${c.number}@127.0.0.1:${engine.sipPort}`,
    async close() {
      await gen.close(carriers).catch(() => undefined);
      await engine.close();
      await standIns.close();
    },
  };
}

export interface ConversationPlan {
  turns: number;
  /** Ends the call after the current turn once true. */
  stop?: () => boolean;
  /** Another number than the carrier's assistant (e.g. `echo`, the diagnostics number). */
  number?: string;
  /** Wait for a greeting first (default true). */
  greeting?: boolean;
  /** Random pause before each question, ms. */
  pauseMs: [number, number];
  /** How long without audible audio counts as "the assistant finished". */
  quietMs: number;
  replyTimeoutMs: number;
}

export interface ConversationResult {
  callId: string | undefined;
  caller: Caller | undefined;
  status: number;
  /** Questions asked, and replies heard. */
  asked: number;
  answered: number;
  error?: string;
  startedAt: number;
  endedAt: number;
}

/** One call: greeting, then `turns` × (pause, question, reply, quiet), then BYE. */
export async function converse(w: VoiceWorld, carrier: Carrier & { number: string }, plan: ConversationPlan, onUp?: () => void): Promise<ConversationResult> {
  let caller: Caller | undefined;
  const startedAt = mono();
  const target = plan.number ? `sip:${plan.number}@127.0.0.1:${w.engine.sipPort}` : w.target(carrier);
  let call: PlacedCall = await w.gen.place(carrier, target, 15_000, (leg) => (caller = new Caller(leg, w.background)));
  // 503 is the engine shedding load (event-loop delay over its limit, Retry-After 5 s): a carrier
  // would try again; so do we, twice, so that a busy ramp still ends with every call up.
  for (let retry = 0; call.status === 503 && retry < 2; retry++) {
    await new Promise((r) => setTimeout(r, 2000 + Math.random() * 3000));
    call = await w.gen.place(carrier, target, 15_000, (leg) => (caller = new Caller(leg, w.background)));
  }
  const out: ConversationResult = { callId: call.dialog?.callId, caller, status: call.status, asked: 0, answered: 0, startedAt, endedAt: startedAt };
  if (call.status !== 200 || !caller) return { ...out, endedAt: mono(), error: `setup ${call.status}` };
  onUp?.();
  try {
    if (plan.greeting !== false) {
      if ((await caller.firstAudible(startedAt, 15_000)) === undefined) throw new Error('no greeting');
      await caller.quiet(plan.quietMs, 20_000);
    }
    for (let t = 0; t < plan.turns && !plan.stop?.(); t++) {
      if (call.endedEarly) throw new Error(`engine ended the call: ${call.endedEarly}`);
      const [lo, hi] = plan.pauseMs;
      await new Promise((r) => setTimeout(r, lo + Math.random() * (hi - lo)));
      const saidAt = await caller.say(w.question);
      out.asked++;
      const heard = await caller.firstAudible(saidAt, plan.replyTimeoutMs);
      if (heard === undefined) continue;
      out.answered++;
      await caller.quiet(plan.quietMs, 30_000);
    }
  } catch (err) {
    out.error = (err as Error).message;
  } finally {
    await w.gen.hangup(call, 5_000);
    caller.detach();
    out.endedAt = mono();
  }
  return out;
}

/** CPU and scheduling figures between two samples. */
export interface CpuSample {
  at: number;
  engine: ChildStats | undefined;
  engineProcMs: number | undefined;
  engineSched: { runMs: number; waitMs: number } | undefined;
  standInsMs: number | undefined;
  selfMs: number | undefined;
}

export function sampleCpu(w: VoiceWorld, threadSchedMs: (pid: number) => { runMs: number; waitMs: number } | undefined): Promise<CpuSample> {
  return w.engine.stats().then(
    (engine) => ({
      at: mono(),
      engine,
      engineProcMs: w.engine.procCpuMs(),
      engineSched: threadSchedMs(w.engine.pid),
      standInsMs: w.standIns.procCpuMs(),
      selfMs: procCpuMs(process.pid),
    }),
    () => ({ at: mono(), engine: undefined, engineProcMs: undefined, engineSched: undefined, standInsMs: undefined, selfMs: undefined }),
  );
}

/** PUT /user/assistant/{id} on every carrier's assistant (a partial update). */
export async function updateAssistants(w: VoiceWorld, fields: Record<string, unknown>): Promise<void> {
  for (const c of w.carriers) {
    if (c.assistantId === undefined) continue;
    const res = await fetch(`${w.engine.httpUrl}/api/user/assistant/${c.assistantId}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${c.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(fields),
      signal: AbortSignal.timeout(10_000),
    });
    if (res.status !== 200) throw new Error(`assistant update: ${res.status} ${await res.text()}`);
  }
}
