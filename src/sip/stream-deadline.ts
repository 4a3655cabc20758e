/**
 * When a SIP stream connection is closed for want of traffic. A pure core on the caller's clock:
 * the transport reports what each chunk did to the framer and what it sent, and arms one timer
 * at `wakeAtMs`.
 *
 *  - message deadline: once the first byte of a message has arrived, the whole message must
 *    arrive within `messageTimeoutMs`. More bytes of the same message do not extend it, so a
 *    peer trickling a byte a second cannot hold the connection.
 *  - first message: an inbound connection (`awaitFirst`) must bring its first complete message
 *    or keep-alive ping within `messageTimeoutMs` of being accepted; a client opens a connection
 *    to send, and one that sends nothing only holds a slot.
 *  - idle timeout: with no partial message, the connection lives `idleTimeoutMs` after the last
 *    complete message or keep-alive ping received, or the last message sent. Stray bytes that
 *    complete nothing (a lone CRLF) do not count. While a message is being received only its
 *    deadline applies, so a message that starts just before the idle timeout is not cut off.
 */
export interface StreamDeadlineOptions {
  idleTimeoutMs: number;
  messageTimeoutMs: number;
}

export type Expiry = 'idle' | 'message';

export class StreamDeadline {
  private activeAtMs: number;
  /** When the first byte of the message now being received arrived. */
  private messageStartMs: number | undefined;
  /** When the first message is due, until one has arrived. */
  private firstDueMs: number | undefined;

  constructor(
    private readonly opts: StreamDeadlineOptions,
    nowMs: number,
    awaitFirst = false,
  ) {
    this.activeAtMs = nowMs;
    if (awaitFirst) this.firstDueMs = nowMs + opts.messageTimeoutMs;
  }

  /**
   * After a chunk went through the framer: `completed` when it finished at least one message
   * or ping, `pending` when bytes of an unfinished message are held.
   */
  onInput(nowMs: number, completed: boolean, pending: boolean): void {
    if (completed) {
      this.activeAtMs = nowMs;
      this.firstDueMs = undefined;
      // The unfinished rest, if any, belongs to a message that began in this chunk.
      this.messageStartMs = pending ? nowMs : undefined;
      return;
    }
    if (!pending) this.messageStartMs = undefined;
    else this.messageStartMs ??= nowMs;
  }

  /** We sent a message on the connection: it is in use. */
  onOutput(nowMs: number): void {
    this.activeAtMs = nowMs;
  }

  get wakeAtMs(): number {
    // Awaiting the first message, its deadline is the earliest (a message starts after accept).
    if (this.firstDueMs !== undefined) return this.firstDueMs;
    return this.messageStartMs === undefined ? this.activeAtMs + this.opts.idleTimeoutMs : this.messageStartMs + this.opts.messageTimeoutMs;
  }

  /** Why the connection must close at `nowMs`, if it must. */
  expired(nowMs: number): Expiry | undefined {
    if (nowMs < this.wakeAtMs) return undefined;
    return this.messageStartMs === undefined && this.firstDueMs === undefined ? 'idle' : 'message';
  }
}
