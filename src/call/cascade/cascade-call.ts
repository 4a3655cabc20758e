/**
 * One pipeline call: the pure cores (turn-taking, interruption, rules, fillers) wired to the
 * caller's audio (listener), the assistant's audio (speaker) and the turns (SpokenTurn). Every
 * core returns `wakeAtMs`; a single clock timer serves the earliest, so the whole call runs on
 * the injected clock and replays exactly on a virtual one.
 *
 * Conversation state lives here and only here: the history (with only what the caller heard of
 * an interrupted reply), the transcript, and the timeline.
 */
import type { TurnMessage } from '../../agent/types.ts';
import { GatedDenoiseStream } from '../../audio/denoise-gate.ts';
import { SpeechDetector, type SpeechEvent } from '../../audio/vad/detector.ts';
import type { CallMedia } from '../engine.ts';
import { isNarrowbandCodec } from '../../media/codecs/codecs.ts';
import { FillerPlanner, type FillerStep } from '../fillers.ts';
import { InterruptionPolicy, type InterruptionStep } from '../interruption.ts';
import { StereoRecorder, telephoneBandSink, type RecordingSink } from '../recorder.ts';
import { CallRules, type CallRulesStep } from '../rules.ts';
import { classifyWithDeadline, TurnTaking, type EndOfTurnDecision, type TurnStep } from '../turn-taking.ts';
import { Transcript, type AssistantTurnKind } from '../transcript.ts';
import type { CascadeDeps } from './deps.ts';
import { listen } from './listener.ts';
import { SttReader } from './stt-reader.ts';
import { agentSource, voiceTools } from './agent-source.ts';
import { cascadeSettings, type CascadeAssistant, type CascadeSettings } from './options.ts';
import { spokenLine } from '../spoken-lines.ts';
import { FAREWELL_GRACE_MS, failureOf, isPermanent, MAX_CONSECUTIVE_FAILED_TURNS, type CallFailure } from '../failures.ts';
import type { Timer } from '../../util/clock.ts';
import { Speaker } from './speaker.ts';
import { SpokenTurn, type TurnSource, type TurnVoice } from './spoken-turn.ts';
import type { TimelineEvent } from './timeline.ts';
import { TurnBook } from './turn-book.ts';
import { WakeTimer } from '../wake-timer.ts';
import { FRAME_MS } from '../../audio/frame.ts';
import { untracked, type WorkTracker } from './work.ts';

/**
 * Caller audio per STT write while the caller talks (SttReader): 80 ms, a quarter of the
 * recogniser's socket writes at one frame each, inside Deepgram's recommended 20–250 ms. Interim
 * words come up to 60 ms later than with 20 ms writes; a final does not: the end-of-turn
 * decision sends what is held at once.
 */
export const DEFAULT_STT_CHUNK_MS = 80;

export class CascadeCall {
  readonly timeline: TimelineEvent[] = [];
  readonly transcript = new Transcript();
  readonly history: TurnMessage[] = [];
  /** This run's own recording (`record` without a call-level one); saved by runCascade. */
  readonly recorder: StereoRecorder | undefined;
  endedBy: string | undefined;
  private readonly s: CascadeSettings;
  private readonly work: WorkTracker;
  private readonly t0: number;
  private readonly ctl = new AbortController();
  private readonly turnTaking: TurnTaking;
  private readonly interruption: InterruptionPolicy;
  private readonly rules: CallRules;
  private readonly fillers: FillerPlanner;
  private readonly wake: WakeTimer<'turn' | 'interrupt' | 'rules' | 'filler'>;
  private speaker!: Speaker;
  private readonly book: TurnBook;
  private turn: SpokenTurn | undefined;
  private turnSeq = 0;
  private readonly pending = new Set<Promise<unknown>>();
  private callerSpeaking = false;
  private callerTurnStartMs: number | undefined;
  private lastSpeechEndMs = 0;
  private closing: Promise<void> | undefined;
  private readonly stt: SttReader;
  private readonly sink: RecordingSink | undefined;
  /** Assistant turns in a row that failed (reset by one that played). */
  private failedTurns = 0;
  /** A provider failure is ending the call: the closing apology is this turn. */
  private farewell: { turn: number; timer: Timer } | undefined;

  constructor(
    private readonly media: CallMedia,
    private readonly deps: CascadeDeps,
    private readonly assistant: CascadeAssistant,
    private readonly callVariables: Record<string, unknown> | undefined,
    signal: AbortSignal,
  ) {
    this.transcript.onAdd = deps.onTranscript;
    this.s = cascadeSettings(assistant, callVariables);
    this.work = deps.work ?? untracked;
    this.t0 = deps.clock.now();
    this.wake = new WakeTimer(deps.clock, () => this.now(), () => this.tick());
    const onAbort = (): void => void this.hangUp('aborted', 'local-hangup');
    if (signal.aborted) this.ctl.abort(signal.reason);
    else signal.addEventListener('abort', onAbort, { once: true });
    this.ctl.signal.addEventListener('abort', () => signal.removeEventListener('abort', onAbort), { once: true });
    this.turnTaking = new TurnTaking({ ...this.s.turnTaking, useClassifier: deps.classifier !== undefined });
    this.interruption = new InterruptionPolicy(this.s.interruption);
    this.rules = new CallRules(this.s.rules);
    this.fillers = new FillerPlanner({ ...this.s.fillers, language: deps.language, random: deps.random });
    this.recorder = this.s.record && !deps.recording ? new StereoRecorder() : undefined;
    this.sink = deps.recording ?? this.recorder;
    this.book = new TurnBook(this.transcript, this.history, deps.metrics);
    // Call control: the conversation an earlier assistant of this call had, and a live view of ours.
    if (deps.history) this.history.push(...deps.history);
    deps.onHistory?.(this.history);
    const sttChunkFrames = Math.max(1, Math.round((deps.sttChunkMs ?? DEFAULT_STT_CHUNK_MS) / FRAME_MS));
    this.stt = new SttReader(
      deps.stt,
      deps.language,
      deps.clock,
      this.ctl.signal,
      {
        now: () => this.now(),
        onInterim: (text, at) => {
          this.onTurnStep(this.turnTaking.transcriptUpdate(text, false, at));
          this.onInterruption(this.interruption.transcriptUpdate(text, false, at));
        },
        onAnyFinal: (text, at) => {
          if (text) this.emit({ type: 'stt-final', atMs: at, text });
          this.onInterruption(this.interruption.transcriptUpdate(text, true, at));
        },
        onFinal: (text, at) => this.onTurnStep(this.turnTaking.transcriptUpdate(text, true, at)),
        onError: (message, retrying) => this.emit({ type: 'provider-error', atMs: this.now(), provider: 'stt', message, retrying }),
        onLost: (error) => this.failCall(failureOf('stt-unavailable', error, deps.stt.label)),
        track: (p) => this.track(p),
      },
      sttChunkFrames,
    );
  }

  /** ms since answer on the call clock. */
  now(): number {
    return this.deps.clock.now() - this.t0;
  }

  async run(): Promise<void> {
    const d = this.deps;
    const ambient = d.ambient ? await this.work.track(d.ambient.mixer(this.s.ambient.sound, this.s.ambient.volume)) : undefined;
    // Decided once, at the start: a later re-INVITE to a wideband codec leaves the VAD, the
    // denoiser and STT in telephone band (the listener decimates the new codec's frames), which
    // still works: it only ignores what lies above 4 kHz.
    const narrowband = isNarrowbandCodec(this.media.outbound.codec);
    const vad = d.vad.createStream({ narrowband });
    // Gated: frames of a quiet line skip the denoiser (src/audio/denoise-gate.ts), as windows of
    // one skip the VAD's model (src/audio/vad/silero-stream.ts).
    // Where its worker can, the denoiser runs the call's VAD too (src/audio/denoise-worker.ts):
    // `vad` then hears only the frames that come back without a probability.
    const backend = this.s.noiseCancellation ? d.denoiser?.createStream({ narrowband, vad: true }) : undefined;
    const denoise = backend ? new GatedDenoiseStream(backend) : undefined;
    // A G.711 line has nothing above 4 kHz: its denoiser, STT and VAD all take its 8 kHz audio.
    this.stt.open(narrowband ? 8000 : 16000);
    this.speaker = new Speaker({
      clock: d.clock,
      now: () => this.now(),
      outbound: this.media.outbound,
      ambient,
      // What the caller of a G.711 call heard: the assistant side in the telephone band too.
      recorder: this.sink && narrowband ? telephoneBandSink(this.sink) : this.sink,
      leadFrames: d.leadFrames,
      events: {
        onStart: (turn, atMs) => this.onAudioStart(turn, atMs),
        onEnd: (turn, atMs, interrupted) => this.onAudioEnd(turn, atMs, interrupted),
        onFrame: (turn, seg, atMs) => void (this.turn?.id === turn && !this.turn.isFiller(seg) && (this.turn.firstFrameAtMs ??= atMs)),
      },
    });
    this.speaker.start();
    const onDtmf = (e: { digit: string }): void => this.emit({ type: 'dtmf', atMs: this.now(), digit: e.digit });
    this.media.on('dtmf', onDtmf);
    this.emit({ type: 'answer', atMs: 0 });
    this.onRules(this.rules.answered(this.now()));
    if (this.s.initialMessage.trim() && !this.s.waitForCustomer) this.startTurn('greeting', { kind: 'fixed', text: this.s.initialMessage });
    try {
      await listen({
        inbound: this.media.inbound,
        vad,
        detector: new SpeechDetector(d.detector),
        denoise,
        narrowband,
        stt: this.stt,
        recorder: this.sink,
        work: this.work,
        now: () => this.now(),
        signal: this.ctl.signal,
        onSpeech: (events) => this.onSpeech(events),
      });
    } finally {
      this.media.off('dtmf', onDtmf);
      await this.shutdown();
      denoise?.close?.();
    }
  }

  /** Ends the call from our side (rules, end_call, unrecoverable provider failure). Idempotent. */
  hangUp(reason: string, cause: 'local-hangup' | 'max-duration' | 'error'): Promise<void> {
    if (this.closing) return this.closing;
    this.endedBy = reason;
    this.emit({ type: 'hang-up', atMs: this.now(), reason });
    this.rules.end();
    this.ctl.abort(new Error(`hang-up: ${reason}`));
    this.closing = this.media.close(cause).catch((err: unknown) => this.deps.logger?.warn({ err: (err as Error).message }, 'hang-up failed'));
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.endedBy ??= 'caller-hangup';
    this.ctl.abort(new Error('call ended'));
    this.rules.end();
    this.wake.close();
    this.farewell?.timer.cancel();
    this.speaker.stop();
    const turn = this.turn;
    if (turn) this.finishTurn(turn, this.now(), true, this.speaker.playedFrames(turn.id) * 20);
    await Promise.allSettled([...this.pending]);
    await this.stt.close();
    await this.closing;
  }

  private emit(event: TimelineEvent): void {
    this.timeline.push(event);
    this.deps.onEvent?.(event);
    this.deps.trace?.event(event);
  }

  private track(p: Promise<unknown>): void {
    const q = p.catch((err: unknown) => this.deps.logger?.error({ err: (err as Error).message }, 'cascade task failed'));
    this.pending.add(q);
    void q.finally(() => this.pending.delete(q));
  }

  private tick(): void {
    if (this.ctl.signal.aborted) return;
    const now = this.now();
    this.onTurnStep(this.turnTaking.tick(now));
    this.onInterruption(this.interruption.tick(now));
    this.onRules(this.rules.tick(now));
    this.onFiller(this.fillers.tick(now));
  }

  private onSpeech(events: SpeechEvent[]): void {
    for (const ev of events) {
      if (ev.type === 'speech-start') {
        this.callerSpeaking = true;
        this.callerTurnStartMs ??= ev.startMs;
        this.emit({ type: 'vad-speech-start', atMs: ev.startMs, detectedAtMs: ev.detectedAtMs });
        this.onRules(this.rules.callerSpeechStart(ev.detectedAtMs));
        this.onTurnStep(this.turnTaking.speechStart(ev.detectedAtMs));
        this.onInterruption(this.interruption.speechStart(ev.startMs, ev.detectedAtMs));
      } else {
        this.callerSpeaking = false;
        this.lastSpeechEndMs = ev.endMs;
        this.emit({ type: 'vad-speech-end', atMs: ev.endMs, detectedAtMs: ev.detectedAtMs });
        this.onRules(this.rules.callerSpeechEnd(ev.endMs));
        this.onTurnStep(this.turnTaking.speechEnd(ev.endMs, ev.detectedAtMs));
        this.onInterruption(this.interruption.speechEnd(ev.endMs, ev.detectedAtMs));
      }
    }
  }

  private onTurnStep(step: TurnStep): void {
    this.wake.set('turn', step.wakeAtMs);
    const classifier = this.deps.classifier;
    if (step.classify && classifier) {
      const req = step.classify;
      const timer = (fn: () => void, ms: number) => this.deps.clock.setTimeout(fn, ms);
      this.track(
        classifyWithDeadline(classifier, req.transcript, req.deadlineAtMs - this.now(), timer, this.ctl.signal).then((p) => {
          if (p !== undefined && !this.ctl.signal.aborted) this.onTurnStep(this.turnTaking.classification(req.id, p, this.now()));
        }),
      );
    }
    if (step.decision) this.track(this.onEndOfTurn(step.decision));
  }

  private async onEndOfTurn(decision: EndOfTurnDecision): Promise<void> {
    const speechEndMs = decision.atMs - decision.waitedMs;
    const startMs = this.callerTurnStartMs ?? speechEndMs;
    this.callerTurnStartMs = undefined;
    const text = await this.stt.settle(decision.transcript, this.deps.timeouts?.sttFinalWaitMs ?? 600);
    const taken = text.length > 0 && !this.ctl.signal.aborted && !this.farewell;
    this.emit({ type: 'end-of-turn', atMs: decision.atMs, waitedMs: decision.waitedMs, reason: decision.reason, transcript: text, taken });
    if (!taken) return;
    let userText = text;
    let userStartMs = startMs;
    const prev = this.turn;
    if (prev && !prev.aborted) {
      if (this.speaker.speaking && this.speaker.turn === prev.id) {
        this.cutTurn();
      } else if (prev.kind === 'reply') {
        // The caller added to their turn before our reply was audible: answer both parts at once.
        prev.abort('caller continued');
        this.turn = undefined;
        const merged = this.book.mergeCallerTurn(userText);
        if (merged) ({ text: userText, startMs: userStartMs } = merged);
      } else {
        prev.abort('caller spoke');
        this.turn = undefined;
      }
    }
    this.book.callerTurn(userText, userStartMs, Math.max(this.lastSpeechEndMs, userStartMs));
    this.deps.logger?.debug?.({ chars: userText.length, endpointingMs: decision.waitedMs, reason: decision.reason }, 'caller turn');
    const latency = {
      endpointingMs: decision.waitedMs,
      ...(this.stt.lastFinalAtMs !== undefined && this.stt.lastFinalAtMs >= startMs ? { sttFinalMs: this.stt.lastFinalAtMs - speechEndMs } : {}),
    };
    this.onFiller(this.fillers.endOfTurn(this.now(), userText));
    const turn = this.startTurn('reply', this.agentSource());
    this.book.setLatencyBase(turn.id, { decisionAtMs: decision.atMs, speechEndMs, latency });
  }

  // ---- interruptions, rules, fillers ----

  private onInterruption(step: InterruptionStep): void {
    this.wake.set('interrupt', step.wakeAtMs);
    for (const a of step.actions) {
      if (a.action === 'duck' || a.action === 'pause' || a.action === 'resume') {
        this.emit({ type: 'overlap', atMs: a.atMs, action: a.action });
        if (a.action === 'duck') this.speaker.duck(true);
        else if (a.action === 'pause') this.speaker.pause();
        else this.speaker.resume();
      } else if (a.action === 'ignore') {
        this.emit({ type: 'interruption', atMs: a.atMs, taken: false, reason: a.reason, transcript: a.transcript });
        this.deps.metrics?.interruptions.inc({ taken: 'false' });
        // A backchannel is not the start of the caller's next turn.
        if (!this.callerSpeaking) this.callerTurnStartMs = undefined;
      } else if (a.action === 'interrupt') {
        this.emit({ type: 'interruption', atMs: a.atMs, taken: true, transcript: a.transcript, words: a.words, speechMs: a.speechMs });
        this.deps.metrics?.interruptions.inc({ taken: 'true' });
        this.cutTurn();
      }
    }
  }

  /** Stop the current turn at once (barge-in, goodbye); history keeps what was heard. */
  private cutTurn(): void {
    const turn = this.turn;
    if (!turn) return;
    turn.abort('cut off');
    this.fillers.cancel();
    this.wake.set('filler', undefined);
    const playedMs = this.speaker.interrupt();
    this.finishTurn(turn, this.now(), true, playedMs);
  }

  private onRules(step: CallRulesStep): void {
    this.wake.set('rules', step.wakeAtMs);
    for (const a of step.actions) {
      // The closing apology is playing: the call ends after it, nothing else is said.
      if (this.farewell && (a.type === 'reengage' || a.type === 'say-goodbye')) continue;
      if (a.type === 'reengage') {
        if (this.turn || this.callerSpeaking) continue;
        this.emit({ type: 'reengagement', atMs: a.atMs, count: a.count });
        this.startTurn('reengagement', a.prompt ? this.agentSource(a.prompt) : { kind: 'fixed', text: spokenLine('reengagement', this.deps.language) });
      } else if (a.type === 'end-call') {
        void this.hangUp('initial-silence', 'local-hangup');
      } else if (a.type === 'say-goodbye') {
        this.cutTurn();
        this.startTurn('goodbye', { kind: 'fixed', text: spokenLine('goodbye', this.deps.language) });
      } else if (a.type === 'hang-up') {
        void this.hangUp('max-duration', 'max-duration');
      }
    }
  }

  private onFiller(step: FillerStep): void {
    this.wake.set('filler', step.wakeAtMs);
    const f = step.filler;
    if (!f || !this.turn || this.turn.kind !== 'reply') return;
    if (this.turn.offerFiller(f.text)) this.emit({ type: 'filler', atMs: f.atMs, text: f.text, category: f.category });
  }

  // ---- assistant turns ----

  private agentSource(reengagementPrompt?: string): TurnSource {
    const { agent } = this.deps;
    const base = { agent, assistant: this.assistant, history: this.history, variables: this.callVariables, tools: this.deps.voiceTools ?? voiceTools(this.s) };
    return agentSource(reengagementPrompt ? { ...base, reengagementPrompt } : base);
  }

  private startTurn(kind: AssistantTurnKind, source: TurnSource, voice: TurnVoice = this.deps.voice): SpokenTurn {
    const id = ++this.turnSeq;
    const turn = new SpokenTurn(
      id,
      kind,
      source,
      {
        clock: this.deps.clock,
        now: () => this.now(),
        speaker: this.speaker,
        voice,
        llmFirstTokenMs: this.deps.timeouts?.llmFirstTokenMs ?? 10_000,
        ttsFirstFrameMs: this.deps.timeouts?.ttsFirstFrameMs ?? 5_000,
        narrowband: () => isNarrowbandCodec(this.media.outbound.codec),
        onProviderError: (provider, message, retrying) => this.emit({ type: 'provider-error', atMs: this.now(), provider, message, retrying }),
      },
      this.ctl.signal,
    );
    this.turn = turn;
    this.book.started(id, kind);
    this.emit({ type: 'turn-start', atMs: this.now(), turn: id, kind });
    const run = (): Promise<void> => turn.run();
    this.track((this.deps.trace ? this.deps.trace.inTurn(id, run) : run()).then(() => this.afterProduced(turn)));
    return turn;
  }

  /** The turn has handed all its audio to the speaker (or failed, or was cut). */
  private afterProduced(turn: SpokenTurn): void {
    if (this.ctl.signal.aborted) return;
    if (turn.failed && this.turn === turn) {
      this.finishTurn(turn, this.now(), true, this.speaker.playedFrames(turn.id) * 20);
      this.recover(turn);
      return;
    }
    // With audio, the speaker's onEnd finishes the turn once its last frame has played.
    if (!turn.aborted && turn.segments.every((s) => s.frames === 0)) this.finishTurn(turn, this.now(), false, 0);
  }

  /**
   * After a retry failed: an apology in the same voice, in the assistant's language; or in the
   * offline voice when TTS broke, in English (the only language its voices speak). The call goes
   * on, unless the failure is one no retry fixes (a refused key), the apology itself failed, or
   * MAX_CONSECUTIVE_FAILED_TURNS turns in a row failed: then the closing apology and a hang-up.
   */
  private recover(turn: SpokenTurn): void {
    const offline = turn.failed === 'tts';
    const failure =
      turn.failed === 'tts'
        ? failureOf('tts-error', turn.error, turn.voice.provider.label)
        : failureOf('llm-error', turn.error, 'llm');
    if (this.farewell?.turn === turn.id) {
      // The closing apology failed too: the offline voice if it was not that already, else hang up.
      const fallback = this.deps.fallbackVoice;
      if (offline && fallback && turn.voice !== fallback) this.sayFarewell('en', fallback);
      else void this.hangUp('provider-failure', 'error');
      return;
    }
    if (turn.kind === 'goodbye') {
      this.deps.onFailure?.(failure, false);
      this.onRules(this.rules.goodbyeFinished(this.now()));
      return;
    }
    this.failedTurns++;
    const voice = offline ? this.deps.fallbackVoice : this.deps.voice;
    if (turn.kind === 'apology' || !voice || isPermanent(turn.error) || this.failedTurns >= MAX_CONSECUTIVE_FAILED_TURNS) {
      this.failCall(failure);
      return;
    }
    this.deps.onFailure?.(failure, false);
    this.startTurn('apology', { kind: 'fixed', text: spokenLine('apology', offline ? 'en' : this.deps.language) }, voice);
  }

  /**
   * A provider failure ends the call: the closing apology (the offline voice when TTS failed),
   * then a hang-up once it has played, or after FAREWELL_GRACE_MS whatever happens. Idempotent.
   */
  private failCall(failure: CallFailure): void {
    if (this.farewell || this.ctl.signal.aborted) return;
    this.deps.onFailure?.(failure, true);
    this.cutTurn();
    const offline = failure.kind === 'tts-error';
    const voice = offline ? this.deps.fallbackVoice : this.deps.voice;
    if (!voice) {
      void this.hangUp('provider-failure', 'error');
      return;
    }
    this.sayFarewell(offline ? 'en' : this.deps.language, voice);
  }

  private sayFarewell(language: string, voice: TurnVoice): void {
    this.farewell?.timer.cancel();
    const timer = this.deps.clock.setTimeout(() => void this.hangUp('provider-failure', 'error'), FAREWELL_GRACE_MS);
    // Set before the turn starts: a turn that fails at once comes back through recover().
    this.farewell = { turn: this.turnSeq + 1, timer };
    this.startTurn('apology', { kind: 'fixed', text: spokenLine('model-lost', language) }, voice);
  }

  private onAudioStart(turnId: number, atMs: number): void {
    const kind = this.turn?.id === turnId ? this.turn.kind : 'reply';
    this.book.audioStarted(turnId, atMs);
    this.emit({ type: 'assistant-audio-start', atMs, turn: turnId, kind });
    this.fillers.replyAudioStarted(atMs);
    this.wake.set('filler', undefined);
    this.onTurnStep(this.turnTaking.assistantStarted(atMs));
    this.onInterruption(this.interruption.assistantStarted(atMs));
    this.onRules(this.rules.assistantAudioStart(atMs));
  }

  private onAudioEnd(turnId: number, atMs: number, interrupted: boolean): void {
    const kind = this.book.kindOf(turnId) ?? this.turn?.kind ?? 'reply';
    this.emit({ type: 'assistant-audio-stop', atMs, turn: turnId, kind, interrupted });
    this.onTurnStep(this.turnTaking.assistantStopped(atMs, interrupted));
    this.onInterruption(this.interruption.assistantStopped(atMs));
    this.onRules(this.rules.assistantAudioEnd(atMs));
    const turn = this.turn;
    if (!interrupted && turn?.id === turnId) this.finishTurn(turn, atMs, false, 0);
  }

  /** The turn is over for the caller: record it, then act on how it ended. */
  private finishTurn(turn: SpokenTurn, endMs: number, interrupted: boolean, playedMs: number): void {
    if (this.turn === turn) this.turn = undefined;
    if (!this.book.finish(turn, endMs, interrupted, playedMs)) return;
    this.deps.logger?.debug?.({ turn: turn.id, kind: turn.kind, interrupted, playedMs: Math.round(playedMs) }, 'assistant turn');
    this.deps.trace?.turnEnded(turn, endMs, interrupted);
    if (this.ctl.signal.aborted || turn.failed) return;
    if (this.farewell?.turn === turn.id) {
      void this.hangUp('provider-failure', 'error');
      return;
    }
    if (turn.kind !== 'apology' && turn.segments.some((s) => s.frames > 0)) this.failedTurns = 0;
    if (turn.ended) void this.hangUp('end-call-tool', 'local-hangup');
    else if (turn.kind === 'goodbye' && !interrupted) this.onRules(this.rules.goodbyeFinished(endMs));
  }
}
