/**
 * The one reader of a call's inbound audio, and the gate in front of its outbound audio.
 *
 * Why it exists: a session's inbound queue has a single reader, yet during one call the caller's
 * frames go to different places — the voicemail classifier, the engine, nobody (on hold), the
 * far leg of a bridge — and an engine must be stoppable without hanging up (transfer, assistant
 * swap). So the switch pumps `session.inbound` once and routes each frame to the current sink;
 * taps (voicemail detection) see every frame whatever the route.
 *
 * An engine never gets the session itself but an EngineView: a CallMedia whose inbound ends
 * when the conductor says so, whose outbound can be muted (hold, a fixed text spoken by the
 * control), and whose `close()` is handed to the conductor, which decides whether it means BYE
 * or only "this engine is done" (a handover).
 */
import type { AudioFrame } from '../../audio/frame.ts';
import type { OutboundAudio } from '../../media/media-types.ts';
import { DropOldestQueue, readThrough } from '../../media/rtp-session-queue.ts';
import type { CallMedia, DtmfEvent, EngineEndCause } from '../engine.ts';

/** What the switch needs of a call: a CallSession satisfies it. */
export interface SwitchedCall {
  readonly inbound: AsyncIterable<AudioFrame>;
  readonly outbound: OutboundAudio;
  sendDtmf(digits: string): Promise<void>;
  on(event: 'dtmf', fn: (e: DtmfEvent) => void): unknown;
  off(event: 'dtmf', fn: (e: DtmfEvent) => void): unknown;
}

export type FrameSink = (frame: AudioFrame) => void;

export class MediaSwitch {
  /** Resolves when the caller's audio has ended (the call is over). */
  readonly done: Promise<void>;
  private sink: FrameSink | undefined;
  private readonly taps = new Set<FrameSink>();
  private started = false;
  private resolveDone!: () => void;

  constructor(readonly call: SwitchedCall) {
    this.done = new Promise((r) => (this.resolveDone = r));
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    // Frames are routed in the producer's turn (the media clock's playout, and its async
    // context) where the call's inbound can be piped; a tap or sink that throws ends the
    // routing, as it ends the call. Sinks only queue or write frames; what a frame may set off
    // beyond that (a turn, its provider requests) is put back in the call's async context by
    // whoever does it (the cascade's listener binds its speech events).
    const pipe = readThrough(this.call.inbound, {
      item: (frame) => {
        for (const tap of this.taps) tap(frame);
        this.sink?.(frame);
      },
      end: () => {
        this.sink = undefined;
        this.taps.clear();
        this.resolveDone();
      },
    });
    pipe.resume();
  }

  /** Where caller frames go from now on; undefined drops them (hold). */
  route(sink: FrameSink | undefined): void {
    this.sink = sink;
  }

  /** Sees every frame until the returned function is called. */
  tap(fn: FrameSink): () => void {
    this.taps.add(fn);
    return () => this.taps.delete(fn);
  }

  /** A media seam for one engine run; caller frames are routed to it at once. */
  engineView(onClose: (view: EngineView, cause: EngineEndCause) => Promise<void>): EngineView {
    const view = new EngineView(this.call, onClose);
    this.route((f) => view.feed(f));
    void this.done.then(() => view.end());
    return view;
  }
}

export class EngineView implements CallMedia {
  readonly inbound: AsyncIterable<AudioFrame>;
  readonly outbound: OutboundAudio;
  private readonly queue = new DropOldestQueue<AudioFrame>(50);
  private muted = false;
  private ended = false;

  constructor(
    private readonly call: SwitchedCall,
    private readonly onClose: (view: EngineView, cause: EngineEndCause) => Promise<void>,
  ) {
    this.inbound = this.queue;
    const view = this;
    const out = call.outbound;
    this.outbound = {
      write: (frame) => (view.muted || view.ended ? false : out.write(frame)),
      // Frames produced while muted are consumed and dropped, so the engine's producer never stalls.
      writeStream: (frames, signal) => out.writeStream(view.gated(frames), signal),
      flush: () => (view.muted ? 0 : out.flush()),
      get playing() {
        return !view.muted && !view.ended && out.playing;
      },
      get codec() {
        return out.codec;
      },
      // μ-law pass-through (realtime models on PCMU calls), gated like write().
      ...(out.writeMulaw ? { writeMulaw: (payload: Uint8Array) => (view.muted || view.ended ? false : out.writeMulaw!(payload)) } : {}),
    };
  }

  get isEnded(): boolean {
    return this.ended;
  }

  feed(frame: AudioFrame): void {
    if (!this.ended) this.queue.push(frame);
  }

  /** Silences the engine (its audio is dropped) while the control speaks or the caller is on hold. */
  mute(on: boolean): void {
    this.muted = on;
  }

  /** This engine run is over: its inbound finishes, its audio is dropped. The call goes on. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.queue.end();
  }

  sendDtmf(digits: string): Promise<void> {
    return this.call.sendDtmf(digits);
  }

  on(event: 'dtmf', fn: (e: DtmfEvent) => void): unknown {
    return this.call.on(event, fn);
  }

  off(event: 'dtmf', fn: (e: DtmfEvent) => void): unknown {
    return this.call.off(event, fn);
  }

  close(cause: EngineEndCause): Promise<void> {
    return this.onClose(this, cause);
  }

  private async *gated(frames: AsyncIterable<AudioFrame>): AsyncIterable<AudioFrame> {
    for await (const f of frames) {
      if (this.ended) return;
      if (!this.muted) yield f;
    }
  }
}
