/**
 * One recording and one tape per call, across every engine run of it (an assistant swap starts a
 * new run on the same session). The call runner (src/call/wiring/call-runner.ts) makes one per
 * answered call; it starts at the answer when the call's assistant has `record` on (else with the
 * first engine run whose assistant has it) and keeps going until the call ends, later runs
 * included, so the stereo WAV and the tape share one timeline whose zero is the answer. Both are written once, when the call is over:
 * `recordings/<uuid>.wav` and `recordings/<uuid>.tape.json` under SWITCHBOARD_DATA_DIR.
 * With a bucket configured (SWITCHBOARD_S3_BUCKET) the call runner then has them archived there
 * and removed locally (src/blobs, docs/OBJECT-STORAGE.md).
 *
 * Each run writes on its own clock (ms since the run began); `forRun` hands it a view shifted by
 * the run's start, so the second assistant's first frame lands where it was heard, not at 0.
 */
import type { InboundTap } from '../media/rtp-session.ts';
import type { Clock } from '../util/clock.ts';
import { recordingPath, shiftedSink, StereoRecorder, type RecordingSink } from './recorder.ts';
import { TapeRecorder, tapePath, type TapeLimits } from './tape.ts';

/** What a call recording needs from the CallSession. */
export interface RecordableCall {
  readonly uuid: string;
  readonly direction: string;
  readonly media: { tapInbound(tap: InboundTap | undefined): void };
  on(event: 'dtmf', fn: (e: { digit: string; durationMs: number }) => void): unknown;
  off(event: 'dtmf', fn: (e: { digit: string; durationMs: number }) => void): unknown;
  once(event: 'ended', fn: (info: { cause: string }) => void): unknown;
}

export interface SavedRecording {
  /** Absolute paths of what was written. */
  recording: string;
  tape: string;
}

export class CallRecording {
  private wav: StereoRecorder | undefined;
  private tape: TapeRecorder | undefined;
  private saving: Promise<SavedRecording | undefined> | undefined;
  /** The current engine run's start, ms from answer (its timeline's zero). */
  private runAtMs = 0;
  /** The answer on both clocks: runs count from now(), the media tap from monotonic(). */
  private readonly originNow: number;
  private readonly originMono: number;
  private readonly onDtmf = (e: { digit: string; durationMs: number }): void => this.tape?.dtmf(e.digit, e.durationMs, this.clock.monotonic());
  private readonly onEnded = (info: { cause: string }): void => this.tape?.hangup(info.cause, this.clock.monotonic());

  /** Make it at the answer (before the first engine run): that moment is the recording's zero. */
  constructor(
    private readonly call: RecordableCall,
    private readonly clock: Clock,
    private readonly dataDir: string,
    private readonly limits: TapeLimits = {},
  ) {
    this.originNow = clock.now();
    this.originMono = clock.monotonic();
  }

  get recording(): boolean {
    return this.wav !== undefined;
  }

  /**
   * An engine run starts now, for `assistant`: where it writes its audio, or undefined while
   * nothing is recorded (then the run keeps nothing) or once saved. The tape notes the run's
   * start (the zero of its transcript; the replay starts there).
   */
  forRun(assistant: { id: number; record: boolean }): RecordingSink | undefined {
    if (this.saving) return undefined;
    if (assistant.record) this.start();
    if (!this.wav) return undefined;
    this.tape?.engineRun(assistant.id, this.clock.monotonic());
    this.runAtMs = this.clock.monotonic() - this.originMono;
    return shiftedSink(this.wav, this.clock.now() - this.originNow);
  }

  /** The run that `forRun` last started is over: its timeline (ms from its start) goes on the tape. */
  runTimeline(events: ReadonlyArray<{ atMs: number; type: string }> | undefined): void {
    if (events && !this.saving) this.tape?.timeline(events, this.runAtMs);
  }

  /**
   * Once the call is over: write the WAV and the tape (undefined if the call was never
   * recorded). `cause` closes a tape whose hang-up the session did not report. Idempotent.
   */
  save(cause?: string): Promise<SavedRecording | undefined> {
    this.saving ??= this.write(cause);
    return this.saving;
  }

  /**
   * Start recording now (idempotent): the call's assistant records, so the tape starts at the
   * answer, before any engine run (an outbound call's voicemail detection comes first).
   */
  start(): void {
    if (this.wav || this.saving) return;
    this.wav = new StereoRecorder();
    this.tape = new TapeRecorder({ call: { uuid: this.call.uuid, direction: this.call.direction }, originMs: this.originMono, ...this.limits });
    this.call.media.tapInbound(this.tape);
    this.call.on('dtmf', this.onDtmf);
    this.call.once('ended', this.onEnded);
  }

  private async write(cause: string | undefined): Promise<SavedRecording | undefined> {
    const { wav, tape } = this;
    if (!wav || !tape) return undefined;
    this.call.media.tapInbound(undefined);
    this.call.off('dtmf', this.onDtmf);
    if (!tape.ended) tape.hangup(cause ?? 'unknown', this.clock.monotonic());
    const saved = { recording: recordingPath(this.dataDir, this.call.uuid), tape: tapePath(this.dataDir, this.call.uuid) };
    await Promise.all([wav.save(saved.recording), tape.save(saved.tape)]);
    return saved;
  }
}
