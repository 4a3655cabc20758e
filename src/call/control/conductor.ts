/**
 * Runs the AI side of one answered call with call control: the CallEngine the SIP layer calls
 * (`controlledEngine`). It owns the call's MediaSwitch, its CallControl (session-control.ts) and
 * the sequence of engine runs:
 *
 *   outbound → voicemail classification first (voicemail.ts); a machine ends the call here; a
 *     callee who already spoke ("hello?") counts as the customer speaking first, so the first
 *     run gets `wait_for_customer` off and greets at once
 *   → engine run with the assistant's voice tools (buildVoiceTools) as extra tools
 *   → the run ends because the call ended (done), the assistant was swapped (next run with the
 *     target assistant on the same session), or a bridge took over (wait for the bridge to end).
 *
 * One conversation across runs: each run starts from the history the call has so far (what the
 * callee said during voicemail detection, then every earlier assistant's turns) and shows the
 * conductor its live history (`observe`). So a swapped-in assistant continues the same
 * conversation under its own prompt, voice and tools, and a warm transfer's briefing is written
 * from the transcript whatever the engine (pipeline, multimodal, dualplex).
 *
 * A transfer or swap tool is `ends: true`, so the engine finishes its sentence and then calls
 * `close()` on its media. The conductor turns that close into "this engine is done" while a
 * handover is pending, and into a BYE otherwise. An engine that never closes by itself is ended
 * `handoverGraceMs` after the handover began.
 */
import type { AgentTool, TurnMessage } from '../../agent/types.ts';
import type { AudioFrame } from '../../audio/frame.ts';
import { isNarrowbandCodec } from '../../media/codecs/codecs.ts';
import type { ProvisionedTrunk } from '../../sip/trunk-registry.ts';
import type { UserAgent } from '../../sip/user-agent.ts';
import type { AssistantRecord } from '../../store/repos/assistants.ts';
import type { Timer } from '../../util/clock.ts';
import type { CallEngine, CallEnv } from '../call-env.ts';
import type { CallSession } from '../call-session.ts';
import type { VadFactory } from '../cascade/listener.ts';
import type { TurnVoice } from '../cascade/spoken-turn.ts';
import type { CallMedia, EngineEndCause } from '../engine.ts';
import { buildVoiceTools, type VoiceToolDeps } from '../tools/index.ts';
import type { Bridge } from './bridge.ts';
import { DetailsWriter } from './details.ts';
import { MediaSwitch, type EngineView } from './media-switch.ts';
import { SessionControl } from './session-control.ts';
import type { AssistantStt } from './transcriber.ts';
import { detectVoicemail } from './voicemail.ts';

export interface EngineRun {
  media: CallMedia;
  session: CallSession;
  /**
   * The assistant to run (after a swap: the target; `initial_message` cleared when it must not
   * greet; `wait_for_customer` off when the customer already spoke during voicemail detection).
   */
  assistant: AssistantRecord;
  /** Voice built-ins for the agent's `extraTools`. */
  tools: AgentTool[];
  variables: Record<string, unknown> | undefined;
  signal: AbortSignal;
  /**
   * The conversation before this run (the callee's first words, earlier assistants' turns). The
   * engine starts its own history with it: the model sees it, under this run's prompt.
   */
  history: readonly TurnMessage[];
  /**
   * The engine hands over its live history (seed included) once it exists; the conductor reads
   * it for a warm transfer's briefing and, when the run ends, as the history for the next run.
   */
  observe(history: () => readonly TurnMessage[]): void;
}

/**
 * Runs one engine (pipeline or realtime) on `media` until the media ends or is closed; what it
 * returns (transcript, ended-by) is collected per run and handed back by `Conductor.run()`.
 */
export type EngineRunner = (run: EngineRun) => Promise<unknown>;

export interface ConductorOptions {
  /** How long an engine may keep talking after a handover before it is cut off. */
  handoverGraceMs?: number;
  /** No-answer limit for transfer and supervisor legs. */
  legRingingMs?: number;
  /** Wait for the far end's final NOTIFY after a REFER was accepted. */
  referNotifyMs?: number;
  /** Supervisor's time to answer (keys or speech) after the briefing. */
  supervisorAcceptMs?: number;
  /** After end_call: hang up once the assistant has been quiet this long. */
  endCallIdleMs?: number;
  voicemailDeadlineMs?: number;
}

export interface ConductorDeps {
  ua: UserAgent;
  env: Pick<CallEnv, 'repos' | 'trunks' | 'clock' | 'logger' | 'createMedia'>;
  runner: EngineRunner;
  /** The assistant's TTS voice for fixed texts (hold message, voicemail message, briefing). */
  voice(assistant: AssistantRecord): TurnVoice | undefined;
  /** The shared VAD; without it outbound calls skip voicemail detection. */
  vad?: VadFactory;
  /** Writes the supervisor briefing; the model's own summary is used when absent or failing. */
  summarize?(assistant: AssistantRecord, brief: BriefingRequest, signal: AbortSignal): Promise<string>;
  /**
   * The assistant's speech-to-text (transcriber.ts `assistantStt`), for the words of a voicemail
   * greeting and a supervisor's spoken answer. Without it those decide on sound and keys alone.
   */
  stt?(assistant: AssistantRecord): AssistantStt | undefined;
  calendar?: VoiceToolDeps['calendar'];
  options?: ConductorOptions;
}

export interface BriefingRequest {
  /** The warm_call_transfer tool's `summary_instructions`. */
  instructions: string;
  /** The reason and notes the model gave with the transfer, the caller's number. */
  context: string;
  /** The call's conversation so far, oldest first. */
  transcript: readonly TurnMessage[];
}

export const CONDUCTOR_DEFAULTS: Required<ConductorOptions> = {
  handoverGraceMs: 10_000,
  legRingingMs: 30_000,
  referNotifyMs: 30_000,
  supervisorAcceptMs: 20_000,
  endCallIdleMs: 4_000,
  voicemailDeadlineMs: 5_000,
};

/** CallEnv.engine with call control around `deps.runner`. */
export function controlledEngine(deps: ConductorDeps): CallEngine {
  return async (session, assistant, callVariables) => {
    await new Conductor(deps, session, assistant, callVariables).run();
  };
}

export class Conductor {
  readonly sw: MediaSwitch;
  readonly details: DetailsWriter;
  readonly control: SessionControl;
  readonly o: Required<ConductorOptions>;
  assistant: AssistantRecord;
  trunk: ProvisionedTrunk | undefined;
  callerNumber: string | null = null;
  variables: Record<string, unknown> | undefined;
  view: EngineView | undefined;
  /** Set by a successful bridged transfer; relaying starts once the engine has stopped. */
  bridge: Bridge | undefined;
  swap: { assistant: AssistantRecord; speakGreeting: boolean; announced?: string } | undefined;
  /** What each engine run returned, in order (one per assistant after swaps). */
  readonly outcomes: unknown[] = [];
  private graceTimer: Timer | undefined;
  /** The conversation as of the end of the last run (or detection). */
  private history: readonly TurnMessage[] = [];
  /** The running engine's live history. */
  private live: (() => readonly TurnMessage[]) | undefined;

  constructor(
    readonly deps: ConductorDeps,
    readonly session: CallSession,
    assistant: AssistantRecord,
    private readonly callVariables?: Record<string, unknown>,
  ) {
    this.assistant = assistant;
    this.o = { ...CONDUCTOR_DEFAULTS, ...deps.options };
    this.sw = new MediaSwitch(session);
    this.details = new DetailsWriter(deps.env.repos.calls, session.recordId, (err) =>
      deps.env.logger.warn({ call: session.uuid, err: err.message }, 'call details not written'),
    );
    this.control = new SessionControl(this);
  }

  get active(): boolean {
    return this.session.state === 'active';
  }

  /** The call's conversation so far, across assistants: the running engine's live history. */
  conversation(): readonly TurnMessage[] {
    return this.live?.() ?? this.history;
  }

  /**
   * The current assistant's voice saying `text`, as frames, for `to` (the caller's side unless
   * given; a narrowband codec there lets the provider skip work above 4 kHz).
   */
  speech(text: string, signal: AbortSignal, to: { readonly codec?: string | undefined } = this.session.outbound): AsyncIterable<AudioFrame> {
    const voice = this.deps.voice(this.assistant);
    if (!voice) return (async function* () {})();
    return voice.provider.synthesize(text, { voice: voice.voice, ...voice.options, narrowband: isNarrowbandCodec(to.codec), signal });
  }

  /** Resolves when the call is over for the AI side; returns the engine runs' results. */
  async run(): Promise<unknown[]> {
    const { env } = this.deps;
    const record = await env.repos.calls.getById(this.session.recordId);
    this.variables = this.callVariables ?? record?.variables ?? undefined;
    // A browser call has no caller number (its record says `web` → `assistant:<id>`).
    const direction = this.session.direction;
    this.callerNumber = record && direction !== 'web' ? (direction === 'inbound' ? record.fromNumber : record.toNumber) : null;
    this.trunk = env.trunks.list().find((t) => t.inboundTrunkId === this.session.trunkKey);
    this.sw.start();
    try {
      let customerSpoke = false;
      if (this.session.direction === 'outbound' && this.deps.vad) {
        const detected = await detectVoicemail(this, this.deps.vad);
        if (detected.next === 'ended') return this.outcomes;
        customerSpoke = detected.customerSpoke;
        if (detected.heard) this.history = [{ role: 'user', content: detected.heard }];
      }
      // Early audio only serves detection: a call without it lets the pre-roll go now.
      this.session.takeEarlyAudio();
      let greet = true;
      while (this.active) {
        await this.runEngine(greet, customerSpoke);
        customerSpoke = false;
        if (!this.active) break;
        const swap = this.swap;
        if (swap) {
          this.swap = undefined;
          this.assistant = swap.assistant;
          greet = swap.speakGreeting;
          // The handover line was spoken by call control, not the engine: it joins the conversation here.
          if (swap.announced) this.history = [...this.history, { role: 'assistant', content: swap.announced }];
          continue;
        }
        if (this.bridge) {
          this.bridge.start();
          await this.bridge.done;
          if (this.active) await this.hangUpNow('local-hangup');
        }
        break;
      }
    } finally {
      this.graceTimer?.cancel();
      await this.bridge?.stop();
      await this.details.flush();
    }
    return this.outcomes;
  }

  /**
   * `customerSpoke`: the customer's first words were heard before this run (voicemail detection
   * consumed them), so `wait_for_customer` is already satisfied and the engine speaks first.
   */
  private async runEngine(greet: boolean, customerSpoke = false): Promise<void> {
    const ac = new AbortController();
    const view = this.sw.engineView((v, cause) => this.onEngineClose(v, cause));
    this.view = view;
    const a = this.assistant;
    const tools = buildVoiceTools(a.config.tools ?? [], {
      control: this.control,
      clock: this.deps.env.clock,
      timeZone: (a.config as { timezone?: string | null }).timezone ?? 'UTC',
      callerNumber: this.callerNumber,
      ...(this.deps.calendar ? { calendar: this.deps.calendar } : {}),
      onInvalid: (type, problem) => this.deps.env.logger.warn({ call: this.session.uuid, type, problem }, 'built-in tool skipped'),
    });
    const assistant = runAssistant(a, greet, customerSpoke);
    this.live = undefined;
    const observe = (get: () => readonly TurnMessage[]): void => {
      this.live = get;
    };
    const ended = (): void => {
      const live = this.live;
      if (live) this.history = [...live()];
      this.live = undefined;
    };
    try {
      this.outcomes.push(
        await this.deps.runner({ media: view, session: this.session, assistant, tools, variables: this.variables, signal: ac.signal, history: this.history, observe }),
      );
    } catch (err) {
      this.deps.env.logger.error({ call: this.session.uuid, err: (err as Error).message }, 'engine run failed');
      if (!this.swap && !this.bridge) await this.hangUpNow('error');
    } finally {
      ac.abort();
      view.end();
      this.graceTimer?.cancel();
      ended();
    }
  }

  /** The engine asked to hang up: a BYE, unless a handover is pending (then only the engine stops). */
  private async onEngineClose(view: EngineView, cause: EngineEndCause): Promise<void> {
    if (this.swap || this.bridge) {
      view.end();
      return;
    }
    await this.hangUpNow(cause);
  }

  /** A swap or bridge is pending: let the engine finish its sentence, but not forever. */
  beginHandover(): void {
    const view = this.view;
    this.graceTimer?.cancel();
    this.graceTimer = this.deps.env.clock.setTimeout(() => view?.end(), this.o.handoverGraceMs);
  }

  async hangUpNow(cause: EngineEndCause): Promise<void> {
    await this.details.flush();
    await this.session.close(cause);
  }
}

/** The assistant as one engine run sees it: greeting cleared after a silent swap, wait_for_customer satisfied once the customer spoke. */
export function runAssistant(a: AssistantRecord, greet: boolean, customerSpoke: boolean): AssistantRecord {
  if (greet && !(customerSpoke && a.config.wait_for_customer)) return a;
  const config = { ...a.config };
  if (!greet) config.initial_message = '';
  if (customerSpoke) config.wait_for_customer = false;
  return { ...a, config };
}
