/**
 * RTP socket I/O in a thread of its own (./worker.ts), seen from the event-loop thread: the
 * `RtpIo` the port pool binds RTP sockets through by default (SWITCHBOARD_RTP_THREAD=0 keeps RTP on
 * the event-loop thread instead: about a tenth less CPU, a longer send-interval tail; docs/bench-history.md, 2026-11-27 00:25).
 *
 * Why: with every call's RTP sent from the event-loop thread, any pause of that thread (a young-
 * generation GC of 2-4.5 ms about once a second at 150 calls, a long task) delays the packets of
 * every call due during it. The thread's heap and event loop carry none of the call logic's
 * garbage, and the session hands each packet over a little before it is due (SEND_LEAD_MS in
 * rtp-session-outbound.ts), so a late event-loop thread no longer moves it.
 *
 * One thread per RtpIoThread (one per process: `sharedRtpIoThread()`), started by the first
 * bind. Packets cross in two SharedArrayBuffer rings (./ring.ts); messages carry only socket
 * set-up and wake-ups (./protocol.ts). Inbound datagrams are drained from their ring at the start
 * of every media-clock pass (../media-clock.ts), or when the thread says some have waited
 * INBOUND_WAKE_AFTER_MS (no media running), and handed to their socket's 'message' listeners
 * with the thread's arrival stamp.
 *
 * The native drain: with the native module (SWITCHBOARD_RTP_NATIVE), a call's inbound path
 * attaches its socket once its source is settled, and from then on the drain takes that socket's
 * plain audio packets from the ring in C (native/rtp-udp/fast_drain.c), into the call's own
 * jitter buffer and statistics; the records C leaves (DTMF, RTCP, strangers, other sockets) come
 * here as before, in ring order.
 *
 * Failure: a thread that dies (or is closed) closes every socket it held under its owner
 * (./socket-proxy.ts: 'error', then 'close'; an RtpSession then reports its media failed and the
 * call ends), is logged, and is replaced by the next bind. A thread that does not start, or keeps
 * being lost, sends new sockets to the event-loop thread (dgram) instead (./loss-policy.ts).
 * Lifetime: the worker is unref'd except while a request waits for it, so it never holds a process
 * open; `close()` ends it.
 */
import type { Logger } from 'pino';
import { Worker } from 'node:worker_threads';
import { beforeEachMediaPass } from '../media-clock.ts';
import { inThreadRtpIo } from './dgram-io.ts';
import { ThreadLossPolicy } from './loss-policy.ts';
import { CONTROL, hrOriginMs, markBefore, RING_BYTES, wakeMark, type FromWorker, type ToWorker, type WorkerInit, type WorkerWakeUps } from './protocol.ts';
import { loadNativeInbound, type NativeInbound } from '../native-inbound.ts';
import { DISCONNECT, DROPPED, encodeAddress, PACKET, payloadLength, payloadStart, recordKind, recordPort, recordSocket, recordTime, writeRecord } from './records.ts';
import { SpscRing } from './ring.ts';
import type { SendProbeFilter, SendProbeSummary } from './send-probe.ts';
import { ThreadRtpSocket, type SocketLink } from './socket-proxy.ts';
import type { NativeInboundSpec, RtpIo, RtpSocket } from './types.ts';

const WORKER_URL = new URL('./worker-entry.mjs', import.meta.url);

type Request = ToWorker extends infer T ? (T extends { req: number } ? Omit<T, 'req'> : never) : never;
type Reply = Extract<FromWorker, { type: 'reply' }>;

const WAKE: ToWorker = { op: 'wake' };

/** One worker thread and its rings: replaced as a whole when the thread is lost. */
class Link implements SocketLink {
  readonly sockets = new Map<number, ThreadRtpSocket>();
  readonly ready: Promise<void>;
  lost: Error | undefined;
  private readonly worker: Worker;
  private readonly out: SpscRing;
  private readonly inbound: SpscRing;
  private readonly inBytes: Buffer;
  private readonly control: Int32Array;
  private readonly requests = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  private nextReq = 1;
  /** Unregisters the drain from the media clock's passes. */
  private readonly unhookPasses: () => void;

  /** The thread's sockets are the native module's (native/rtp-udp), not dgram's; known once ready. */
  native = false;
  /**
   * The native module on this thread, whose fastDrain() takes attached sockets' plain audio from
   * the ring (native/rtp-udp/fast_drain.c); undefined without it (not built, or not wanted).
   */
  private readonly fast: NativeInbound | undefined;
  /** The whole inbound ring, header included, as fast_drain.c reads it. */
  private readonly inboundAll: Uint8Array;

  constructor(
    private readonly onLost: (error: Error) => void,
    private readonly counters: RtpIoCounters,
    useNative: boolean,
    workerUrl: URL,
  ) {
    const init: WorkerInit = {
      outbound: SpscRing.create(RING_BYTES),
      inbound: SpscRing.create(RING_BYTES),
      control: new SharedArrayBuffer(4 * CONTROL.WORDS),
      originMs: hrOriginMs(),
      native: useNative,
    };
    this.out = new SpscRing(init.outbound);
    this.inbound = new SpscRing(init.inbound);
    this.inBytes = Buffer.from(init.inbound, this.inbound.bytes.byteOffset, this.inbound.capacity);
    this.control = new Int32Array(init.control);
    this.inboundAll = new Uint8Array(init.inbound);
    this.fast = useNative ? loadNativeInbound() : undefined;
    this.unhookPasses = beforeEachMediaPass(() => this.drain());
    // No flags from the parent: the entry registers tsx itself, and a Worker refuses some
    // per-process flags given explicitly (see denoise-worker.ts).
    this.worker = new Worker(workerUrl, { execArgv: [], workerData: init });
    this.worker.unref();
    let started!: () => void;
    let failed!: (error: Error) => void;
    this.ready = new Promise<void>((resolve, reject) => {
      started = resolve;
      failed = reject;
    });
    // Whoever binds awaits it; a thread lost before anyone did must not be an unhandled rejection.
    this.ready.catch(() => undefined);
    let crash: Error | undefined;
    this.worker.on('message', (m: FromWorker) => {
      if (m.type === 'ready') {
        this.native = m.native;
        started();
      }
      else this.onMessage(m);
    });
    this.worker.on('error', (error) => (crash = error));
    this.worker.on('exit', (code) => {
      const error = new Error(`RTP I/O thread ${crash ? `failed: ${crash.message}` : `exited with code ${code}`}`);
      failed(error);
      this.lose(error);
    });
  }

  enqueue(id: number, msg: Uint8Array, dueMs: number, port: number, address: Uint8Array | undefined): boolean {
    if (this.lost || !writeRecord(this.out, PACKET, id, dueMs, port, address, msg)) return false;
    const control = this.control;
    if (Atomics.load(control, CONTROL.WORKER_SLEEPING) === 1) {
      // The thread stopped waking for want of work: this packet is its wake-up call.
      if (Atomics.compareExchange(control, CONTROL.WORKER_SLEEPING, 1, 0) === 1) this.worker.postMessage(WAKE);
      return true;
    }
    // Due before the thread's timer fires (a talkspurt's first packet, due now): wake it for this
    // one. Packets on the media clock's grid are due when it wakes anyway.
    const due = wakeMark(dueMs);
    const planned = Atomics.load(control, CONTROL.NEXT_WAKE);
    if (markBefore(due, planned) && Atomics.compareExchange(control, CONTROL.NEXT_WAKE, planned, due) === planned) this.worker.postMessage(WAKE);
    return true;
  }

  get nativeDrain(): boolean {
    return this.fast !== undefined && !this.lost;
  }

  attachInbound(id: number, spec: NativeInboundSpec): boolean {
    if (!this.fast || this.lost || !this.sockets.has(id)) return false;
    let address: Uint8Array;
    try {
      address = encodeAddress(spec.address);
    } catch {
      return false;
    }
    return this.fast.fastAttach(this.inboundAll, id, spec.jitter, spec.stats, spec.words, address, spec.port, spec.payloadType);
  }

  detachInbound(id: number): void {
    this.fast?.fastDetach(this.inboundAll, id);
  }

  async connect(id: number, port: number, address: string): Promise<void> {
    const reply = await this.request({ op: 'connect', id, port, address });
    if (reply.error) throw Object.assign(new Error(reply.error.message), reply.error.code ? { code: reply.error.code } : {});
  }

  /**
   * In the packets' own ring, so the thread applies it between the packets handed over before and
   * after it: a timer wake-up could otherwise take a later packet while the socket is still
   * connected, and drop it there for being addressed elsewhere. A wake-up message follows, so a
   * sleeping thread leaves the peer at once (a connected socket hears no one else). A full ring
   * (packets being refused anyway) takes it as a message.
   */
  disconnect(id: number): void {
    if (this.lost) return;
    if (writeRecord(this.out, DISCONNECT, id, 0, 0, undefined, undefined)) this.worker.postMessage(WAKE);
    else this.worker.postMessage({ op: 'disconnect', id } satisfies ToWorker);
  }

  async close(id: number): Promise<void> {
    // A lost thread took the socket with it: closed already.
    await this.request({ op: 'close', id }).catch(() => undefined);
    this.sockets.delete(id);
  }

  request(m: Request): Promise<Reply> {
    if (this.lost) return Promise.reject(this.lost);
    const req = this.nextReq++;
    if (this.requests.size === 0) this.worker.ref();
    return new Promise<Reply>((resolve, reject) => {
      this.requests.set(req, { resolve, reject });
      this.worker.postMessage({ ...m, req } as ToWorker);
    });
  }

  terminate(): Promise<void> {
    return this.worker.terminate().then(() => undefined);
  }

  private onMessage(m: Exclude<FromWorker, { type: 'ready' }>): void {
    if (m.type === 'inbound') {
      this.counters.inboundWakeUps++;
      this.drain();
    }
    else if (m.type === 'error') this.sockets.get(m.id)?.fail(m.message, m.code);
    else {
      const pending = this.requests.get(m.req);
      this.requests.delete(m.req);
      if (this.requests.size === 0) this.worker.unref();
      pending?.resolve(m);
    }
  }

  /** Every datagram the thread has stamped so far, to its socket. */
  private drain(): void {
    // Before reading: a datagram written from now on may earn a wake-up of its own; and the
    // thread sees we are draining by ourselves.
    Atomics.store(this.control, CONTROL.MAIN_WAKE_PENDING, 0);
    Atomics.add(this.control, CONTROL.MAIN_DRAINS, 1);
    const ring = this.inbound;
    const fast = this.fast;
    let failure: { error: unknown } | undefined;
    for (;;) {
      // Attached sockets' plain audio first, in C, up to the first record that is not (or to the end).
      if (fast !== undefined && fast.fastDrain(this.inboundAll) === 0) break;
      const at = ring.peek();
      if (at < 0) break;
      const socket = this.sockets.get(recordSocket(ring, at));
      if (!socket || recordKind(ring, at) !== PACKET) {
        if (socket && recordKind(ring, at) === DROPPED) socket.droppedPackets.inbound += recordTime(ring, at);
        ring.release();
        continue;
      }
      const start = payloadStart(ring, at);
      // A datagram of its own (the jitter buffer keeps views into it until playout), carved from
      // Buffer's shared pool rather than an ArrayBuffer each: at 150 calls 7,500 array buffers a
      // second would be swept at every scavenge on this thread (1.5-2.3 ms of the pause when
      // swept in it: docs/bench-history.md, 2026-11-27 00:25), which is what this I/O thread is there to
      // spare it. A kept datagram holds at most one pool (8 KiB).
      const msg = Buffer.allocUnsafe(payloadLength(ring, at));
      this.inBytes.copy(msg, 0, start, start + msg.length);
      const address = socket.sources.read(ring, at) ?? '';
      const port = recordPort(ring, at);
      const arrivalMs = recordTime(ring, at);
      ring.release();
      try {
        socket.deliver(msg, address, port, arrivalMs);
      } catch (error) {
        // As from a dgram 'message' listener: it surfaces, but after the other sockets had theirs.
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }

  private lose(error: Error): void {
    if (this.lost) return;
    this.lost = error;
    this.unhookPasses();
    for (const { reject } of this.requests.values()) reject(error);
    this.requests.clear();
    const sockets = [...this.sockets.values()];
    for (const s of sockets) this.detachInbound(s.id);
    this.sockets.clear();
    for (const s of sockets) s.lost(error);
    this.onLost(error);
  }
}

export interface RtpIoCounters {
  /** Wake-up messages for inbound datagrams the media clock's passes had not drained. */
  inboundWakeUps: number;
  /** Sockets opened on the event-loop thread because the thread was failing (see bind). */
  inThreadBinds: number;
}

export interface RtpIoThreadOptions {
  logger?: Logger;
  /** Sockets through the native module when it is built (default true; SWITCHBOARD_RTP_NATIVE). */
  native?: boolean;
  /** The thread's entry (default ./worker-entry.mjs); tests give one that cannot start. */
  workerUrl?: URL;
  /** Clock of the lost-thread policy (./loss-policy.ts), ms; default performance.now(). */
  now?: () => number;
}

export class RtpIoThread implements RtpIo {
  private link: Link | undefined;
  private nextId = 1;
  private logger: Logger | undefined;
  private closing = false;
  private probeFilter: SendProbeFilter | undefined;
  /** Handles taken by retain() and not yet closed. */
  private users = 0;
  /** Threads started (the first, and each replacement), for diagnostics and tests. */
  starts = 0;
  /** Across every thread started, for diagnostics and tests. */
  readonly counters: RtpIoCounters = { inboundWakeUps: 0, inThreadBinds: 0 };

  private useNative: boolean;
  private readonly workerUrl: URL;
  private readonly now: () => number;
  /** Where new sockets go while threads keep being lost (./loss-policy.ts). */
  private readonly losses = new ThreadLossPolicy();

  constructor(options: RtpIoThreadOptions = {}) {
    this.logger = options.logger;
    this.useNative = options.native ?? true;
    this.workerUrl = options.workerUrl ?? WORKER_URL;
    this.now = options.now ?? (() => performance.now());
  }

  /**
   * Whether threads started from now on use the native socket module (native/rtp-udp) when it
   * loads (the composition root's SWITCHBOARD_RTP_NATIVE); a running thread keeps what it has.
   */
  preferNative(on: boolean): void {
    this.useNative = on;
  }

  /** Whether the running thread's sockets are native (false before its first bind). */
  get native(): boolean {
    return this.link?.native ?? false;
  }

  /** Where a lost thread is reported (the composition root's logger). */
  useLogger(logger: Logger): void {
    this.logger = logger;
  }

  /** Sockets open in the thread now. */
  get openSockets(): number {
    return this.link?.sockets.size ?? 0;
  }

  /**
   * A socket in the thread; on the event-loop thread (dgram) instead while threads keep being
   * lost (./loss-policy.ts), or when the thread started for it did not start: a broken thread
   * costs a call the thread's steadier timing, never its media.
   */
  async bind(host: string, port: number): Promise<RtpSocket | undefined> {
    if (this.losses.fallingBack(this.now())) return this.bindInThread(host, port);
    const link = this.current();
    try {
      await link.ready;
    } catch {
      // It did not start (already counted and logged as a lost thread), or is being closed.
      return this.bindInThread(host, port);
    }
    const id = this.nextId++;
    const reply = await link.request({ op: 'bind', id, host, port });
    if (reply.error || !reply.bound) return undefined;
    const socket = new ThreadRtpSocket(link, id, reply.bound);
    link.sockets.set(id, socket);
    return socket;
  }

  private bindInThread(host: string, port: number): Promise<RtpSocket | undefined> {
    this.counters.inThreadBinds++;
    return inThreadRtpIo.bind(host, port);
  }

  /**
   * A handle for one user of a shared thread (an engine): the same binds, and a close() that ends
   * the thread only once every handle taken is closed, so one engine closing in a process that
   * runs several (tests) does not take the others' media with it.
   */
  retain(): RtpIo {
    this.users++;
    let closed = false;
    return {
      bind: (host, port) => this.bind(host, port),
      close: async () => {
        if (closed) return;
        closed = true;
        if (--this.users === 0) await this.close();
      },
    };
  }

  /** Ends the thread; its sockets close under their owners. The next bind starts a new one. */
  async close(): Promise<void> {
    const link = this.link;
    this.link = undefined;
    if (!link || link.lost) return;
    this.closing = true;
    try {
      await link.terminate();
    } finally {
      this.closing = false;
    }
  }

  /**
   * The send-interval probe of the thread (./send-probe.ts), for the calls benchmark: `start`
   * (kept across thread restarts), `reset`, `read` (undefined while no thread runs), `stop`.
   */
  readonly sendProbe = {
    start: async (filter: SendProbeFilter): Promise<void> => {
      this.probeFilter = filter;
      await this.link?.ready;
      await this.link?.request({ op: 'probe', action: 'start', filter });
    },
    reset: async (): Promise<void> => {
      await this.link?.request({ op: 'probe', action: 'reset' });
    },
    read: async (): Promise<SendProbeSummary | undefined> => (await this.link?.request({ op: 'probe', action: 'read' }))?.probe,
    stop: async (): Promise<void> => {
      this.probeFilter = undefined;
      await this.link?.request({ op: 'probe', action: 'stop' });
    },
  };

  /** Why the running thread has woken so far (undefined while none runs). */
  async wakeUps(): Promise<WorkerWakeUps | undefined> {
    return (await this.link?.request({ op: 'wake-ups' }))?.wakeUps;
  }

  private current(): Link {
    if (this.link && !this.link.lost) return this.link;
    this.starts++;
    const link = new Link(
      (error) => {
        if (this.link === link) this.link = undefined;
        if (this.closing) return;
        const fallbackMs = this.losses.lost(this.now());
        if (fallbackMs === 0) this.logger?.error({ err: error.message }, 'RTP I/O thread lost: its calls lose their media; the next call starts a new thread');
        else this.logger?.error({ err: error.message, fallbackMs }, 'RTP I/O thread lost again: new calls send and receive RTP on the event-loop thread for a while');
      },
      this.counters,
      this.useNative,
      this.workerUrl,
    );
    this.link = link;
    const filter = this.probeFilter;
    if (filter) void link.ready.then(() => link.request({ op: 'probe', action: 'start', filter })).catch(() => undefined);
    return link;
  }
}

let shared: RtpIoThread | undefined;

/** The process's RTP I/O thread (created on first use; its worker starts with the first bind). */
export function sharedRtpIoThread(): RtpIoThread {
  shared ??= new RtpIoThread();
  return shared;
}
