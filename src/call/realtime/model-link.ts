/**
 * The call's link to the realtime model: (re)connecting with the conversation so far, reading
 * one connection's events at a time, and gating `response.create` so the engine never asks
 * while a response is in flight (the vendor rejects that with
 * `conversation_already_has_active_response`); asks made meanwhile wait for `response.done`.
 *
 * Kinds: each response.create we send records the kind of turn it is for (greeting,
 * re-engagement, goodbye...); a response the model opened itself (server VAD at the end of a
 * caller turn) is a reply. A create and a server-VAD response racing can swap two kinds; the
 * engine only uses the kind for the transcript and the goodbye, where a swap is harmless.
 *
 * While a dropped connection is being replaced there is no model to hear the caller: their
 * frames are held (the latest HOLD_MS) and sent to the new connection as soon as it is up,
 * before anything else, so words said during a reconnect reach the model late rather than never.
 * A reconnect that fails drops them.
 */
import { FRAME_MS, type AudioFrame } from '../../audio/frame.ts';
import { mulawOf } from '../../media/media-types.ts';
import {
  reconnect,
  type RealtimeConnection,
  type RealtimeEvent,
  type RealtimeHistoryItem,
  type RealtimeProvider,
  type RealtimeSessionConfig,
} from '../../providers/realtime/realtime.ts';
import type { AssistantTurnKind } from '../transcript.ts';
import type { EngineLogger } from '../cascade/deps.ts';
import type { WorkTracker } from '../cascade/work.ts';

export interface ModelLinkOptions {
  provider: RealtimeProvider;
  model: string;
  apiKey: string;
  baseUrl?: string | undefined;
  session: RealtimeSessionConfig;
  work: WorkTracker;
  signal: AbortSignal;
  logger?: EngineLogger | undefined;
  /** Connection attempts per (re)connect. */
  attempts: number;
  onEvent(event: RealtimeEvent): void;
  /** The current connection closed and we did not close it. */
  onLost(event: Extract<RealtimeEvent, { type: 'closed' }>): void;
}

/** Caller audio kept for a connection being opened: a reconnect takes well under this. */
export const HOLD_MS = 5000;

interface HeldFrame {
  frame: AudioFrame;
  /** The frame's μ-law bytes, copied (the media path may reuse its buffer). */
  mulaw: Uint8Array | undefined;
  ms: number;
}

export class ModelLink {
  private current: RealtimeConnection | undefined;
  private opening = false;
  private held: HeldFrame[] = [];
  private heldMs = 0;
  private readonly pendingKinds: AssistantTurnKind[] = [];
  private readonly queued: { kind: AssistantTurnKind; instructions?: string | undefined }[] = [];
  private readonly readers = new Set<Promise<void>>();
  /** The response in flight, if any. */
  active: string | undefined;
  connects = 0;
  /** Why the last connect attempt failed (the failure's reason when no attempt succeeded). */
  lastError: unknown;

  constructor(private readonly o: ModelLinkOptions) {}

  get conn(): RealtimeConnection | undefined {
    return this.current;
  }

  /** Connect (re-seeding `history`), trying up to `attempts` times. False when all failed. */
  async open(history: readonly RealtimeHistoryItem[]): Promise<boolean> {
    this.drop();
    this.opening = true;
    try {
      return await this.tryOpen(history);
    } finally {
      this.opening = false;
      this.held = [];
      this.heldMs = 0;
    }
  }

  /** Frames held while a connection was being opened (for diagnostics and tests). */
  get heldFrames(): number {
    return this.held.length;
  }

  private async tryOpen(history: readonly RealtimeHistoryItem[]): Promise<boolean> {
    for (let attempt = 1; attempt <= this.o.attempts && !this.o.signal.aborted; attempt++) {
      try {
        const opts = { model: this.o.model, apiKey: this.o.apiKey, session: this.o.session, signal: this.o.signal, ...(this.o.baseUrl ? { baseUrl: this.o.baseUrl } : {}) };
        const conn = await this.o.work.track(reconnect(this.o.provider, opts, history));
        if (this.o.signal.aborted) {
          conn.close();
          return false;
        }
        this.current = conn;
        this.connects++;
        for (const h of this.held) this.send(conn, h.frame, h.mulaw);
        const reader = this.read(conn);
        this.readers.add(reader);
        void reader.finally(() => this.readers.delete(reader));
        return true;
      } catch (err) {
        this.lastError = err;
        this.o.logger?.warn({ err: (err as Error).message, attempt }, 'realtime model connect failed');
      }
    }
    return false;
  }

  /**
   * One caller frame to the model. On a μ-law connection a frame that carries its payload bytes
   * (a PCMU call) sends those as they are; any other frame is encoded at the provider's edge.
   */
  appendAudio(frame: AudioFrame): void {
    const conn = this.current;
    if (conn) this.send(conn, frame, mulawOf(frame));
    else if (this.opening) this.hold(frame);
  }

  private send(conn: RealtimeConnection, frame: AudioFrame, mulaw: Uint8Array | undefined): void {
    if (mulaw === undefined || conn.session.inputFormat !== 'pcmu') conn.appendAudio(frame);
    else if (mulaw.length > 0) conn.appendMulaw(mulaw);
  }

  private hold(frame: AudioFrame): void {
    const mulaw = mulawOf(frame);
    // A μ-law frame's length from its bytes (8 a ms; an empty slot is one frame): reading a
    // telephone-band frame's samples would make them.
    const ms = mulaw === undefined ? (frame.samples.length * 1000) / frame.sampleRate : mulaw.length > 0 ? mulaw.length / 8 : FRAME_MS;
    this.held.push({ frame, mulaw: mulaw && Uint8Array.from(mulaw), ms });
    this.heldMs += ms;
    while (this.heldMs > HOLD_MS && this.held.length > 1) this.heldMs -= this.held.shift()!.ms;
  }

  /** Ask for a response now, or once the one in flight is done. */
  requestResponse(kind: AssistantTurnKind, instructions?: string): void {
    const conn = this.current;
    if (!conn) return;
    if (this.active !== undefined || this.pendingKinds.length > 0) {
      this.queued.push({ kind, instructions });
      return;
    }
    this.pendingKinds.push(kind);
    conn.createResponse(instructions !== undefined ? { instructions } : {});
  }

  /** `response-started`: the kind of turn it is. */
  started(responseId: string): AssistantTurnKind {
    this.active = responseId;
    return this.pendingKinds.shift() ?? 'reply';
  }

  /** `response-done`: a queued ask goes out now. */
  done(responseId: string): void {
    if (this.active === responseId) this.active = undefined;
    this.drain();
  }

  /** The vendor refused our create (a response was already running): ask again after it. */
  createRefused(): void {
    const kind = this.pendingKinds.shift();
    if (kind !== undefined) this.queued.unshift({ kind });
  }

  cancelActive(): boolean {
    if (this.active === undefined || !this.current) return false;
    this.current.cancelResponse();
    return true;
  }

  /** Forget requests that belonged to a connection now gone. */
  resetResponses(): void {
    this.active = undefined;
    this.pendingKinds.length = 0;
    this.queued.length = 0;
  }

  async close(): Promise<void> {
    this.drop();
    await Promise.allSettled([...this.readers]);
  }

  private drop(): void {
    const conn = this.current;
    this.current = undefined;
    conn?.close();
  }

  private drain(): void {
    if (this.active !== undefined || this.pendingKinds.length > 0) return;
    const next = this.queued.shift();
    if (next) this.requestResponse(next.kind, next.instructions);
  }

  private async read(conn: RealtimeConnection): Promise<void> {
    for await (const ev of conn.events) {
      // A connection we replaced or closed may still flush a few events: not ours any more.
      if (conn !== this.current) continue;
      if (ev.type === 'closed') {
        this.current = undefined;
        if (!this.o.signal.aborted) this.o.onLost(ev);
        return;
      }
      this.o.onEvent(ev);
    }
  }
}
