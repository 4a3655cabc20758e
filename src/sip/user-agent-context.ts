/**
 * What the UA's parts (incoming/outgoing INVITE, registration, inbound routing) need from the
 * UA core. Declared apart from user-agent.ts so those parts do not import the class.
 */
import type { Dialog, DialogHost } from './dialog.ts';
import type { SipHeader, SipRequest, SipResponse } from './message.ts';
import type { ClientTxHandlers, TransactionLayer } from './transaction-layer.ts';
import type { ServerInviteTransaction } from './transaction-server.ts';
import type { Destination, TransportKind } from './transaction-types.ts';
import type { IncomingInvite } from './user-agent-incoming-invite.ts';

export interface UaConfig {
  userName: string;
  displayName: string | undefined;
  /** The host we bind, and (unless `host6` applies) put in Via, Contact, From and Call-ID. */
  host: string;
  /** The host we advertise to IPv6 peers in Via and Contact, when it differs from `host`. */
  host6?: string | undefined;
  /** The media host our SDP names to IPv4 peers (RTP_PUBLIC_HOST), when it differs from `host`. */
  mediaHost?: string | undefined;
  port: number;
  minSeSec: number;
  userAgent: string;
}

export const UA_ALLOW = 'INVITE, ACK, CANCEL, BYE, OPTIONS, INFO, UPDATE, PRACK';
export const UA_SUPPORTED = 'timer, 100rel';

export interface UaContext extends DialogHost {
  readonly layer: TransactionLayer;
  readonly config: UaConfig;
  /**
   * Our Contact for a transport; a sips: one when the request it goes with is sips: (§8.1.1.8).
   * `peer`: the address the message goes to (or came from), which picks `host6` for IPv6 peers.
   */
  contactFor(transport: TransportKind, scheme?: 'sip' | 'sips', peer?: string): string;
  /**
   * The host we name to `peer` (Contact, Via, SDP c=): host6 for an IPv6 peer, host otherwise;
   * undefined for an IPv6 peer when we have no IPv6 host (advertised-host.ts).
   */
  advertisedHost(peer: string | undefined): string | undefined;
  /** The host our SDP c= names to `peer`: advertisedMediaHost() (advertised-host.ts). */
  advertisedMediaHost(peer: string | undefined): string | undefined;
  /** Our address-of-record URI in angle brackets, for From. */
  localUri(): string;
  newTag(): string;
  newCallId(): string;
  /** Puts our Via with a fresh branch on top (replacing one we added before). */
  addVia(req: SipRequest, transport: TransportKind, peer?: string): void;
  /**
   * The places a request may go, in the order to try them (RFC 3263, locate.ts): of its first
   * Route if loose-routed, else of its Request-URI. Throws when there are none.
   */
  locate(req: SipRequest): Promise<Destination[]>;
  /** The first of locate(). */
  resolve(req: SipRequest): Promise<Destination>;
  /** Sends a request in a client transaction; final response, with 408/503 synthesised on failure. */
  sendRequestTo(req: SipRequest, dest: Destination, onProvisional?: (res: SipResponse) => void): Promise<SipResponse>;
  /**
   * sendRequestTo each place in turn until one answers other than 503 (RFC 3263 §4.3: a timeout,
   * a transport error or a 503 moves on, in a new transaction); the last place's outcome stands.
   * Returns the final response and the place that gave it. `prepare` fits the request to a place
   * before it goes there (Contact), or says false to skip it; when every place is skipped the
   * outcome is a 503 "No IPv6 public host" from the last place, which was never sent anything.
   */
  sendFailover(
    req: SipRequest,
    dests: readonly Destination[],
    onProvisional?: (res: SipResponse) => void,
    prepare?: (req: SipRequest, dest: Destination) => boolean,
  ): Promise<{ res: SipResponse; dest: Destination }>;
  startClient(req: SipRequest, dest: Destination, handlers: ClientTxHandlers): void;
  addDialog(dialog: Dialog): void;
  findDialog(id: string): Dialog | undefined;
  pendingIncoming: Map<ServerInviteTransaction, IncomingInvite>;
  /** INVITEs answered with reliable provisionals, by early dialog id, until their final response (PRACK routing). */
  earlyDialogs: Map<string, IncomingInvite>;
  onInvite: ((incoming: IncomingInvite) => void) | undefined;
  /**
   * Set while the node drains: out-of-dialog OPTIONS are answered 503 with this Retry-After, so a
   * proxy's health probe (Kamailio's ds_ping) takes the node out of rotation. Undefined: 200.
   */
  unavailable: { retryAfterS: number } | undefined;
  /**
   * The Route header every out-of-dialog request we start carries (SIP_OUTBOUND_PROXY): a
   * preloaded loose route to the outbound proxy, so the request goes there first while its
   * Request-URI still names the carrier. Empty without a proxy.
   */
  outboundRoute(): SipHeader[];
  /** Work the UA must stop on close (pending INVITEs, registrations). */
  track(item: { close(): void }): () => void;
}
