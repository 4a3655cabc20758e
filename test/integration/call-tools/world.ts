/**
 * Call-control tests over loopback SIP: the engine (harness) with `controlledEngine` as its
 * CallEnv.engine, a caller phone, and a carrier phone the trunk points at (transfer targets and
 * supervisors are dialled there). The engine run is a small scripted stand-in for the cascade:
 * it greets, runs one agent turn of the real Agent against the in-process LLM stand-in (which
 * scripts the tool calls) with the call's voice tools, speaks the reply, and — like the cascade
 * does for an `ends` tool — closes its media once a tool ended the conversation. Like the real
 * engines it starts its history from the run's `history` and shows it to the conductor.
 */
import { Agent } from '../../../src/agent/run-turn.ts';
import type { TurnMessage } from '../../../src/agent/types.ts';
import type { AudioFrame } from '../../../src/audio/frame.ts';
import { resample } from '../../../src/audio/resample.ts';
import { controlledEngine, type ConductorDeps, type ConductorOptions, type EngineRun } from '../../../src/call/control/conductor.ts';
import type { CallMedia } from '../../../src/call/engine.ts';
import { StandInLlm, ToneTtsProvider } from '../../../src/replay/stand-ins.ts';
import type { SipRequest } from '../../../src/sip/message.ts';
import type { Dialog } from '../../../src/sip/dialog.ts';
import { systemClock } from '../../../src/util/clock.ts';
import { TestPhone, type PhoneCall } from '../../support/test-phone.ts';
import { harness, until, type Harness } from '../calls/harness.ts';
import { outboundOf } from '../../../src/net/outbound/index.ts';

export interface World {
  h: Harness;
  caller: TestPhone;
  carrier: TestPhone;
  llm: StandInLlm;
  tts: ToneTtsProvider;
  trunk: Awaited<ReturnType<Harness['trunk']>>;
  /** Which assistants ran, and whether each run had a greeting. */
  runs: Array<{ assistantId: number; greeting: string }>;
  details(): Promise<Record<string, any>>;
  /** Inbound call to the trunk's number, answered; resolves once the engine is running. */
  call(): Promise<PhoneCall>;
  close(): Promise<void>;
}

async function speak(media: CallMedia, tts: ToneTtsProvider, text: string, signal: AbortSignal): Promise<void> {
  if (!text.trim()) return;
  await media.outbound.writeStream(tts.synthesize(text, { voice: 'tone', signal }) as AsyncIterable<AudioFrame>, signal);
}

export interface WorldOptions {
  tools?: unknown[];
  config?: Record<string, unknown>;
  deps?: Partial<ConductorDeps>;
  options?: ConductorOptions;
  /** What the caller says before the scripted agent turn (default "I need help."). */
  callerLine?: string;
  /** The caller phone's SIP user (its From, hence the call record's number); default "caller". */
  callerUser?: string;
}

export async function world(opts: WorldOptions = {}): Promise<World> {
  const h = await harness({ answerDelayMs: 0 });
  const caller = await TestPhone.create({ userName: opts.callerUser ?? 'caller' });
  const carrier = await TestPhone.create({ userName: 'carrier' });
  const trunk = await h.trunk();
  trunk.live.spec.address = `127.0.0.1:${carrier.port}`;
  const assistantId = await h.assistant(trunk.phoneNumberId, { initial_message: 'Hello.', tools: opts.tools ?? [], ...opts.config });
  const llm = new StandInLlm(systemClock, { content: 'Okay.' });
  const tts = new ToneTtsProvider(systemClock, { msPerChar: 20 });
  const agent = new Agent({ resolveModel: () => ({ provider: llm, model: 'stand-in' }), customTools: async () => [], searchKnowledge: async () => [] });
  const runs: World['runs'] = [];
  const runner = async ({ media, assistant, tools, variables, signal, history: before, observe }: EngineRun) => {
    runs.push({ assistantId: assistant.id, greeting: assistant.config.initial_message ?? '' });
    const history: TurnMessage[] = [...before];
    observe(() => history);
    const greeting = assistant.config.initial_message ?? '';
    await speak(media, tts, greeting, signal);
    if (greeting) history.push({ role: 'assistant', content: greeting });
    history.push({ role: 'user', content: opts.callerLine ?? 'I need help.' });
    const res = await agent.runTurn({ assistant, history: [...history], variables: variables ?? null, channel: 'voice', extraTools: tools, signal });
    await speak(media, tts, res.reply, signal);
    if (res.reply) history.push({ role: 'assistant', content: res.reply });
    if (res.ended) await media.close('local-hangup');
    for await (const _ of media.inbound) void _;
  };
  h.server.env.engine = controlledEngine({
    ua: h.server.ua,
    env: h.server.env,
    runner,
    voice: () => ({ provider: tts, voice: 'tone' }),
    options: { legRingingMs: 3000, referNotifyMs: 3000, supervisorAcceptMs: 3000, handoverGraceMs: 3000, endCallIdleMs: 1500, ...opts.options },
    // As src/call/wiring does: the calendar's custom endpoint goes through the engine's outbound guard.
    calendar: { fetch: outboundOf(h.ctx).fetch },
    ...opts.deps,
  });
  let lastCallId = 0;
  return {
    h,
    caller,
    carrier,
    llm,
    tts,
    trunk,
    runs,
    async details() {
      const row = await h.ctx.repos.calls.getById(lastCallId);
      return (row?.details ?? {}) as Record<string, any>;
    },
    async call() {
      const call = await caller.call(h.target('+14155550100'));
      await until(() => h.server.registry.size > 0, 2000, 'session');
      lastCallId = h.server.registry.list()[0]!.recordId;
      return call;
    },
    async close() {
      await caller.close();
      await carrier.close();
      await h.close();
    },
  };
}

/** Makes `dialog` answer a REFER the way a carrier that supports transfer does. */
export function acceptRefers(dialog: Dialog, seen: SipRequest[], finalStatus = 200): void {
  dialog.on('request', (req, respond) => {
    if (req.method !== 'REFER') return respond(405);
    seen.push(req);
    respond(202);
    const notify = (frag: string, state: string) =>
      dialog.request('NOTIFY', {
        headers: [
          { name: 'event', value: 'refer' },
          { name: 'subscription-state', value: state },
        ],
        body: Buffer.from(frag),
        contentType: 'message/sipfrag;version=2.0',
      });
    void (async () => {
      await notify('SIP/2.0 100 Trying', 'active;expires=60');
      await notify(`SIP/2.0 ${finalStatus} ${finalStatus === 200 ? 'OK' : 'Failed'}`, 'terminated;reason=noresource');
    })();
  });
}

export { until };

/** The far end speaks: 16 kHz PCM played as 8 kHz RTP, 20 ms a packet, then silence. */
export function play(call: PhoneCall, pcm16k: Int16Array): void {
  const pcm = resample(pcm16k, 16000, 8000);
  let at = 0;
  call.rtp.play(() => {
    if (at >= pcm.length) return undefined;
    const out = new Int16Array(160);
    out.set(pcm.subarray(at, at + 160));
    at += 160;
    return out;
  });
}

/** ms from the start of what the far end heard (8 kHz samples) to the first loud sample. */
export function firstLoudMs(heard: number[]): number | undefined {
  const i = heard.findIndex((s) => Math.abs(s) > 2000);
  return i < 0 ? undefined : i / 8;
}
