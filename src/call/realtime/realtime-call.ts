/**
 * One multimodal or dualplex call: the caller's audio streams to the realtime model, the model's
 * audio (multimodal) or its text spoken by our TTS (dualplex) goes out through the Player, and
 * the call rules, transcript and recording are the pipeline's own pure cores (CallRules,
 * Transcript, StereoRecorder, heardText) fed by the model's server-VAD events.
 *
 * Ownership: one AbortController per call; each TTS utterance is a child. The model connection,
 * the player and the rules timer belong to the call and are released in `shutdown`.
 *
 * Barge-in (always on): on the model's `speech-started` the player flushes the media queue in the
 * same event (nothing more is heard from the next 20 ms slot), the response in flight is
 * cancelled, and the model's memory is cut to what the caller heard: its audio item truncated at
 * the position the media actually sent (multimodal), or its text item replaced by the words our
 * TTS had sent (dualplex: `conversation.item.create` of the heard part right after it, then
 * `conversation.item.delete`, once the response is done).
 *
 * μ-law pass-through: on a PCMU call whose model takes G.711 μ-law (`sessionConfig`), the
 * caller's payloads go to the model as they came (PassThroughFrame) and the model's 160-byte
 * payloads go to the media as they are (`writeMulaw`); the frames are decoded only for the
 * recording.
 */
import { isNarrowbandCodec } from '../../media/codecs/codecs.ts';
import type { RealtimeConnection, RealtimeEvent } from '../../providers/realtime/realtime.ts';
import type { Timer } from '../../util/clock.ts';
import { untracked, type WorkTracker } from '../cascade/work.ts';
import type { CallMedia } from '../engine.ts';
import { StereoRecorder, telephoneBandSink, type RecordingSink } from '../recorder.ts';
import { CallRules, type CallRuleAction } from '../rules.ts';
import type { AssistantTurnKind } from '../transcript.ts';
import { Conversation, type FinishedUtterance, type Utterance } from './conversation.ts';
import type { RealtimeDeps } from './deps.ts';
import { ResponseBook } from './responses.ts';
import { RulesClock } from './rules-clock.ts';
import { ToolTurns } from './tool-turns.ts';
import { ModelLink } from './model-link.ts';
import { Player } from './player.ts';
import { reengagementInstructions, verbatimInstructions, type RealtimeAssistant, type RealtimeSettings } from './settings.ts';
import { spokenLine } from '../spoken-lines.ts';
import { failureOf, type CallFailure } from '../failures.ts';
import { modelTrouble, newCounters, type RealtimeCallCounters, type RealtimeTimelineEvent } from './timeline.ts';
import { TtsUtterance, type TtsVoice } from './tts-utterance.ts';

/** A hang-up that waits for a spoken line gives up after this long (TTS or model stalled). */
const SPOKEN_HANGUP_GRACE_MS = 15_000;

export class RealtimeCall {
  readonly timeline: RealtimeTimelineEvent[] = [];
  readonly conversation = new Conversation();
  /** This run's own recording (`record` without a call-level one); saved by runRealtime. */
  readonly recorder: StereoRecorder | undefined;
  readonly counters: RealtimeCallCounters = newCounters();
  endedBy: string | undefined;
  private readonly ctl = new AbortController();
  private readonly t0: number;
  private readonly work: WorkTracker;
  private readonly rules: RulesClock;
  private readonly link: ModelLink;
  private readonly player: Player;
  private readonly utterances = new Map<string, Utterance>();
  private readonly responses = new ResponseBook(this.utterances);
  private readonly pending = new Set<Promise<unknown>>();
  private callerSpeaking = false;
  private readonly tools: ToolTurns;
  private seq = 0;
  private connStartMs = 0;
  /** Items the model added on the current connection (caller turns, responses) since its re-seed. */
  private itemsSinceSeed = 0;
  private closing: Promise<void> | undefined;
  private apologyDeadline: Timer | undefined;
  /** modelLost ran: the closing apology is on its way and the call ends after it. */
  private lost = false;
  private readonly sink: RecordingSink | undefined;

  constructor(
    private readonly media: CallMedia,
    private readonly deps: RealtimeDeps,
    private readonly assistant: RealtimeAssistant,
    private readonly s: RealtimeSettings,
    signal: AbortSignal,
  ) {
    this.t0 = deps.clock.now();
    this.conversation.transcript.onAdd = deps.onTranscript;
    this.work = deps.work ?? untracked;
    this.rules = new RulesClock(new CallRules(s.rules), deps.clock, () => this.now(), (actions) => this.onRules(actions));
    this.recorder = s.record && !deps.recording ? new StereoRecorder() : undefined;
    this.sink = deps.recording ?? this.recorder;
    // Call control: an earlier assistant's conversation is re-seeded on every (re)connect, like ours.
    if (deps.history) this.conversation.history.push(...deps.history);
    deps.onHistory?.(this.conversation.history);
    if (signal.aborted) this.ctl.abort(signal.reason);
    else signal.addEventListener('abort', () => void this.hangUp('aborted', 'local-hangup'), { once: true });
    const events = { onStart: (k: string, at: number) => this.onAudioStart(k, at), onEnd: (k: string, at: number, i: boolean) => this.onAudioEnd(k, at, i) };
    // On a G.711 call the recording's assistant side is what the caller heard: the telephone band.
    const recorder = this.sink && isNarrowbandCodec(media.outbound.codec) ? telephoneBandSink(this.sink) : this.sink;
    this.player = new Player({ clock: deps.clock, now: () => this.now(), outbound: media.outbound, recorder, leadFrames: deps.leadFrames, events });
    this.link = new ModelLink({
      provider: deps.provider, model: deps.model, apiKey: deps.apiKey, baseUrl: deps.baseUrl, session: deps.session,
      work: this.work, signal: this.ctl.signal, logger: deps.logger, attempts: deps.connectAttempts ?? 2,
      onEvent: (ev) => this.onModelEvent(ev),
      onLost: (ev) => {
        this.emit({ type: 'model-lost', atMs: this.now(), code: ev.code, reason: ev.reason, retryable: ev.retryable });
        this.track(this.recover({ kind: 'realtime-dropped', provider: deps.provider.label, reason: String(ev.code) }));
      },
    });
    const host = { signal: this.ctl.signal, link: this.link, conversation: this.conversation, counters: this.counters, logger: deps.logger };
    const fallback = deps.fallbackAgent ? { agent: deps.fallbackAgent, extraTools: deps.fallbackExtraTools ?? [] } : undefined;
    this.tools = new ToolTurns(
      { ...host, now: () => this.now(), emit: (e) => this.emit(e), speakAnswer: (t) => this.speakAnswer(t), endWhenQuiet: () => this.maybeEndCall() },
      { tools: deps.tools, assistant, variables: s.variables, fallback },
    );
  }

  now(): number {
    return this.deps.clock.now() - this.t0;
  }

  async run(): Promise<void> {
    this.player.start();
    const onDtmf = (e: { digit: string }): void => this.emit({ type: 'dtmf', atMs: this.now(), digit: e.digit });
    this.media.on('dtmf', onDtmf);
    this.emit({ type: 'answer', atMs: 0 });
    this.rules.apply(this.rules.rules.answered(this.now()));
    // The greeting is asked for (or spoken) before the caller's first frame reaches the model.
    if (!(await this.connect())) this.track(this.modelLost(failureOf('realtime-unavailable', this.link.lastError, this.deps.provider.label)));
    else if (this.s.initialMessage && !this.s.waitForCustomer) this.speakLine('greeting', this.s.initialMessage);
    try {
      let audioMs: number | undefined;
      for await (const frame of this.media.inbound) {
        if (this.ctl.signal.aborted) break;
        const frameMs = (frame.samples.length / frame.sampleRate) * 1000;
        audioMs ??= Math.max(0, this.now() - frameMs);
        this.sink?.caller(audioMs, frame.samples);
        audioMs += frameMs;
        // While reconnecting there is no model to hear it: the caller's words in that gap are lost.
        this.link.appendAudio(frame);
      }
    } finally {
      this.media.off('dtmf', onDtmf);
      await this.shutdown();
    }
  }

  /** Ends the call from our side. Idempotent. */
  hangUp(reason: string, cause: 'local-hangup' | 'max-duration' | 'error'): Promise<void> {
    if (this.closing) return this.closing;
    this.endedBy = reason;
    this.emit({ type: 'hang-up', atMs: this.now(), reason });
    this.rules.close();
    this.ctl.abort(new Error(`hang-up: ${reason}`));
    this.closing = this.media.close(cause).catch((err: unknown) => this.deps.logger?.warn({ err: (err as Error).message }, 'hang-up failed'));
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.endedBy ??= 'caller-hangup';
    this.ctl.abort(new Error('call ended'));
    this.rules.close();
    this.apologyDeadline?.cancel();
    for (const u of this.utterances.values()) this.conversation.finish(u, this.now(), true, this.player.playedMs(u.key));
    this.player.stop();
    await this.link.close();
    await Promise.allSettled([...this.pending]);
    await this.closing;
  }

  private emit(event: RealtimeTimelineEvent): void {
    this.timeline.push(event);
    this.deps.onEvent?.(event);
  }

  private track(p: Promise<unknown>): void {
    const q = p.catch((err: unknown) => this.deps.logger?.error({ err: (err as Error).message }, 'realtime task failed'));
    this.pending.add(q);
    void q.finally(() => this.pending.delete(q));
  }

  // ---- the model connection ----

  private async connect(): Promise<boolean> {
    // Utterances of a dropped connection still playing out go into the re-seed as they will be
    // heard, under our ids: a barge-in can still cut them down to what was heard.
    const playing = [...this.utterances.values()].filter((u) => !u.finished);
    const seeds = new Map<string, { id: string; text: string }>();
    for (const u of playing) {
      const text = (u.tts ? u.tts.text : u.text).trim();
      if (text) seeds.set(u.key, { id: `sb_seed_${++this.seq}`, text });
    }
    const ok = await this.link.open(this.conversation.reseed(seeds));
    if (!ok) return false;
    for (const u of playing) {
      const seed = seeds.get(u.key);
      if (!seed || u.finished) continue;
      // Its item is now our text item on the new connection (its old response is gone).
      u.conn = this.link.conn;
      u.textItemId = seed.id;
      u.modelText = seed.text;
      u.itemId = undefined;
      u.responseId = undefined;
    }
    this.connStartMs = this.now();
    this.itemsSinceSeed = 0;
    this.emit({ type: 'model-connected', atMs: this.connStartMs, connection: this.link.connects });
    return true;
  }

  /** A dropped connection: reconnect with the conversation so far, or apologise and hang up. */
  private async recover(dropped: CallFailure): Promise<void> {
    const wasAnswering = this.link.active !== undefined;
    this.link.resetResponses();
    // Audio already received still plays; nothing more will come for it on this connection.
    for (const u of this.utterances.values()) {
      if (u.tts) u.tts.end();
      else if (!this.player.finish(u.key)) this.finishUtterance(u, this.now(), false, 0);
    }
    if (this.ctl.signal.aborted) return;
    if (!(await this.connect())) return this.modelLost(dropped);
    this.counters.reconnects++;
    // The caller was waiting for an answer the old connection never finished (or never got to:
    // tool results that came in while the model was away).
    if (wasAnswering || this.tools.answering) this.link.requestResponse('reply');
  }

  /** The call cannot go on (no model, or its TTS failed): the closing apology, then a hang-up. */
  private async modelLost(failure: CallFailure): Promise<void> {
    if (this.lost || this.ctl.signal.aborted) return;
    this.lost = true;
    this.deps.onFailure?.(failure, true);
    // Our own TTS (dualplex) says it in the assistant's language while it works; the offline
    // voice (English only) when it failed or there is none (multimodal: the model was the voice).
    const own = failure.kind === 'tts-error' ? undefined : this.deps.voice;
    const voice = own ?? this.deps.fallbackVoice;
    if (!voice) return void this.hangUp('model-failure', 'error');
    this.cutAll(false);
    this.speakTts('apology', spokenLine('model-lost', own ? this.deps.language : 'en'), voice);
    this.apologyDeadline = this.deps.clock.setTimeout(() => void this.hangUp('model-failure', 'error'), SPOKEN_HANGUP_GRACE_MS);
  }

  /** The fallback model's answer to a tool-heavy turn. */
  private speakAnswer(text: string): void {
    this.tools.answering = this.s.mode === 'multimodal';
    if (this.s.mode === 'multimodal') return this.link.requestResponse('reply', verbatimInstructions(text));
    const u = this.speakTts('reply', text, this.deps.voice!);
    u.afterTools = true;
    this.tellModel(u, text);
  }

  /**
   * A fixed line. Multimodal: the model says it verbatim in its own voice (the caller must not
   * hear two voices). Dualplex: our TTS says it at once, no model round trip, and the model is
   * told it was said, so its next answer follows on.
   */
  private speakLine(kind: AssistantTurnKind, text: string): void {
    if (this.s.mode === 'multimodal') return this.link.requestResponse(kind, verbatimInstructions(text));
    if (this.deps.voice) this.tellModel(this.speakTts(kind, text, this.deps.voice), text);
    else this.link.conn?.addAssistantText(text);
  }

  /** Dualplex: a line our TTS says goes into the model's conversation under our own item id. */
  private tellModel(u: Utterance, text: string): void {
    const conn = this.link.conn;
    if (!conn) return;
    u.textItemId = `sb_said_${u.key}`;
    u.conn = conn;
    conn.addAssistantText(text, { id: u.textItemId });
  }

  private speakTts(kind: AssistantTurnKind, text: string, voice: TtsVoice, responseId?: string): Utterance {
    const key = `tts-${++this.seq}`;
    const tts = new TtsUtterance(key, voice, this.player, this.ctl.signal, () => isNarrowbandCodec(this.media.outbound.codec));
    const u: Utterance = { key, kind, responseId, contentIndex: 0, text: '', frames: 0, tts, finished: false };
    this.utterances.set(key, u);
    this.conversation.opened(u);
    if (text) tts.say(text);
    this.track(this.work.track(tts.done).then(() => this.afterTts(u)));
    return u;
  }

  private afterTts(u: Utterance): void {
    const tts = u.tts!;
    if (tts.error) this.deps.logger?.warn({ err: tts.error, kind: u.kind }, 'realtime TTS failed');
    // With audio, the player's onEnd finishes the utterance once its last frame has played.
    if (!tts.aborted && !this.player.has(u.key)) this.finishUtterance(u, this.now(), false, 0);
    if (tts.error && u.kind !== 'apology' && !this.ctl.signal.aborted) {
      this.track(this.modelLost(failureOf('tts-error', tts.cause ?? tts.error, tts.provider)));
    }
  }

  // ---- model events ----

  private onModelEvent(ev: RealtimeEvent): void {
    if (this.ctl.signal.aborted) return;
    const now = this.now();
    switch (ev.type) {
      case 'speech-started':
        this.itemsSinceSeed++;
        this.callerSpeaking = true;
        this.tools.callerSpoke();
        this.emit({ type: 'vad-speech-start', atMs: now, audioStartMs: ev.audioStartMs });
        this.conversation.callerStarted(ev.itemId, this.connStartMs + ev.audioStartMs);
        this.rules.apply(this.rules.rules.callerSpeechStart(now));
        // The caller spoke over audio they had started hearing: a barge-in, always taken (the
        // model's turn detection has no backchannel filter; interruptions are always on).
        if (this.cutAll(true) > 0) {
          this.counters.interruptions++;
          this.deps.metrics?.interruptions.inc({ taken: 'true' });
        }
        return;
      case 'speech-stopped':
        this.callerSpeaking = false;
        this.emit({ type: 'vad-speech-end', atMs: now, audioEndMs: ev.audioEndMs });
        this.conversation.callerStopped(ev.itemId, this.connStartMs + ev.audioEndMs);
        this.rules.apply(this.rules.rules.callerSpeechEnd(now));
        return;
      case 'user-transcript':
        return this.conversation.callerSaid(ev.itemId, ev.text, now);
      case 'response-started': {
        this.itemsSinceSeed++;
        const kind = this.link.started(ev.responseId);
        const afterTools = this.tools.answering && kind === 'reply';
        if (afterTools) this.tools.answering = false;
        this.responses.start(ev.responseId, kind, afterTools);
        return this.emit({ type: 'turn-start', atMs: now, responseId: ev.responseId, kind });
      }
      case 'audio': {
        const u = this.modelItem(ev.responseId, ev.itemId, ev.contentIndex);
        if (u) u.frames += ev.mulaw ? this.player.pushAllMulaw(u.key, ev.mulaw) : this.player.pushAll(u.key, ev.frames ?? []);
        return;
      }
      case 'audio-done': {
        const u = this.utterances.get(ev.itemId);
        if (u && !this.player.finish(u.key)) this.finishUtterance(u, now, false, 0);
        return;
      }
      case 'transcript-delta':
      case 'transcript-done': {
        const u = this.modelItem(ev.responseId, ev.itemId, 0);
        if (u) u.text = ev.type === 'transcript-done' ? ev.text : u.text + ev.text;
        return;
      }
      case 'text-delta': {
        const resp = this.responses.live(ev.responseId);
        if (!resp || !this.deps.voice) return;
        if (!resp.tts) {
          resp.tts = this.speakTts(resp.kind, '', this.deps.voice, ev.responseId);
          resp.tts.textItemId = ev.itemId;
          resp.tts.conn = this.link.conn;
        }
        resp.tts.afterTools = resp.afterTools;
        return resp.tts.tts!.push(ev.text);
      }
      case 'text-done':
        return this.responses.live(ev.responseId)?.tts?.tts!.end();
      case 'function-call':
        return void this.responses.live(ev.responseId)?.calls.push({ callId: ev.callId, name: ev.name, arguments: ev.arguments });
      case 'response-done':
        return this.onResponseDone(ev.responseId);
      case 'error':
      case 'rate-limits': {
        const trouble = modelTrouble(ev, this.counters, now);
        if (!trouble) return;
        this.emit(trouble);
        if (trouble.type === 'rate-limited') this.deps.logger?.warn({ limits: trouble.names }, 'realtime model rate limit reached');
        if (ev.type === 'error' && ev.code === 'conversation_already_has_active_response') this.link.createRefused();
        return;
      }
      default:
        return;
    }
  }

  /** The utterance of a model item (multimodal audio and its transcript), opened on first sight. */
  private modelItem(responseId: string, itemId: string, contentIndex: number): Utterance | undefined {
    const u = this.responses.item(responseId, itemId, contentIndex);
    if (u && !u.conn) {
      u.conn = this.link.conn;
      this.conversation.opened(u);
    }
    return u;
  }

  private onResponseDone(responseId: string): void {
    const resp = this.responses.take(responseId);
    this.link.done(responseId);
    if (!resp) return;
    for (const edit of resp.afterDone) edit();
    resp.tts?.tts!.end();
    for (const u of this.utterances.values()) {
      if (u.responseId === responseId && !u.tts && !this.player.finish(u.key)) this.finishUtterance(u, this.now(), false, 0);
    }
    if (resp.calls.length > 0 && !resp.cancelled) this.track(this.tools.run(resp.calls));
    else this.maybeEndCall();
  }

  // ---- barge-in ----

  /** Flush the media and end every open utterance where the caller stopped hearing it. */
  private cutAll(record: boolean): number {
    const now = this.now();
    let cutCount = 0;
    for (const c of this.player.interrupt()) {
      const u = this.utterances.get(c.key);
      if (!u) continue;
      u.tts?.abort('cut off');
      const done = this.finishUtterance(u, now, true, c.sentFrames * 20);
      if (record && c.started) {
        cutCount++;
        this.emit({ type: 'interruption', atMs: now, key: c.key, sentMs: c.sentFrames * 20, heard: done ?? '' });
      }
    }
    // Utterances not yet in the player (TTS still synthesizing the first sentence): nothing heard.
    for (const u of [...this.utterances.values()]) {
      u.tts?.abort('cut off');
      this.finishUtterance(u, now, true, 0);
    }
    this.responses.cancelAll();
    const active = this.link.active;
    if (active !== undefined && this.link.cancelActive()) this.emit({ type: 'response-cancel', atMs: now, responseId: active });
    return cutCount;
  }

  private finishUtterance(u: Utterance, endMs: number, interrupted: boolean, playedMs: number): string | undefined {
    this.utterances.delete(u.key);
    const done = this.conversation.finish(u, endMs, interrupted, playedMs);
    if (!done) return undefined;
    this.keepModelInStep(u, done, interrupted, playedMs, endMs);
    if (!interrupted) {
      if (u.kind === 'goodbye') this.rules.apply(this.rules.rules.goodbyeFinished(endMs));
      else if (u.kind === 'apology') void this.hangUp('model-failure', 'error');
      else this.maybeEndCall();
    }
    return done.heard;
  }

  /**
   * The model's memory of a finished utterance must be what the caller heard. Multimodal: its
   * audio item is truncated at the position the media really sent (20 ms a frame; the provider
   * clamps to the audio received). Dualplex: a cut text item is replaced by the heard words,
   * after its response is done. An utterance of a dropped connection that had no words yet when
   * the new one was re-seeded (connect() seeds the others): its heard words are added now.
   */
  private keepModelInStep(u: Utterance, done: FinishedUtterance, interrupted: boolean, playedMs: number, endMs: number): void {
    const conn = this.link.conn;
    if (!conn) return; // the next connection is re-seeded with what was heard
    if (u.conn && u.conn !== conn) {
      // Only while it would still land in its place (nothing newer on the connection yet);
      // otherwise the next re-seed has it where it belongs.
      if (done.heard && this.itemsSinceSeed === 0) conn.addAssistantText(done.heard);
      return;
    }
    if (!interrupted) return;
    if (u.itemId && u.frames > 0) {
      const audioEndMs = Math.min(playedMs, u.frames * 20);
      conn.truncate(u.itemId, u.contentIndex, audioEndMs);
      this.emit({ type: 'truncate', atMs: endMs, itemId: u.itemId, audioEndMs });
      return;
    }
    const itemId = u.textItemId;
    if (itemId === undefined || done.heard === (u.modelText ?? done.full)) return;
    const replace = (): void => this.replaceItem(conn, itemId, done.heard, endMs);
    const resp = u.responseId !== undefined ? this.responses.pending(u.responseId) : undefined;
    if (resp) resp.afterDone.push(replace);
    else replace();
  }

  /** Dualplex memory edit: the heard words in place of a text item (nothing heard: just gone). */
  private replaceItem(conn: RealtimeConnection, itemId: string, heard: string, atMs: number): void {
    if (conn !== this.link.conn) return;
    if (heard) conn.addAssistantText(heard, { id: `sb_heard_${++this.seq}`, after: itemId });
    conn.deleteItem(itemId);
    this.emit({ type: 'item-replaced', atMs, itemId, heard });
  }

  /** end_call ran: hang up once nothing is left to say. */
  private maybeEndCall(): void {
    if (!this.tools.endAfterSpeech || this.player.busy || this.utterances.size > 0 || this.link.active !== undefined || this.tools.running > 0) return;
    void this.hangUp('end-call-tool', 'local-hangup');
  }

  // ---- call rules ----

  private onRules(actions: CallRuleAction[]): void {
    for (const a of actions) {
      if (a.type === 'reengage') {
        if (this.player.busy || this.utterances.size > 0 || this.link.active !== undefined || this.callerSpeaking) continue;
        // A slow tool is not the caller's silence: say we are on it instead of "are you there?".
        const covering = this.tools.running > 0 ? 'tool' : 'silence';
        this.emit({ type: 'reengagement', atMs: a.atMs, count: a.count, covering });
        if (covering === 'tool') this.speakLine('reply', spokenLine('still-working', this.deps.language));
        else if (a.prompt) this.link.requestResponse('reengagement', reengagementInstructions(a.prompt));
        else this.speakLine('reengagement', spokenLine('reengagement', this.deps.language));
      } else if (a.type === 'end-call') {
        void this.hangUp('initial-silence', 'local-hangup');
      } else if (a.type === 'say-goodbye') {
        this.cutAll(false);
        this.speakLine('goodbye', spokenLine('goodbye', this.deps.language));
      } else if (a.type === 'hang-up') {
        void this.hangUp('max-duration', 'max-duration');
      }
    }
  }

  private onAudioStart(key: string, atMs: number): void {
    const u = this.utterances.get(key);
    if (u) u.startMs ??= atMs;
    this.emit({ type: 'assistant-audio-start', atMs, key, kind: u?.kind ?? 'reply' });
    this.rules.audioStart(key, atMs);
  }

  private onAudioEnd(key: string, atMs: number, interrupted: boolean): void {
    const u = this.utterances.get(key);
    this.emit({ type: 'assistant-audio-stop', atMs, key, kind: u?.kind ?? 'reply', interrupted });
    this.rules.audioEnd(key, atMs);
    if (u && !interrupted) this.finishUtterance(u, atMs, false, 0);
  }
}
