/**
 * The RTP I/O thread (started by ./thread-io.ts through ./worker-entry.mjs): it owns every RTP
 * socket of the process, sends each outbound packet at its due time on its own timer, and
 * stamps and forwards every inbound datagram. Its heap holds little but packets in flight, so
 * its garbage collections are short, and nothing of the call logic runs here: a GC pause or a
 * long task on the event-loop thread no longer moves the packets of every call due during it.
 *
 * Outbound: the event-loop thread writes packets with their due time into the outbound ring.
 * The thread wakes on a timer armed for its next piece of work: the earliest packet due, or, with
 * none queued, the media clock's next phase that had packets (./send-grid.ts), when the packets
 * handed over meanwhile are due. Each wake-up takes what the ring holds (a packet already due
 * goes straight out from it, others into the due queue, ./due-queue.ts: see pull()), sends what
 * is due, and arms the timer again; the time it is armed for goes into CONTROL.NEXT_WAKE, and a
 * producer handing over a packet due before it (a talkspurt's first packet, due at once) posts
 * a `wake`, handled at once. So about one wake-up per phase with packets (at 100 calls 100 a
 * second, where a 1 ms tick cost 1,000; for a lone call 50, or 100 with the sweeps below). With
 * nothing to wait for it arms nothing and sets WORKER_SLEEPING; the next producer then posts a
 * `wake`.
 *
 * Inbound: each datagram goes into the inbound ring with its socket, source and arrival time
 * (the event-loop thread's time base). Native sockets are read as datagrams come while the grid
 * is quiet; while it has packets, only by a sweep at each wake-up (the module's setPaced), and
 * the worker also wakes just before each media pass that plays out calls of a phase with
 * packets (under load, the wake-up that sends the previous pass's packets: protocol.ts,
 * GRID_PHASE_MS): datagrams cost no wake-up of their own, however the far end spreads them in
 * time (at 100 calls, 5,000 a second), and keep the kernel's arrival stamps. The event-loop
 * thread drains the ring in its media-clock passes; only datagrams it has left there for
 * INBOUND_WAKE_AFTER_MS (no media running, or a stalled thread) earn it a wake-up message. A
 * full ring refuses the datagram: the socket's count of refusals goes in as a DROPPED record as
 * soon as there is room again.
 *
 * Sockets: bound here on request, with the port the pool chose; connect and disconnect as the
 * session's UdpSender asks. Through the native module (native/rtp-udp: recvmmsg straight into
 * the inbound ring, a send without dgram's per-packet JavaScript) when it is built and
 * `WorkerInit.native` allows it, else through dgram; a host that is not an IP literal also takes
 * dgram, which resolves names. A packet handed over before a connect or disconnect may leave after
 * it: one meant for the connected peer goes there addressed, one addressed to the peer goes
 * over the connection; one addressed elsewhere while connected is dropped (as dgram would refuse
 * it), unless it was due when the connect came: what is due is sent first. A disconnect comes in
 * the outbound ring, so it applies exactly between the packets handed over before and after it.
 */
import dgram from 'node:dgram';
import { lookup } from 'node:dns/promises';
import { isIP, isIPv6 } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import { DueQueue } from './due-queue.ts';
import {
  CONTROL,
  hrOriginMs,
  INBOUND_WAKE_AFTER_MS,
  SEND_EARLY_MS,
  TICK_MS,
  wakeMark,
  type FromWorker,
  type ToWorker,
  type WorkerInit,
  type WorkerWakeUps,
} from './protocol.ts';
import { AddressCache, DISCONNECT, DROPPED, PACKET, payloadLength, payloadStart, recordKind, recordPort, recordSocket, recordTime, writeRecord } from './records.ts';
import { loadNativeUdp, nativeError, NativeSocket } from './native-udp.ts';
import { SpscRing } from './ring.ts';
import { SendGrid } from './send-grid.ts';
import { SendIntervalProbe, type ProbeLane } from './send-probe.ts';
import { nameThisThread } from '../../util/thread-priority.mjs';

interface Sock extends ProbeLane {
  readonly id: number;
  /** Exactly one of these two. */
  readonly socket: dgram.Socket | undefined;
  readonly nat: NativeSocket | undefined;
  connected: boolean;
  /** The peer of the last connect, kept after a disconnect for packets meant for it. */
  peer: { port: number; address: string } | undefined;
  /** Outbound destinations, decoded once per change. */
  readonly dest: AddressCache;
  /** Inbound sources, encoded once per change. */
  readonly source: AddressCache;
  /** Inbound datagrams the full ring refused, not yet reported. */
  dropped: number;
  closed: boolean;
}

interface Outgoing {
  sock: Sock;
  bytes: Buffer;
  port: number;
  address: string | undefined;
}

const port = parentPort!;
const init = workerData as WorkerInit;
// Told apart from Node's own threads in top -H, perf and the CPU benchmark (not niced: it sends the packets).
nameThisThread('sb-rtp-io');
const outRing = new SpscRing(init.outbound);
/** The outbound ring's bytes as a Buffer, to copy packets out without a view per packet. */
const outBytes = Buffer.from(init.outbound, outRing.bytes.byteOffset, outRing.capacity);
const inRing = new SpscRing(init.inbound);
const control = new Int32Array(init.control);
/** This thread's performance.now() + shift = the event-loop thread's. */
const shift = hrOriginMs() - init.originMs;
const now = (): number => performance.now() + shift;

const native = init.native ? loadNativeUdp(init.inbound, init.originMs, onNativeInbound) : undefined;

const sockets = new Map<number, Sock>();
const queue = new DueQueue<Outgoing>();
const droppedWaiting = new Set<Sock>();
let probe: SendIntervalProbe | undefined;
/** The armed timer (undefined: none, asleep or about to plan) and when it fires. */
let timer: NodeJS.Timeout | undefined;
let timerAt = Infinity;
/** The media clock's grid as seen in the packets sent: when to wake with nothing queued. */
const grid = new SendGrid();
const wakeUps = { timer: 0, message: 0 };
/** The native sockets are read by sweeps only (see the header). */
let paced = false;
/** Inside tick(): what it would do again (a sweep's inbound report) waits for its plan(). */
let ticking = false;
/** Datagrams written that the event-loop thread may not have drained yet. */
let inboundWaiting = false;
/** Since when they wait without a drain seen (reset by each drain, and by each wake-up sent). */
let waitingSince = 0;
/** The event-loop thread's drain count when last looked at. */
let seenDrains = 0;

const post = (m: FromWorker): void => port.postMessage(m);
/** The timer aims this long before a packet's due time (see SEND_EARLY_MS). */
const AIM_EARLY_MS = SEND_EARLY_MS / 2;

/**
 * Takes every packet the ring holds: one already due, with nothing queued ahead of it, to a
 * native socket is sent from the ring as it is; the rest go into the due queue (a copy each, so
 * the ring is free again at once). Under load that is every packet: they are handed over one
 * media phase before they are due, and the wake-up that takes them is the one planned for then.
 * A native send is synchronous, so the ring's bytes are read before they are released; dgram's
 * may complete later, so its packets always take the copy.
 */
function pull(): void {
  const until = now() + SEND_EARLY_MS;
  for (let at = outRing.peek(); at >= 0; at = outRing.peek()) {
    const sock = sockets.get(recordSocket(outRing, at));
    const kind = recordKind(outRing, at);
    if (sock && kind === PACKET) {
      const start = payloadStart(outRing, at);
      const end = start + payloadLength(outRing, at);
      const due = recordTime(outRing, at);
      const port = recordPort(outRing, at);
      const address = sock.dest.read(outRing, at);
      if (sock.nat && queue.size === 0 && due <= until) {
        grid.sent(due);
        transmit(sock, outBytes.subarray(start, end), port, address);
      } else {
        const bytes = Buffer.allocUnsafe(end - start);
        outBytes.copy(bytes, 0, start, end);
        queue.push(sock.id, due, { sock, bytes, port, address });
      }
    } else if (sock && kind === DISCONNECT) {
      disconnect(sock);
    }
    outRing.release();
  }
}

/** A packet to `port`/`address` (undefined: the connected peer), as its socket's state allows. */
function transmit(s: Sock, bytes: Buffer, port: number, address: string | undefined): void {
  if (s.closed) return;
  const peer = s.peer;
  try {
    if (s.connected) {
      if (address !== undefined && (address !== peer?.address || port !== peer.port)) return;
      probe?.record(s, bytes, now());
      if (s.nat) s.nat.send(bytes);
      else s.socket!.send(bytes);
      return;
    }
    const host = address ?? peer?.address;
    const to = address === undefined ? peer?.port : port;
    if (host === undefined || to === undefined) return;
    probe?.record(s, bytes, now());
    if (s.nat) s.nat.sendTo(bytes, to, host);
    else s.socket!.send(bytes, to, host);
  } catch {
    // The socket is closing, or the address is not one dgram takes: lost like a datagram on the way.
  }
}

/** Takes what was handed over, sends what is due, and arms the timer for what is next. */
function tick(): void {
  if (ticking) return;
  ticking = true;
  try {
    tickOnce();
  } finally {
    ticking = false;
  }
}

function tickOnce(): void {
  do {
    // Paced, the sweep is how the sockets are read; otherwise their polls read them as datagrams come.
    if (paced) native!.sweep();
    pull();
    sendDue();
    for (const s of droppedWaiting) reportDropped(s);
    if (inboundWaiting) checkInbound(now());
  } while (plan());
}

/** Sends the queued packets that are due (within SEND_EARLY_MS). */
function sendDue(): void {
  const until = now() + SEND_EARLY_MS;
  for (let due = queue.nextDue; due <= until; due = queue.nextDue) {
    grid.sent(due);
    const o = queue.shift(until)!;
    transmit(o.sock, o.bytes, o.port, o.address);
  }
}

function onTimer(): void {
  wakeUps.timer++;
  timer = undefined;
  timerAt = Infinity;
  tick();
}

/**
 * Arms the timer for the next piece of work and publishes its time, or sleeps. True: packets
 * were handed over meanwhile (their producer compared against the old time), so tick again;
 * what producers hand over after the publication, due earlier, comes with a `wake`.
 */
function plan(): boolean {
  const t = now();
  const phase = grid.next(t + AIM_EARLY_MS, native !== undefined) - AIM_EARLY_MS;
  // First: leaving pacing reads what waits, which may leave inbound datagrams waiting.
  pace(phase !== Infinity);
  let at = Math.min(queue.nextDue - AIM_EARLY_MS, phase);
  if (droppedWaiting.size > 0) at = Math.min(at, t + TICK_MS);
  if (inboundWaiting) at = Math.min(at, waitingSince + INBOUND_WAKE_AFTER_MS);
  if (at === Infinity) return sleep();
  arm(at, t);
  Atomics.store(control, CONTROL.NEXT_WAKE, wakeMark(at));
  return !outRing.isEmpty;
}

/** Native sockets read by sweeps while the grid has packets (the worker wakes anyway), at once otherwise. */
function pace(on: boolean): void {
  if (!native || on === paced) return;
  paced = on;
  native.setPaced(on);
  // What came while the polls were stopped is read now, not at the next datagram.
  if (!on) native.sweep();
}

/**
 * A timer for `at`. Node's timers count whole milliseconds, and epoll waits whole milliseconds
 * from when the loop enters it: asked for the delay to `at` rounded, the timer fires within about
 * half a tick either side of `at` (measured here: −1 to +0.9 ms, median +0.3). A wake-up that
 * finds nothing due yet plans again.
 */
function arm(at: number, t: number): void {
  if (timer !== undefined && Math.abs(timerAt - at) < TICK_MS / 2) return;
  clearTimeout(timer);
  timerAt = at;
  timer = setTimeout(onTimer, Math.max(TICK_MS, Math.round(at - t)));
}

/** Arms nothing until a producer's `wake`. True: a packet came first (tick again). */
function sleep(): boolean {
  clearTimeout(timer);
  timer = undefined;
  timerAt = Infinity;
  Atomics.store(control, CONTROL.WORKER_SLEEPING, 1);
  // A packet written before the flag went up was not followed by a wake: look once more. If the
  // producer took the flag down meanwhile, its wake is on the way and runs us.
  return !outRing.isEmpty && Atomics.compareExchange(control, CONTROL.WORKER_SLEEPING, 1, 0) === 1;
}

/** Datagrams went into the inbound ring: make sure the event-loop thread takes them. */
function inboundWritten(t: number): void {
  if (inboundWaiting) return;
  inboundWaiting = true;
  waitingSince = t;
  seenDrains = Atomics.load(control, CONTROL.MAIN_DRAINS);
  // Awake until they are taken: that is when a wake-up may be owed.
  if (timer === undefined || timerAt > t + INBOUND_WAKE_AFTER_MS) tick();
}

/** On each tick while datagrams wait: done once drained, a wake-up once left too long. */
function checkInbound(t: number): void {
  if (inRing.isEmpty) {
    inboundWaiting = false;
    // The native receiver tells us of its next write again.
    native?.armNotify();
    return;
  }
  const drains = Atomics.load(control, CONTROL.MAIN_DRAINS);
  if (drains !== seenDrains) {
    // Draining by itself: what is left came in since, and its next pass takes it.
    seenDrains = drains;
    waitingSince = t;
    return;
  }
  if (t - waitingSince < INBOUND_WAKE_AFTER_MS) return;
  waitingSince = t;
  // A wake-up already on its way (not yet drained) will take these too.
  if (Atomics.load(control, CONTROL.MAIN_WAKE_PENDING) === 1) return;
  Atomics.store(control, CONTROL.MAIN_WAKE_PENDING, 1);
  post({ type: 'inbound' });
  // Its drain takes everything there: only what is written from now on needs watching.
  inboundWaiting = false;
  native?.armNotify();
}

function reportDropped(s: Sock): void {
  if (s.closed) {
    droppedWaiting.delete(s);
    return;
  }
  if (!writeRecord(inRing, DROPPED, s.id, s.dropped, 0, undefined, undefined)) return;
  s.dropped = 0;
  droppedWaiting.delete(s);
  inboundWritten(now());
}

/**
 * The native receiver wrote datagrams into the inbound ring, had to drop some, or read an ICMP
 * error (a connected socket's peer is gone: reported as dgram reports it, an 'error' event).
 */
function onNativeInbound(id: number, dropped: number, errno: number): void {
  const s = sockets.get(id);
  if (errno !== 0 && s && !s.closed) post({ type: 'error', id, ...nativeError('recvmsg', errno, '') });
  if (dropped > 0 && s && !s.closed) {
    s.dropped += dropped;
    droppedWaiting.add(s);
    tick();
  }
  inboundWritten(now());
}

function receive(s: Sock, msg: Buffer, rinfo: dgram.RemoteInfo): void {
  const t = now();
  if (s.dropped > 0) reportDropped(s);
  if (s.dropped > 0 || !writeRecord(inRing, PACKET, s.id, t, rinfo.port, s.source.encode(rinfo.address), msg)) {
    s.dropped++;
    droppedWaiting.add(s);
    tick();
    return;
  }
  inboundWritten(t);
}

function newSock(id: number, socket: dgram.Socket | undefined, nat: NativeSocket | undefined): Sock {
  return {
    id,
    socket,
    nat,
    connected: false,
    peer: undefined,
    dest: new AddressCache(),
    source: new AddressCache(),
    dropped: 0,
    closed: false,
    probeAt: -1,
    probeTs: 0,
  };
}

function bind(req: number, id: number, host: string, at: number): void {
  if (native && isIP(host) !== 0) bindNative(req, id, host, at);
  else bindDgram(req, id, host, at);
}

function bindNative(req: number, id: number, host: string, at: number): void {
  const opened = native!.open(host, at);
  if (typeof opened === 'number') {
    post({ type: 'reply', req, error: nativeError('bind', opened, `${host}:${at}`) });
    return;
  }
  const [fd, port] = opened;
  const handle = native!.startReceiving(fd, id);
  if (typeof handle === 'number') {
    // libuv refused to poll it (the module has closed it).
    post({ type: 'reply', req, error: { message: `bind: cannot poll the socket (${handle})` } });
    return;
  }
  sockets.set(id, newSock(id, undefined, new NativeSocket(native!, fd, handle, isIPv6(host) ? 6 : 4)));
  post({ type: 'reply', req, bound: { address: host, family: isIPv6(host) ? 'IPv6' : 'IPv4', port } });
}

function bindDgram(req: number, id: number, host: string, at: number): void {
  const socket = dgram.createSocket({ type: isIPv6(host) ? 'udp6' : 'udp4', reuseAddr: false });
  const onError = (error: NodeJS.ErrnoException): void => {
    try {
      socket.close();
    } catch {
      // Never bound: nothing to close.
    }
    post({ type: 'reply', req, error: { message: error.message, ...(error.code ? { code: error.code } : {}) } });
  };
  socket.once('error', onError);
  socket.bind({ port: at, address: host, exclusive: true }, () => {
    socket.off('error', onError);
    const sock = newSock(id, socket, undefined);
    sockets.set(id, sock);
    socket.on('message', (msg, rinfo) => receive(sock, msg, rinfo));
    socket.on('error', (error: NodeJS.ErrnoException) => post({ type: 'error', id, message: error.message, ...(error.code ? { code: error.code } : {}) }));
    const a = socket.address();
    post({ type: 'reply', req, bound: { address: a.address, family: a.family, port: a.port } });
  });
}

function connect(req: number, s: Sock, address: string, to: number): void {
  s.peer = { port: to, address };
  if (s.nat) {
    void connectNative(req, s, s.nat, address, to);
    return;
  }
  try {
    s.socket!.connect(to, address, (error?: Error) => {
      s.connected = !error;
      post({ type: 'reply', req, ...(error ? { error: { message: error.message, ...codeOf(error) } } : {}) });
    });
  } catch (error) {
    post({ type: 'reply', req, error: { message: (error as Error).message, ...codeOf(error) } });
  }
}

/** Leaves the peer (packets already queued for it still go there, addressed: see transmit). */
function disconnect(s: Sock): void {
  s.connected = false;
  if (s.nat) {
    native!.connect(s.nat.fd);
    return;
  }
  try {
    s.socket!.disconnect();
  } catch {
    // Its connect had not landed (or failed): unconnected either way.
  }
}

async function connectNative(req: number, s: Sock, nat: NativeSocket, address: string, to: number): Promise<void> {
  let ip = address;
  if (isIP(address) === 0) {
    // dgram resolves a peer's name too (in the socket's family).
    try {
      ip = (await lookup(address, { family: nat.family })).address;
    } catch (error) {
      post({ type: 'reply', req, error: { message: (error as Error).message, ...codeOf(error) } });
      return;
    }
  }
  if (s.closed) {
    post({ type: 'reply', req, error: { message: 'socket is closed', code: 'ERR_SOCKET_DGRAM_NOT_RUNNING' } });
    return;
  }
  const r = native!.connect(nat.fd, ip, to);
  s.connected = r === 0;
  post({ type: 'reply', req, ...(r === 0 ? {} : { error: nativeError('connect', r, `${address}:${to}`) }) });
}

function close(req: number, s: Sock | undefined): void {
  if (!s) {
    post({ type: 'reply', req });
    return;
  }
  // What it handed over before closing leaves now rather than never (a few ms early at most).
  for (const o of queue.takeLane(s.id)) transmit(o.sock, o.bytes, o.port, o.address);
  s.closed = true;
  sockets.delete(s.id);
  droppedWaiting.delete(s);
  if (s.nat) {
    native!.close(s.nat.handle);
    // The descriptor is closed by libuv's close callback, in this loop iteration's close phase;
    // the reply follows it, so the port is free again when the pool hears it is closed.
    setImmediate(() => setImmediate(() => post({ type: 'reply', req })));
    return;
  }
  try {
    s.socket!.close(() => post({ type: 'reply', req }));
  } catch {
    post({ type: 'reply', req });
  }
}

function readWakeUps(): WorkerWakeUps {
  const [polledReads, sweptReads] = native?.readCounts() ?? [0, 0];
  return { ...wakeUps, polledReads, sweptReads };
}

function codeOf(error: unknown): { code?: string } {
  const code = (error as NodeJS.ErrnoException).code;
  return code ? { code } : {};
}

port.on('message', (m: ToWorker) => {
  // Packets handed over before this message are taken first: a connect, disconnect or close
  // applies to what follows it.
  pull();
  switch (m.op) {
    case 'bind':
      bind(m.req, m.id, m.host, m.port);
      break;
    case 'connect': {
      const s = sockets.get(m.id);
      // What is due goes first, as it was handed over: a packet addressed elsewhere would be
      // dropped on the connected socket. One due later than that and not meant for the new peer
      // is (the header says so).
      sendDue();
      if (s) connect(m.req, s, m.address, m.port);
      else post({ type: 'reply', req: m.req, error: { message: 'socket is closed', code: 'ERR_SOCKET_DGRAM_NOT_RUNNING' } });
      break;
    }
    case 'disconnect': {
      const s = sockets.get(m.id);
      if (s) disconnect(s);
      break;
    }
    case 'close':
      close(m.req, sockets.get(m.id));
      break;
    case 'wake':
      wakeUps.message++;
      tick();
      break;
    case 'wake-ups':
      post({ type: 'reply', req: m.req, wakeUps: readWakeUps() });
      break;
    case 'probe':
      if (m.action === 'start') probe = new SendIntervalProbe(m.filter);
      else if (m.action === 'reset') probe?.reset();
      else if (m.action === 'stop') probe = undefined;
      post({ type: 'reply', req: m.req, ...(probe && m.action === 'read' ? { probe: probe.summary() } : {}) });
      break;
  }
});

// Asleep until the first packet: its producer sees the flag and wakes us.
if (sleep()) tick();
post({ type: 'ready', native: native !== undefined });
