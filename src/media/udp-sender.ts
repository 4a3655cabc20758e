/**
 * The send side of a session's RTP socket: datagrams to one peer, over a connected socket when
 * the owner allows it.
 *
 * An unconnected dgram send names its destination, and dgram resolves it for every datagram
 * (`lookup` → `afterDns` → `process.nextTick`, even for an IP literal): at 50 packets a second
 * per call that is a visible share of the event loop. A connected socket sends straight to its
 * handle. On Linux it also receives only from its peer, so the owner (RtpSession) allows it
 * (`aim(target, true)`) only while the peer is the one source its filter would accept anyway.
 *
 * dgram connects asynchronously (through the same lookup), and while it does neither kind of send
 * works (an addressed one fails with EISCONN once the connect lands, an unaddressed one throws),
 * so the packets of that moment (one, usually none) wait and leave when it is done. A connect
 * that fails, or a peer refusing our datagrams (ICMP port unreachable, which only a connected
 * socket reports, as ECONNREFUSED), puts that peer back on addressed sends for as long as it
 * stays the target: an unconnected socket ignores ICMP, as it did before.
 *
 * Each datagram comes with the time it is due (`send`), which the socket's I/O keeps where it
 * can (the RTP I/O thread, rtp-io/thread-io.ts) and ignores where it cannot (in-thread dgram).
 */
import { addressForSocket } from './media-address.ts';
import type { RtpSocket } from './rtp-io/types.ts';
import type { TransportAddress } from './source-filter.ts';

type LinkState = 'unconnected' | 'connecting' | 'connected';

export class UdpSender {
  private target: TransportAddress | undefined;
  private pinned = false;
  private state: LinkState = 'unconnected';
  /** The peer of the connect under way or done. */
  private peer: TransportAddress | undefined;
  /** A target the socket is not connected to again (its connect failed, or it refused). */
  private shunned: TransportAddress | undefined;
  private waiting: Uint8Array[] = [];
  private waitingDue: number[] = [];
  private closed = false;

  /**
   * Sends take no callback: with one, dgram queues a `process.nextTick` per datagram (an RTP
   * call sends 50 a second) only to report what UDP cannot promise anyway. A failed send is
   * dropped silently, as a datagram lost on the way would be; a connected peer that stopped
   * listening still shows as ECONNREFUSED on the socket's receive side (RtpSession → refused()).
   */
  /** The socket's family: an IPv6 one sends to IPv4 peers at their v4-mapped address. */
  private readonly family: string;

  constructor(private readonly socket: RtpSocket) {
    this.family = socket.address().family;
  }

  /** Where the socket is connected to, if it is (diagnostics and tests). */
  get connectedTo(): TransportAddress | undefined {
    return this.state === 'connected' && this.peer ? { ...this.peer } : undefined;
  }

  /**
   * Where datagrams go from now on (undefined: nowhere), and whether the socket may be connected
   * there (`pin`). Disconnects at once when the pin or the target goes; connects when it comes.
   */
  aim(target: TransportAddress | undefined, pin: boolean): void {
    if (this.closed) return;
    if (!same(target && { address: addressForSocket(target.address, this.family), port: target.port }, this.target)) {
      this.target = target ? { address: addressForSocket(target.address, this.family), port: target.port } : undefined;
      this.shunned = undefined;
    }
    this.pinned = pin && target !== undefined;
    this.settle();
  }

  /** `dueMs`: when the datagram should leave, on the event-loop thread's `performance.now()`. */
  send(bytes: Uint8Array, dueMs: number): void {
    if (this.state === 'connected') this.socket.sendAt(bytes, dueMs);
    else if (this.state === 'connecting') {
      this.waiting.push(bytes);
      this.waitingDue.push(dueMs);
    } else if (this.target) this.socket.sendAt(bytes, dueMs, this.target.port, this.target.address);
  }

  /** The socket reported ECONNREFUSED: the connected peer is not listening (now). */
  refused(): void {
    if (this.state !== 'connected') return;
    this.shunned = this.peer;
    this.disconnect();
  }

  /** Leaves the socket unconnected, as it was handed over, and drops what waits. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.waiting = [];
    this.waitingDue = [];
    if (this.state === 'connected') this.disconnect();
  }

  private settle(): void {
    // A connect under way settles again when it completes.
    if (this.closed || this.state === 'connecting') return;
    const want = this.pinned && !same(this.target, this.shunned) ? this.target : undefined;
    if (this.state === 'connected') {
      if (want && same(want, this.peer)) return;
      this.disconnect();
    }
    if (!want) return;
    this.state = 'connecting';
    this.peer = want;
    try {
      // Node calls this with the error when the connect fails, with nothing when it is done.
      this.socket.connect(want.port, want.address, (error?: Error) => this.connectDone(error));
    } catch {
      // E.g. the socket is already closing: stay on addressed sends.
      this.state = 'unconnected';
      this.peer = undefined;
      this.shunned = want;
    }
  }

  private connectDone(error: Error | undefined): void {
    if (this.closed) {
      // Closed while connecting: leave the socket as it was handed over all the same.
      if (!error) this.disconnect();
      return;
    }
    if (error) {
      this.shunned = this.peer;
      this.peer = undefined;
      this.state = 'unconnected';
    } else {
      this.state = 'connected';
    }
    // The aim may have moved meanwhile; then the packets that waited follow it.
    this.settle();
    if (this.waiting.length === 0) return;
    const waiting = this.waiting;
    const due = this.waitingDue;
    this.waiting = [];
    this.waitingDue = [];
    for (let i = 0; i < waiting.length; i++) this.send(waiting[i]!, due[i]!);
  }

  private disconnect(): void {
    try {
      this.socket.disconnect();
    } catch {
      // Not connected after all (or closed): either way it is not any more.
    }
    this.state = 'unconnected';
    this.peer = undefined;
  }
}

function same(a: TransportAddress | undefined, b: TransportAddress | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.port === b.port && a.address === b.address);
}
