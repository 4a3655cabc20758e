/**
 * The per-call glue behind CallEnv.engine: pick the engine for the assistant's mode, run it on
 * the answered session, and once the call is over store its transcript and recording and run
 * the post-call work (billing, evaluation, webhook).
 *
 * The hook never throws and never leaves a call up with nobody talking: an engine that fails
 * (bad configuration, a provider that stays down) gets a short offline apology in the Flite
 * voice and a BYE; a mode without an engine in this build gets the same, logged as such.
 *
 * Once the SIP server is up (`attachSip`), every call runs under call control (src/call/control:
 * the Conductor): voicemail detection on outbound calls, the assistant's built-in voice tools
 * (end_call, DTMF, transfers, assistant swaps, calendar), and one engine run per assistant; the
 * runs' transcripts are merged in order for the record.
 *
 * With `record`, the call has one recording and one tape for all its runs (CallRecording): they
 * start at the answer (or with the first run whose assistant records), every later run writes
 * into them, and they are saved once the call is over, before the record is finished (the tape's
 * path in `details.tape`).
 *
 * Calls that end without reaching the engine (no answer, busy, cancelled while ringing) are
 * finished by the sweeper (sweeper.ts) instead; `busy` tells it which calls this runner owns.
 */
import type { Logger } from 'pino';
import type { AgentTool, TurnMessage } from '../../agent/types.ts';
import { isNarrowbandCodec } from '../../media/codecs/codecs.ts';
import type { OutboundAudio } from '../../media/media-types.ts';
import type { UserAgent } from '../../sip/user-agent.ts';
import type { AssistantRecord } from '../../store/repos/assistants.ts';
import type { CallsRepo, CallPatch } from '../../store/repos/calls.ts';
import type { CallEngine } from '../call-env.ts';
import { CallRecording, type SavedRecording } from '../call-recording.ts';
import type { CallSession, EndCause } from '../call-session.ts';
import { Conductor, type ConductorDeps, type EngineRunner } from '../control/conductor.ts';
import { resolveSpeech, startEngine, type CallMedia, type EngineContext } from '../engine.ts';
import type { PostCallDeps } from '../post-call/index.ts';
import type { RecordingStorage } from '../../blobs/recording-storage.ts';
import { tapePathOf } from '../call-record.ts';
import { storableRecordingPath } from '../post-call/webhook.ts';
import type { RecordingSink } from '../recorder.ts';
import type { TranscriptEntry } from '../transcript.ts';
import { finishAndMark, recordTranscript } from './finish.ts';
import { assistantStt } from '../control/transcriber.ts';
import { llmSummarizer } from './summarize.ts';
import { currentCallTrace, startCallTrace } from '../../telemetry/call-trace.ts';

/** What any engine leaves behind for the record and post-call work. */
export interface EngineOutcome {
  transcript: TranscriptEntry[];
  endedBy: string;
  recording?: { path: string | undefined };
  /** The engine's decisions in ms from the run's start (kept on the call tape). */
  timeline?: ReadonlyArray<{ atMs: number; type: string }>;
}

/** Under call control: the conductor's view of the session, the call's voice tools, its stop signal. */
export interface EngineControl {
  media?: CallMedia;
  voiceTools?: AgentTool[];
  signal?: AbortSignal;
  /** The call's recording (across engine runs); the run writes into it instead of keeping its own. */
  recording?: RecordingSink;
  /** The conversation before this run (after an assistant swap) and the hook for the run's live history. */
  history?: readonly TurnMessage[];
  onHistory?: (history: readonly TurnMessage[]) => void;
}

/** The realtime engine (multimodal / dualplex), plugged in by the composition root once built. */
export type RealtimeRunner = (
  session: CallSession,
  assistant: AssistantRecord,
  callVariables?: Record<string, unknown>,
  control?: EngineControl,
) => Promise<EngineOutcome>;

/** What call control needs from the SIP server (known only once it has started). */
export interface CallControlSip {
  ua: UserAgent;
  env: ConductorDeps['env'];
}

/** Transcripts of successive engine runs (assistant swaps) in order; the last run's end and recording. */
export function mergeOutcomes(outcomes: ReadonlyArray<EngineOutcome | undefined>): EngineOutcome | undefined {
  const done = outcomes.filter((o): o is EngineOutcome => o !== undefined);
  const last = done.at(-1);
  if (!last) return undefined;
  if (done.length === 1) return last;
  const merged: EngineOutcome = { transcript: done.flatMap((o) => o.transcript), endedBy: last.endedBy };
  const recording = done.findLast((o) => o.recording?.path !== undefined)?.recording;
  if (recording) merged.recording = recording;
  return merged;
}

/** The outcome with its transcript's times moved `shiftMs` later (a later engine run's entries). */
export function shiftOutcome(outcome: EngineOutcome, shiftMs: number): EngineOutcome {
  if (shiftMs === 0) return outcome;
  const transcript = outcome.transcript.map((e) => ({ ...e, startMs: e.startMs + shiftMs, endMs: e.endMs + shiftMs }));
  return { ...outcome, transcript };
}

export interface CallRunnerDeps {
  engine: EngineContext;
  calls: CallsRepo;
  postCall: PostCallDeps;
  logger: Logger;
  realtime?: RealtimeRunner;
  /** Call-control extras (calendar, briefing summariser, timings). */
  conductor?: Pick<ConductorDeps, 'summarize' | 'calendar' | 'options'>;
  /** Longest the offline apology may take to synthesize and play. */
  apologyTimeoutMs?: number;
  /** Where a finished call's recording and tape go once written (the bucket, when configured). */
  recordings?: Pick<RecordingStorage, 'archive' | 'remove'>;
}

export const UNAVAILABLE_APOLOGY = "I'm sorry, this assistant is not available right now. Please try again later. Goodbye.";
export const FAILURE_APOLOGY = "I'm sorry, something went wrong on our side. Please call again later. Goodbye.";

export class CallRunner {
  /** Calls whose engine or post-call work runs here now (the sweeper leaves them alone). */
  private readonly active = new Set<string>();
  readonly engine: CallEngine = (session, assistant, callVariables) => this.run(session, assistant, callVariables);
  private sip: CallControlSip | undefined;

  constructor(private readonly deps: CallRunnerDeps) {}

  /** The SIP server is up: calls from now on run under call control (the Conductor). */
  attachSip(sip: CallControlSip): void {
    this.sip = sip;
  }

  busy(uuid: string): boolean {
    return this.active.has(uuid);
  }

  private async run(session: CallSession, assistant: AssistantRecord, callVariables: Record<string, unknown> | undefined): Promise<void> {
    // Ended between 200 OK and here (their BYE, a drain): nothing to say; the sweeper bills it.
    if (session.state !== 'active') return;
    const log = this.deps.logger.child({ call: session.uuid, assistantId: assistant.id, mode: assistant.mode });
    this.active.add(session.uuid);
    // A `call` span (tracing on): the engine's turns and provider requests run in its context.
    const trace = startCallTrace({ uuid: session.uuid, direction: session.direction, mode: assistant.mode, trunk: session.trunkKey, assistantId: assistant.id });
    if (trace) return trace.run(() => this.runCall(session, assistant, callVariables, log).finally(() => trace.end({ endCause: session.endCause })));
    return this.runCall(session, assistant, callVariables, log);
  }

  private async runCall(session: CallSession, assistant: AssistantRecord, callVariables: Record<string, unknown> | undefined, log: Logger): Promise<void> {
    // Made at the answer: its zero is the call's, whichever run starts recording.
    const dataDir = this.deps.engine.dataDir;
    const recording = dataDir ? new CallRecording(session, this.deps.engine.clock, dataDir) : undefined;
    if (assistant.config.record) recording?.start();
    try {
      let outcome: EngineOutcome | undefined;
      let cause: EndCause = 'local-hangup';
      let failure: unknown;
      try {
        outcome = await this.converse(session, assistant, callVariables, log, recording);
      } catch (err) {
        failure = err;
        log.error({ err: (err as Error).message }, 'call engine failed: apologising and hanging up');
        await this.apologise(session, session.outbound, FAILURE_APOLOGY, log);
        cause = 'error';
      }
      if (session.state === 'active') await session.close(cause);
      await session.done;
      // The call span covers the call; its post-call work below comes after it, in its trace.
      currentCallTrace()?.end({ endCause: session.endCause, error: failure });
      const saved = await recording?.save(session.endCause).catch((err: unknown) => {
        log.error({ err: (err as Error).message }, 'could not write the call recording');
        return undefined;
      });
      await this.finish(session, assistant, outcome, log, saved);
      // The record now has its transcript, recording and cost: watchers read it again.
      this.deps.engine.live?.publish({ kind: 'call', accountId: session.accountId, callId: session.recordId, uuid: session.uuid });
    } catch (err) {
      // Only the store can fail here; the call itself is already over.
      log.error({ err: (err as Error).message }, 'could not finish the call');
    } finally {
      this.active.delete(session.uuid);
    }
  }

  private async converse(
    session: CallSession,
    assistant: AssistantRecord,
    callVariables: Record<string, unknown> | undefined,
    log: Logger,
    recording: CallRecording | undefined,
  ): Promise<EngineOutcome | undefined> {
    if (this.sip) return this.conduct(session, assistant, callVariables, this.sip, log, recording);
    const sink = recording?.forRun({ id: assistant.id, record: assistant.config.record === true });
    const control = sink ? { recording: sink } : undefined;
    const kept = (outcome: EngineOutcome): EngineOutcome => {
      recording?.runTimeline(outcome.timeline);
      return outcome;
    };
    if (assistant.mode === 'pipeline') return kept(await startEngine(session, assistant, this.deps.engine, callVariables, undefined, control));
    if (this.deps.realtime) return kept(await this.deps.realtime(session, assistant, callVariables, control));
    log.warn('no realtime engine in this build: multimodal/dualplex call gets an apology and a hang-up');
    await this.apologise(session, session.outbound, UNAVAILABLE_APOLOGY, log);
    if (session.state === 'active') await session.close('error');
    return undefined;
  }

  /** The call under call control: one engine run per assistant (swaps), tools wired to the session. */
  private async conduct(
    session: CallSession,
    assistant: AssistantRecord,
    callVariables: Record<string, unknown> | undefined,
    sip: CallControlSip,
    log: Logger,
    recording: CallRecording | undefined,
  ): Promise<EngineOutcome | undefined> {
    const engine = this.deps.engine;
    // One conversation across engine runs: each starts from the call's history so far and shows
    // the conductor its own (assistant swaps, the warm-transfer briefing).
    // Each run's transcript counts from its own start; the record's counts from the first run's
    // (the zero the call tape's replay uses too), so later runs are shifted by their start.
    let firstRunAt: number | undefined;
    const runner: EngineRunner = async ({ media, assistant: current, tools, variables, signal, history, observe }) => {
      const sink = recording?.forRun({ id: current.id, record: current.config.record === true });
      const conversation = { history, onHistory: (live: readonly TurnMessage[]) => observe(() => live) };
      const startedAt = engine.clock.monotonic();
      firstRunAt ??= startedAt;
      const shift = startedAt - firstRunAt;
      try {
        const kept = (outcome: EngineOutcome): EngineOutcome => {
          if (sink) recording?.runTimeline(outcome.timeline);
          return shiftOutcome(outcome, shift);
        };
        if (current.mode === 'pipeline') {
          return kept(await startEngine(session, current, engine, variables, signal, { media, voiceTools: tools, recording: sink, ...conversation }));
        }
        if (this.deps.realtime) {
          return kept(await this.deps.realtime(session, current, variables, { media, voiceTools: tools, signal, recording: sink, ...conversation }));
        }
      } catch (err) {
        // The conductor logs it and hangs up; the caller hears why first.
        log.error({ err: (err as Error).message, assistantId: current.id }, 'call engine failed: apologising and hanging up');
        await this.apologise(session, media.outbound, FAILURE_APOLOGY, log);
        throw err;
      }
      log.warn('no realtime engine in this build: multimodal/dualplex call gets an apology and a hang-up');
      await this.apologise(session, media.outbound, UNAVAILABLE_APOLOGY, log);
      await media.close('error');
      return undefined;
    };
    const conductor = new Conductor(
      {
        ua: sip.ua,
        env: sip.env,
        runner,
        voice: (a) => {
          try {
            return resolveSpeech(a, engine).voice;
          } catch {
            return engine.fallbackVoice;
          }
        },
        vad: engine.vad,
        stt: (a) => assistantStt(a, engine),
        summarize: llmSummarizer({ resolveModel: this.deps.postCall.resolveModel, logger: log }),
        ...this.deps.conductor,
      },
      session,
      assistant,
      callVariables,
    );
    return mergeOutcomes((await conductor.run()) as Array<EngineOutcome | undefined>);
  }

  /** A fixed sentence in the offline voice, then return (the caller hangs up after it). */
  private async apologise(session: CallSession, outbound: OutboundAudio, text: string, log: Logger): Promise<void> {
    const voice = this.deps.engine.fallbackVoice;
    if (!voice || session.state !== 'active') return;
    const ctl = new AbortController();
    const timer = this.deps.engine.clock.setTimeout(() => ctl.abort(new Error('apology timed out')), this.deps.apologyTimeoutMs ?? 15_000);
    const onEnded = (): void => ctl.abort(new Error('call ended'));
    session.once('ended', onEnded);
    try {
      const frames = voice.provider.synthesize(text, { voice: voice.voice, narrowband: isNarrowbandCodec(outbound.codec), signal: ctl.signal });
      await outbound.writeStream(frames, ctl.signal);
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'apology failed');
    } finally {
      timer.cancel();
      session.off('ended', onEnded);
    }
  }

  private async finish(
    session: CallSession,
    assistant: AssistantRecord,
    outcome: EngineOutcome | undefined,
    log: Logger,
    saved: SavedRecording | undefined,
  ): Promise<void> {
    const { calls, postCall } = this.deps;
    const call = await calls.getById(session.recordId);
    if (!call) {
      // Deleted while it ran (its assistant was): what it recorded goes with it.
      const written = [saved?.recording, saved?.tape].map((f) => storableRecordingPath(postCall.dataDir, f));
      this.deps.recordings?.remove(written);
      return;
    }
    // The record's transcript keeps the latency parts; finishCall would store a shorter view.
    const patch: CallPatch = {};
    if (outcome) patch.transcript = recordTranscript(outcome.transcript);
    const wavPath = saved?.recording ?? outcome?.recording?.path;
    const recording = storableRecordingPath(postCall.dataDir, wavPath);
    if (recording) patch.recordingPath = recording;
    // The tape has no column of its own: details.tape is its path under the data dir (GET /user/calls/{id}/tape).
    const tape = storableRecordingPath(postCall.dataDir, saved?.tape);
    patch.details = { ...(call.details ?? {}), ended_by: outcome?.endedBy ?? null, ...(tape ? { tape } : {}) };
    const updated = (await calls.update(call.id, patch)) ?? call;
    // The record names them now: they may leave the data dir for the bucket (served from either meanwhile).
    this.deps.recordings?.archive([updated.recordingPath, tapePathOf(updated)]);
    const report = await finishAndMark(postCall, updated, assistant, outcome ? { turns: outcome.transcript } : null, wavPath);
    if (Object.keys(report.errors).length > 0) log.warn({ errors: report.errors }, 'post-call work incomplete; the sweeper retries');
  }
}
