/**
 * Shared vocabulary of the transaction layer (RFC 3261 §17): where a message goes, what a
 * transaction asks its owner to do, and the timer base values.
 */
import type { SipMessage, SipRequest, SipResponse } from './message.ts';

export type TransportKind = 'udp' | 'tcp' | 'tls';

/** Where a message is sent. `connectionId` pins a stream transport to one open connection. */
export interface Destination {
  transport: TransportKind;
  address: string;
  port: number;
  connectionId?: string;
  /**
   * For TLS: the identity the peer's certificate must show (RFC 5922 §4: the SIP domain that was
   * looked up, not the SRV target); absent when the URI named an address (then the address).
   */
  serverName?: string;
}

/** Where an incoming message came from, as seen by the transport. */
export interface Source {
  transport: TransportKind;
  address: string;
  port: number;
  connectionId?: string;
  /** Our local address the message arrived on, for building Via/Contact. */
  localAddress?: string;
  localPort?: number;
}

export function isReliable(kind: TransportKind): boolean {
  return kind !== 'udp';
}

/** RFC 3261 Table 4 base values in milliseconds; tests may shrink them. */
export interface TimerConfig {
  t1Ms: number;
  t2Ms: number;
  t4Ms: number;
  /** RFC 3261 §17.2.1 says 100 Trying may be skipped if the TU answers within 200 ms. */
  trying100DelayMs: number;
}

export const DEFAULT_TIMERS: Readonly<TimerConfig> = Object.freeze({
  t1Ms: 500,
  t2Ms: 4000,
  t4Ms: 5000,
  trying100DelayMs: 0,
});

/** What a transaction asks its owner (the layer) to do; the transaction never touches sockets. */
export type TxAction =
  | { type: 'send'; message: SipMessage; dest: Destination }
  | { type: 'deliver-response'; response: SipResponse }
  | { type: 'deliver-ack'; request: SipRequest }
  | { type: 'timeout' }
  | { type: 'transport-error' }
  | { type: 'terminated' };

export type TxEmit = (action: TxAction) => void;

export type ClientInviteState = 'calling' | 'proceeding' | 'accepted' | 'completed' | 'terminated';
export type ClientNonInviteState = 'trying' | 'proceeding' | 'completed' | 'terminated';
export type ServerInviteState = 'proceeding' | 'accepted' | 'completed' | 'confirmed' | 'terminated';
export type ServerNonInviteState = 'trying' | 'proceeding' | 'completed' | 'terminated';
