/**
 * A realtime call on VirtualMedia + ManualClock against the realtime stand-in over a real
 * WebSocket. The virtual clock must not move while the stand-in is still answering something we
 * sent, or the same script would land on different frames from run to run. So every client event
 * is followed by a barrier, counted as real work on the media: it resolves once the stand-in has
 * read all we sent, has no response in flight, and we have received every event it sent. The
 * model therefore generates in zero virtual time (faster than real time, like the real one) and
 * playback, barge-in and rules run on the virtual clock alone.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AgentTool } from '../../../src/agent/types.ts';
import { SAMPLE_RATE, type AudioFrame } from '../../../src/audio/frame.ts';
import { Resampler, resample } from '../../../src/audio/resample.ts';
import { FliteTts } from '../../../src/audio/tts-flite.ts';
import { readWav, toMono } from '../../../src/audio/wav.ts';
import { trackedTts, type WorkTracker } from '../../../src/call/cascade/work.ts';
import { runRealtime, type RealtimeAssistant, type RealtimeEngineDeps, type RealtimeResult, type RealtimeTimelineEvent } from '../../../src/call/realtime/index.ts';
import type { CallMedia, DtmfEvent, EngineEndCause } from '../../../src/call/engine.ts';
import { VirtualMedia, type CallerItem, type CallerScript } from '../../../src/call/virtual-media.ts';
import { ulaw } from '../../../src/media/codecs/g711.ts';
import type { OutboundAudio, PassThroughFrame } from '../../../src/media/media-types.ts';
import { OpenAiRealtime } from '../../../src/providers/realtime/openai-realtime.ts';
import type { RealtimeConnection, RealtimeEvent, RealtimeProvider } from '../../../src/providers/realtime/realtime.ts';
import { FliteTtsProvider } from '../../../src/providers/tts/flite-tts.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { RealtimeStandIn, type RealtimeStandInOptions, type StandInConnection } from '../../support/realtime-stand-in.ts';

const FIXTURES = fileURLToPath(new URL('../../../fixtures/audio/', import.meta.url));

export function fixture(name: string): Int16Array {
  return toMono(readWav(readFileSync(`${FIXTURES}${name}.wav`)));
}

export function say(name: string, atMs: number): CallerItem {
  return { atMs, samples: fixture(name), label: name };
}

export function durationMs(name: string): number {
  return (fixture(name).length / SAMPLE_RATE) * 1000;
}

export function assistant(mode: 'multimodal' | 'dualplex', config: Partial<RealtimeAssistant['config']> = {}): RealtimeAssistant {
  return {
    id: 7,
    accountId: 1,
    mode,
    config: {
      system_prompt: 'You are the front desk of {{restaurant}}.',
      initial_message: 'Hello, thanks for calling {{restaurant}}.',
      variables: { restaurant: 'Luigi' },
      ...config,
    },
  };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

/** Wraps connections so each client event is followed by the barrier described above. */
export function syncedProvider(inner: RealtimeProvider, standIn: RealtimeStandIn, work: WorkTracker): RealtimeProvider {
  return {
    label: inner.label,
    capabilities: inner.capabilities,
    async connect(opts) {
      const conn = await inner.connect(opts);
      return synced(conn, standIn.last, work);
    },
  };
}

function synced(conn: RealtimeConnection, sc: StandInConnection, work: WorkTracker): RealtimeConnection {
  let closed = false;
  const barrier = async (): Promise<void> => {
    const until = Date.now() + 5000;
    while (Date.now() < until && !closed) {
      const active = (sc as unknown as { active?: unknown }).active;
      if (!sc.end && active === undefined && sc.clientEvents.length >= conn.counters.eventsOut && conn.counters.eventsIn >= sc.sent.length) return;
      await tick();
    }
  };
  const after = <A extends unknown[]>(fn: (...a: A) => void) => (...a: A): void => {
    fn(...a);
    void work.track(barrier());
  };
  async function* events(): AsyncGenerator<RealtimeEvent> {
    for await (const ev of conn.events) {
      if (ev.type === 'closed') closed = true;
      yield ev;
    }
  }
  return {
    events: events(),
    get counters() {
      return conn.counters;
    },
    get session() {
      return conn.session;
    },
    appendAudio: after((f) => conn.appendAudio(f)),
    appendMulaw: after((p) => conn.appendMulaw(p)),
    commit: after(() => conn.commit()),
    clearInput: after(() => conn.clearInput()),
    createResponse: after((o) => conn.createResponse(o)),
    cancelResponse: after(() => conn.cancelResponse()),
    sendFunctionResult: after((id, out) => conn.sendFunctionResult(id, out)),
    addFunctionCall: after((id, name, args) => conn.addFunctionCall(id, name, args)),
    addUserText: after((t) => conn.addUserText(t)),
    addAssistantText: after((t, p) => conn.addAssistantText(t, p)),
    deleteItem: after((id) => conn.deleteItem(id)),
    truncate: after((i, c, ms) => conn.truncate(i, c, ms)),
    receivedMs: (i) => conn.receivedMs(i),
    updateSession: after((p) => conn.updateSession(p)),
    close: () => conn.close(),
  };
}

/**
 * A PCMU call on VirtualMedia, as RtpSession presents one: caller frames carry the μ-law the
 * phone sent (the scripted audio encoded to 8 kHz μ-law once, here, as a phone would), and the
 * outbound takes μ-law payloads (`writeMulaw`). What the phone hears is decoded only to fill the
 * virtual slots; each played slot is traced back to the exact payload that filled it.
 */
export class MulawLeg implements CallMedia {
  /** μ-law the phone sent, frame by frame. */
  readonly phoneSent: Uint8Array[] = [];
  readonly outbound: OutboundAudio;
  private readonly payloads = new WeakMap<Int16Array, Uint8Array>();
  private readonly down = new Resampler(SAMPLE_RATE, 8000);

  constructor(readonly media: VirtualMedia) {
    const inner = media.outbound;
    const payloads = this.payloads;
    this.outbound = {
      write: (f) => inner.write(f),
      writeStream: (frames, signal) => inner.writeStream(frames, signal),
      flush: () => inner.flush(),
      get playing() {
        return inner.playing;
      },
      codec: 'PCMU',
      writeMulaw: (payload) => {
        const samples = resample(ulaw.decode(payload), 8000, SAMPLE_RATE);
        payloads.set(samples, payload);
        return inner.write({ samples, sampleRate: SAMPLE_RATE });
      },
    };
  }

  get inbound(): AsyncIterable<AudioFrame> {
    const leg = this;
    return (async function* () {
      for await (const f of leg.media.inbound) {
        const mulaw = ulaw.encode(leg.down.process(f.samples));
        leg.phoneSent.push(mulaw);
        const frame: PassThroughFrame = { samples: f.samples, sampleRate: f.sampleRate, mulaw };
        yield frame;
      }
    })();
  }

  /** The μ-law payloads the phone heard, slot by slot (undefined: not a pass-through payload). */
  heard(): (Uint8Array | undefined)[] {
    return this.media.played.filter((s) => s.samples !== undefined).map((s) => this.payloads.get(s.samples!));
  }

  sendDtmf(digits: string): Promise<void> {
    return this.media.sendDtmf(digits);
  }

  on(event: 'dtmf', fn: (e: DtmfEvent) => void): this {
    this.media.on(event, fn);
    return this;
  }

  off(event: 'dtmf', fn: (e: DtmfEvent) => void): this {
    this.media.off(event, fn);
    return this;
  }

  close(cause: EngineEndCause): Promise<void> {
    return this.media.close(cause);
  }
}

let flite: FliteTtsProvider | undefined;
export function fliteTts(): FliteTtsProvider {
  return (flite ??= new FliteTtsProvider(() => FliteTts.load()));
}

export interface RealtimeSetup {
  mode: 'multimodal' | 'dualplex';
  config?: Partial<RealtimeAssistant['config']>;
  script: CallerScript;
  standIn?: RealtimeStandInOptions;
  deps?: Partial<RealtimeEngineDeps>;
  /** Tools that need the call's clock (a slow lookup on virtual time). */
  toolsFor?: (clock: ManualClock) => AgentTool[];
  maxMs?: number;
  /** Wrong key: every connect is refused. */
  refuse?: boolean;
  /** A PCMU call whose media passes μ-law through (MulawLeg). */
  pcmu?: boolean;
}

export interface RealtimeRun {
  result: RealtimeResult;
  media: VirtualMedia;
  /** The PCMU leg, when `pcmu` was asked for. */
  leg: MulawLeg | undefined;
  standIn: RealtimeStandIn;
  clock: ManualClock;
  events: <T extends RealtimeTimelineEvent['type']>(type: T) => Extract<RealtimeTimelineEvent, { type: T }>[];
  /** ms of audio actually played (20 ms slots that carried a frame) in [fromMs, toMs]. */
  playedMsBetween(fromMs: number, toMs: number): number;
}

export async function runRealtimeCall(setup: RealtimeSetup): Promise<RealtimeRun> {
  const standIn = await RealtimeStandIn.start({ audio: 'tone', deltaIntervalMs: 0, ...setup.standIn });
  try {
    const clock = new ManualClock();
    const media = new VirtualMedia(clock, setup.script);
    const provider = syncedProvider(new OpenAiRealtime({ pingIntervalMs: 0, connectTimeoutMs: 5000 }), standIn, media.work);
    const tts = { provider: trackedTts(fliteTts(), media.work), voice: 'slt' };
    const deps: RealtimeEngineDeps = {
      clock,
      provider,
      model: 'gpt-realtime',
      apiKey: setup.refuse ? 'sk-wrong' : standIn.apiKey,
      baseUrl: standIn.baseUrl,
      modelVoice: 'marin',
      ...(setup.mode === 'dualplex' ? { voice: tts } : {}),
      fallbackVoice: { provider: trackedTts(fliteTts(), media.work), voice: 'kal' },
      work: media.work,
      ...setup.deps,
    };
    if (setup.toolsFor) deps.tools = { extraTools: setup.toolsFor(clock) };
    const leg = setup.pcmu ? new MulawLeg(media) : undefined;
    const result = await media.drive(
      () => runRealtime(leg ?? media, deps, assistant(setup.mode, setup.config), undefined, new AbortController().signal),
      setup.maxMs ?? 60_000,
    );
    const events = ((type: string) => result.timeline.filter((e) => e.type === type)) as RealtimeRun['events'];
    const playedMsBetween = (fromMs: number, toMs: number): number =>
      media.played.filter((s) => s.samples !== undefined && s.atMs >= fromMs && s.atMs <= toMs).length * 20;
    return { result, media, leg, standIn, clock, events, playedMsBetween };
  } finally {
    await standIn.close();
  }
}
