/**
 * Two legs joined by the engine: caller frames (from the MediaSwitch) go out on the far leg,
 * the far leg's frames go out to the caller. Both sides are already 16 kHz frames at their
 * edges, so relaying is a write per frame; each RtpSession paces and encodes for its own codec.
 *
 * Either side leaving ends the bridge: `done` resolves and the conductor hangs up the caller;
 * the far leg is hung up here.
 */
import type { AudioFrame } from '../../audio/frame.ts';
import type { OutboundAudio } from '../../media/media-types.ts';
import type { Leg } from './leg.ts';
import type { MediaSwitch } from './media-switch.ts';

export class Bridge {
  /** Resolves with why the far leg ended. */
  readonly done: Promise<string>;
  private started = false;
  relayedToFar = 0;
  relayedToCaller = 0;

  constructor(
    readonly leg: Leg,
    private readonly sw: MediaSwitch,
    private readonly callerOut: OutboundAudio,
  ) {
    this.done = leg.ended;
    // The caller hanging up takes the far leg with it.
    void sw.done.then(() => leg.hangup('caller-hangup'));
  }

  get isStarted(): boolean {
    return this.started;
  }

  /** Starts relaying in both directions. Idempotent. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.callerOut.flush();
    this.sw.route((f: AudioFrame) => {
      if (this.leg.write(f)) this.relayedToFar++;
    });
    this.leg.onFrame = (f) => {
      if (this.callerOut.write(f)) this.relayedToCaller++;
    };
  }

  async stop(): Promise<void> {
    await this.leg.hangup();
  }
}
