/**
 * A recorded call tape (src/call/tape.ts) played back as the caller of a replay. Every packet is
 * handed to the production inbound chain — InboundPath: source filter, RFC 4733 DTMF receiver,
 * jitter buffer, decoder, resampler to 16 kHz — at its recorded arrival time on the virtual
 * clock, re-INVITEs change the media when they did, and the chain's playout runs once per 20 ms
 * from the answer as the RtpSession's ticker does. The engine thus gets the frames and DTMF the
 * live call got; what can differ is the phase of the live ticker (under 20 ms) and anything the
 * engine itself does differently under new settings.
 *
 * The replay's zero is where the live call's first engine run began (its `engine-run` event; the
 * answer when the tape has none), which is also the zero of the live call's transcript: what
 * arrived before it goes through the chain as it did live, and its frames are dropped, as the
 * live call's were with no engine to hear them.
 *
 * Packets and re-INVITEs fire on clock timers (a DTMF end packet is reported at its arrival, as
 * live); playout slots run when the replay asks for a slot's frame, which VirtualMedia does at
 * the slot's end, or earlier when a later packet timer comes due first.
 */
import { FRAME_MS, type AudioFrame } from '../audio/frame.ts';
import { negotiatedFromTape, type CallTape, type TapeMedia, type TapePacket } from '../call/tape.ts';
import type { CallerSource } from '../call/virtual-media.ts';
import type { RtpPacket } from '../media/rtp-packet.ts';
import { InboundPath } from '../media/rtp-session-inbound.ts';
import { DropOldestQueue } from '../media/rtp-session-queue.ts';
import type { Clock, Timer } from '../util/clock.ts';

/** The far end as the replay presents it (TEST-NET-1): the tape holds no addresses. */
const REMOTE = { address: '192.0.2.1', port: 40_000, rtcpPort: 40_001 };

export interface TapeFeedHooks {
  /** A digit the DTMF receiver decoded, when the live session would have reported it. */
  dtmf(digit: string, durationMs: number): void;
}

/** Where on the tape a replay starts: the first engine run, else the answer. */
export function replayZeroMs(tape: CallTape): number {
  return tape.events.find((e) => e.type === 'engine-run')?.atMs ?? 0;
}

export class TapeFeed implements CallerSource {
  private readonly inbound: InboundPath;
  /** The playout's output: one frame per slot, read in order by `frame()`. */
  private readonly queue = new DropOldestQueue<AudioFrame>(1_000);
  private readonly frames: AsyncIterator<AudioFrame>;
  private nextPacket = 0;
  private nextMedia = 1;
  /** The next playout slot, in slots from the answer (the first fires 20 ms after it). */
  private nextSlot = 1;
  private timer: Timer | undefined;
  private closed = false;
  /** Frames made before the zero: nobody heard them. */
  private skip: number;
  /** The tape time (ms from answer) at the replay's zero. */
  readonly zeroMs: number;

  /** `t0`: the replay's call start on `clock`; it stands for `zeroMs` on the tape. */
  constructor(
    readonly tape: CallTape,
    private readonly clock: Clock,
    private readonly t0: number,
    hooks: TapeFeedHooks,
    zeroMs = replayZeroMs(tape),
  ) {
    this.zeroMs = zeroMs;
    const first = tape.media[0];
    if (!first) throw new Error('the call tape has no media');
    this.inbound = new InboundPath(negotiatedFromTape(first, REMOTE), 0, this.queue, {
      dtmf: (digit, durationMs) => hooks.dtmf(digit, durationMs),
      latched: () => undefined,
    });
    this.frames = this.queue[Symbol.asyncIterator]();
    this.advanceTo(zeroMs);
    this.skip = this.queue.size;
  }

  /** When the caller's side of the recorded call ended, ms from the replay's zero. */
  get endMs(): number {
    return (this.tape.endedAtMs ?? this.tape.packets.at(-1)?.atMs ?? this.tape.startedAtMs) - this.zeroMs;
  }

  /** The inbound chain's counters (packets, concealment, DTMF) so far. */
  get counters(): InboundPath['counters'] {
    return this.inbound.counters;
  }

  /** The frame the playout produced for the slot starting at `startMs` (asked once that slot is over), ms from the zero. */
  async frame(startMs: number): Promise<Int16Array> {
    this.advanceTo(this.zeroMs + Math.max(this.clock.now() - this.t0, startMs + FRAME_MS));
    for (; this.skip > 0; this.skip--) await this.frames.next();
    const next = await this.frames.next();
    return next.done ? new Int16Array(0) : next.value.samples;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.timer?.cancel();
    this.inbound.close();
    this.queue.end();
  }

  /** Runs everything due by `atMs` (tape time) in order: re-INVITEs, then packets, then the playout slot. */
  private advanceTo(atMs: number): void {
    if (this.closed) return;
    this.timer?.cancel();
    this.timer = undefined;
    for (;;) {
      const media = this.tape.media[this.nextMedia];
      const packet = this.tape.packets[this.nextPacket];
      const slotMs = this.nextSlot * FRAME_MS;
      if (media && media.atMs <= atMs && media.atMs <= slotMs && (!packet || media.atMs <= packet.atMs)) {
        this.update(media);
      } else if (packet && packet.atMs <= atMs && packet.atMs <= slotMs) {
        this.receive(packet);
      } else if (slotMs <= atMs) {
        this.inbound.playout(slotMs);
        this.nextSlot++;
      } else {
        break;
      }
    }
    this.schedule();
  }

  private update(m: TapeMedia): void {
    this.nextMedia++;
    this.inbound.update(negotiatedFromTape(m, REMOTE), m.atMs);
  }

  private receive(p: TapePacket): void {
    this.nextPacket++;
    const packet: RtpPacket = {
      payloadType: p.payloadType,
      sequenceNumber: p.sequenceNumber,
      timestamp: p.timestamp,
      ssrc: p.ssrc,
      marker: p.marker,
      csrcs: [],
      payload: p.payload,
      paddingLength: 0,
    };
    this.inbound.receive(packet, REMOTE, p.atMs);
  }

  /** One timer, at the next packet or re-INVITE; slots need none (the reader asks for them). */
  private schedule(): void {
    const next = Math.min(this.tape.packets[this.nextPacket]?.atMs ?? Infinity, this.tape.media[this.nextMedia]?.atMs ?? Infinity);
    if (next === Infinity || this.closed) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.advanceTo(next);
    }, this.t0 + next - this.zeroMs - this.clock.now());
  }
}
