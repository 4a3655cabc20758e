/**
 * Calls through the real call runner (src/call/wiring/call-runner.ts) over loopback SIP: the
 * Conductor around the real engines — the pipeline cascade (Silero VAD, Deepgram-protocol STT
 * against its stand-in, the Agent on an in-process LLM stand-in, a tone TTS) and the realtime
 * engine (OpenAI realtime protocol against its stand-in) — with the runner's own glue for engine
 * history, the briefing summariser and the STT of call control. What world.ts scripts by hand,
 * this world leaves to production code.
 */
import { Agent } from '../../../src/agent/run-turn.ts';
import type { AgentDeps } from '../../../src/agent/types.ts';
import { resample } from '../../../src/audio/resample.ts';
import type { SileroVad } from '../../../src/audio/vad/silero.ts';
import type { EngineContext } from '../../../src/call/engine.ts';
import type { PostCallDeps } from '../../../src/call/post-call/index.ts';
import { CallRunner } from '../../../src/call/wiring/call-runner.ts';
import { realtimeRunner } from '../../../src/call/wiring/realtime.ts';
import { DeepgramStt } from '../../../src/providers/stt/deepgram.ts';
import { StandInLlm, ToneTtsProvider } from '../../../src/replay/stand-ins.ts';
import { systemClock } from '../../../src/util/clock.ts';
import { DeepgramStandIn } from '../../support/deepgram-stand-in.ts';
import { RealtimeStandIn, type RealtimeStandInOptions } from '../../support/realtime-stand-in.ts';
import { TestPhone, type PhoneCall } from '../../support/test-phone.ts';
import { loadFixture } from '../../unit/vad/fixture-audio.ts';
import { harness, until, type Harness } from '../calls/harness.ts';

export interface RunnerWorld {
  h: Harness;
  caller: TestPhone;
  carrier: TestPhone;
  trunk: Awaited<ReturnType<Harness['trunk']>>;
  /** The agent's model (pipeline turns). */
  llm: StandInLlm;
  /** The briefing summariser's model (resolved like the post-call evaluation's). */
  summaryLlm: StandInLlm;
  tts: ToneTtsProvider;
  deepgram: DeepgramStandIn;
  realtime: RealtimeStandIn;
  /** An assistant row; `config` as the API stores it. `answers`: it takes the trunk's calls. */
  assistant(mode: 'pipeline' | 'multimodal', config: Record<string, unknown>, answers?: boolean): Promise<number>;
  /** Rewrites an assistant's config (tools that need ids known only later). */
  configure(id: number, config: Record<string, unknown>): Promise<void>;
  /** Inbound call to the trunk's number, answered. */
  call(): Promise<PhoneCall>;
  details(): Promise<Record<string, any>>;
  close(): Promise<void>;
}

export const PIPELINE = { voice_id: 121, language_id: 1, transcriber_provider_id: 1, llm_model_id: 1 };
export const MULTIMODAL = { voice_id: 101, language_id: 1, multimodal_model_id: 1 };

export async function runnerWorld(opts: { vad: SileroVad; callerWords?: string[]; realtime?: RealtimeStandInOptions }): Promise<RunnerWorld> {
  const h = await harness({ answerDelayMs: 0 });
  const caller = await TestPhone.create({ userName: '+14155550142' });
  const carrier = await TestPhone.create({ userName: 'carrier' });
  const trunk = await h.trunk();
  trunk.live.spec.address = `127.0.0.1:${carrier.port}`;
  const deepgram = await DeepgramStandIn.start({ script: opts.callerWords ?? ['Hello.'] });
  const realtime = await RealtimeStandIn.start({ audio: 'tone', ...opts.realtime });
  const llm = new StandInLlm(systemClock, { content: 'Okay.' });
  const summaryLlm = new StandInLlm(systemClock, { content: 'A caller needs a person.' });
  const tts = new ToneTtsProvider(systemClock, { msPerChar: 20 });
  const stt = new DeepgramStt({ apiKey: deepgram.options.apiKey, baseUrl: deepgram.url });
  const agentDeps: AgentDeps = { resolveModel: () => ({ provider: llm, model: 'stand-in' }), customTools: async () => [], searchKnowledge: async () => [] };
  const engine: EngineContext = {
    clock: systemClock,
    logger: h.ctx.logger,
    catalog: h.ctx.catalog,
    speech: { synthesizer: () => tts, transcriber: () => stt },
    agent: new Agent(agentDeps),
    vad: opts.vad,
    fallbackVoice: { provider: tts, voice: 'tone' },
  };
  const postCall: PostCallDeps = {
    store: h.ctx.store,
    calls: h.ctx.repos.calls,
    ledger: h.ctx.repos.ledger,
    events: { publish: async () => undefined } as unknown as PostCallDeps['events'],
    clock: h.ctx.clock,
    logger: h.ctx.logger,
    resolveModel: () => ({ provider: summaryLlm, model: 'summary' }),
    publicUrl: 'http://127.0.0.1',
    dataDir: '/tmp/switchboard-runner-world-unused',
  };
  const config = { ...h.ctx.config, openai: { ...h.ctx.config.openai, apiKey: realtime.apiKey, baseUrl: realtime.baseUrl } };
  const runner = new CallRunner({
    engine,
    calls: h.ctx.repos.calls,
    postCall,
    logger: h.ctx.logger,
    realtime: realtimeRunner(engine, { config, catalog: h.ctx.catalog, logger: h.ctx.logger }, agentDeps),
    conductor: { options: { legRingingMs: 3000, referNotifyMs: 3000, supervisorAcceptMs: 3000, handoverGraceMs: 3000, endCallIdleMs: 1500 } },
  });
  h.server.env.engine = runner.engine;
  runner.attachSip({ ua: h.server.ua, env: h.server.env });
  let lastCallId = 0;
  const db = h.ctx.store.db;
  return {
    h,
    caller,
    carrier,
    trunk,
    llm,
    summaryLlm,
    tts,
    deepgram,
    realtime,
    async assistant(mode, cfg, answers = false) {
      const id = await h.assistant(answers ? trunk.phoneNumberId : null, { ...(mode === 'pipeline' ? PIPELINE : MULTIMODAL), ...cfg });
      if (mode !== 'pipeline') await db.updateTable('assistants').set({ mode }).where('id', '=', id).execute();
      return id;
    },
    async configure(id, cfg) {
      const row = await db.selectFrom('assistants').select('mode').where('id', '=', id).executeTakeFirstOrThrow();
      const base = row.mode === 'pipeline' ? PIPELINE : MULTIMODAL;
      await db.updateTable('assistants').set({ config: JSON.stringify({ ...base, ...cfg }) }).where('id', '=', id).execute();
    },
    async call() {
      const call = await caller.call(h.target('+14155550100'));
      await until(() => h.server.registry.size > 0, 2000, 'session');
      lastCallId = h.server.registry.list()[0]!.recordId;
      return call;
    },
    async details() {
      return ((await h.ctx.repos.calls.getById(lastCallId))?.details ?? {}) as Record<string, any>;
    },
    async close() {
      await caller.close();
      await carrier.close();
      await h.close();
      await Promise.allSettled([deepgram.close(), realtime.close()]);
    },
  };
}

/** Plays a 16 kHz fixture from the phone (8 kHz); resolves when the last frame went out. */
export function say(call: PhoneCall, fixture: string): Promise<void> {
  const pcm = resample(loadFixture(fixture), 16000, 8000);
  let at = 0;
  return new Promise((resolve) => {
    call.rtp.play(() => {
      if (at >= pcm.length) {
        resolve();
        return undefined;
      }
      const out = new Int16Array(160);
      out.set(pcm.subarray(at, at + 160));
      at += 160;
      return out;
    });
  });
}
