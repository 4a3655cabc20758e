/**
 * Cuts a TCP/TLS byte stream into SIP messages by Content-Length (RFC 3261 18.3). Pure: feed it
 * chunks, act on what `push` returns. Once framing is lost (bad or conflicting Content-Length,
 * oversize message or buffer) the stream cannot be resynchronised, so the framer fails for good
 * and the transport should close the connection.
 */
import { contentLengthOf, scanHeaderSection, unfoldHeaders } from './framing.ts';
import { DEFAULT_PARSE_LIMITS, parseMessage, type ParseOptions, type ParseResult } from './parser.ts';

export type FramerEvent =
  /** A framed message and its parse; a failed parse (e.g. missing To) does not break framing. */
  | { type: 'message'; raw: Buffer; result: ParseResult }
  /** RFC 5626 double-CRLF keepalive ping: answer with a single CRLF. */
  | { type: 'ping' }
  /**
   * Framing is lost; `result` carries status/partial when the header section was readable,
   * so the caller may still answer 400 before closing.
   */
  | { type: 'error'; error: string; result?: ParseResult };

type FramerError = Extract<FramerEvent, { type: 'error' }>;

export interface FramerOptions extends Omit<ParseOptions, 'transport'> {
  /** Bytes held while waiting for the rest of a message. Default: maxMessageBytes. */
  maxBufferBytes?: number;
}

const CR = 0x0d;
const LF = 0x0a;

export class SipStreamFramer {
  // A growable byte queue: appends copy only the new chunk and consumption moves `start`, so
  // a peer trickling bytes costs linear, not quadratic, time.
  private store: Buffer = Buffer.alloc(0);
  private start = 0;
  private end = 0;
  /** Where to resume looking for the end of the header section (relative to `start`). */
  private scanFrom = 0;
  /** Total size of the message being received, once its header section has been read. */
  private pendingTotal: number | undefined;
  private failure: string | undefined;
  private readonly maxMessageBytes: number;
  private readonly maxBufferBytes: number;
  private readonly maxLineBytes: number;

  constructor(private readonly opts: FramerOptions = {}) {
    this.maxMessageBytes = opts.maxMessageBytes ?? DEFAULT_PARSE_LIMITS.maxMessageBytes;
    this.maxBufferBytes = opts.maxBufferBytes ?? this.maxMessageBytes;
    this.maxLineBytes = opts.maxLineBytes ?? DEFAULT_PARSE_LIMITS.maxLineBytes;
  }

  /** The reason framing failed, if it did; further input is ignored. */
  get error(): string | undefined {
    return this.failure;
  }

  /** Bytes held for an incomplete message. */
  get buffered(): number {
    return this.end - this.start;
  }

  /**
   * Bytes of an unfinished message are held. CRLFs that may yet become a keep-alive ping are
   * not a message: a peer's lone CRLF must not start a message deadline.
   */
  get midMessage(): boolean {
    const first = this.store[this.start];
    return this.end > this.start && first !== CR && first !== LF;
  }

  push(chunk: Buffer): FramerEvent[] {
    if (this.failure !== undefined) return [];
    this.append(chunk);
    const events: FramerEvent[] = [];
    for (;;) {
      const event = this.next();
      if (!event) break;
      events.push(event);
      if (event.type === 'error') break;
    }
    if (this.failure === undefined && this.buffered > this.maxBufferBytes) {
      events.push(this.fail('buffered bytes exceed the limit'));
    }
    return events;
  }

  private append(chunk: Buffer): void {
    if (this.end + chunk.length > this.store.length) {
      const live = this.buffered;
      const next = Buffer.allocUnsafe(Math.max(live + chunk.length, this.store.length * 2, 4096));
      this.store.copy(next, 0, this.start, this.end);
      this.store = next;
      this.start = 0;
      this.end = live;
    }
    chunk.copy(this.store, this.end);
    this.end += chunk.length;
  }

  private get bytes(): Buffer {
    return this.store.subarray(this.start, this.end);
  }

  private consume(n: number): void {
    this.start += n;
    this.scanFrom = Math.max(0, this.scanFrom - n);
    if (this.start === this.end) this.start = this.end = 0;
  }

  private fail(error: string, result?: ParseResult): FramerError {
    this.failure = error;
    this.store = Buffer.alloc(0);
    this.start = this.end = 0;
    return result ? { type: 'error', error, result } : { type: 'error', error };
  }

  private next(): FramerEvent | undefined {
    if (this.pendingTotal === undefined) {
      const ping = this.skipKeepalives();
      if (ping) return ping;
      const b = this.bytes;
      if (b.length === 0 || b[0] === CR || b[0] === LF) return undefined;
      if (!this.headerEndArrived(b)) {
        if (b.length > this.maxMessageBytes) return this.fail('header section too large');
        // Bounded work: the scan stops at the line start, at most maxLineBytes back.
        return b.length - (b.lastIndexOf(LF) + 1) > this.maxLineBytes ? this.fail('line too long') : undefined;
      }
      const framed = this.frame(b);
      if (framed.type === 'error') return framed;
      this.pendingTotal = framed.total;
    }
    if (this.buffered < this.pendingTotal) return undefined;
    const raw = Buffer.from(this.bytes.subarray(0, this.pendingTotal));
    this.consume(this.pendingTotal);
    this.pendingTotal = undefined;
    return { type: 'message', raw, result: parseMessage(raw, { ...this.opts, transport: 'stream' }) };
  }

  /** Looks for an empty line, resuming where the previous call stopped. */
  private headerEndArrived(b: Buffer): boolean {
    for (let lf = b.indexOf(LF, this.scanFrom); lf !== -1; lf = b.indexOf(LF, lf + 1)) {
      const after = b[lf + 1];
      if (after === undefined || (after === CR && lf + 2 >= b.length)) {
        this.scanFrom = lf;
        return false;
      }
      if (after === LF || (after === CR && b[lf + 2] === LF)) return true;
    }
    this.scanFrom = b.length;
    return false;
  }

  /** Total message size from a complete header section, or the framing error. */
  private frame(b: Buffer): { type: 'ok'; total: number } | FramerError {
    const section = scanHeaderSection(b, 0, this.maxLineBytes);
    if (section.kind !== 'complete') return this.fail(section.kind === 'error' ? section.error : 'header section not found');
    const head = (): ParseResult => parseMessage(b.subarray(0, section.bodyStart), { ...this.opts, transport: 'stream' });
    const unfolded = unfoldHeaders(section.lines.slice(1));
    const cl = 'error' in unfolded ? { length: 0 } : contentLengthOf(unfolded.headers);
    if ('error' in cl) return this.fail(cl.error, head());
    // RFC 3261 makes Content-Length mandatory on streams; without it the only safe reading is
    // "no body", and the message's parse result reports the missing header.
    const total = section.bodyStart + (cl.length ?? 0);
    if (total > this.maxMessageBytes) {
      const result = head();
      if (!result.ok && result.status !== undefined) result.status = 513;
      return this.fail('message too large', result);
    }
    return { type: 'ok', total };
  }

  /**
   * Consumes CRLFs between messages. A full CRLFCRLF is a keepalive ping; a lone CRLF (a pong,
   * or slack after a message) is dropped. A trailing partial sequence waits for more bytes.
   */
  private skipKeepalives(): FramerEvent | undefined {
    for (;;) {
      const b = this.bytes;
      if (b.length === 0 || (b[0] !== CR && b[0] !== LF)) return undefined;
      if (b.length >= 4 && b[0] === CR && b[1] === LF && b[2] === CR && b[3] === LF) {
        this.consume(4);
        return { type: 'ping' };
      }
      if (b[0] === CR && b[1] === LF) {
        if (b.length < 4 && b.subarray(2).every((x) => x === CR)) return undefined;
        this.consume(2);
      } else if (b[0] === CR && b.length === 1) {
        return undefined;
      } else {
        this.consume(1);
      }
    }
  }
}
