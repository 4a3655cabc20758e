import net from 'node:net';
import type { SrtpPolicy } from '../media/srtp/sdes.ts';
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import { digitsOf } from '../util/phone.ts';
import { ipMatcher } from '../util/ip.ts';

/**
 * The SIP trunks the engine serves, in process. REST creation provisions a trunk here before it
 * is saved (the spec: "if provisioning fails nothing is saved"); the SIP layer asks it which
 * trunk an inbound INVITE belongs to and with which credentials to place outbound calls. On start
 * every stored trunk is provisioned again with its stored ids (restoreTrunks).
 */

export type CallingFormat = '+e164' | 'e164' | 'national';

export interface TrunkSpec {
  /** The sip_trunks row id; null while creating (provisioning precedes the insert), see attach(). */
  id: number | null;
  accountId: number;
  trunkType: 'extension' | 'number';
  /** E.164 number or extension. */
  phoneNumber: string;
  username: string;
  /** Clear text: needed for digest authentication. Never logged. */
  password: string;
  /** Host without port. */
  address: string;
  callingFormat: CallingFormat;
  authType: 'auth' | 'ip';
  /** Addresses or CIDR ranges allowed to send INVITEs when authType is 'ip'. */
  allowedIps: string[] | null;
  outboundProxy: boolean;
  countryCode: string;
  /**
   * The SIP transport the trunk must use, both ways: requests to it name it (`;transport=`), and
   * with `tls` its INVITEs are taken only over TLS. Absent: RFC 3263 picks from DNS, any inbound.
   */
  transport?: SipTrunkTransport;
  /**
   * Learn a call's RTP source behind NAT even where its SDP names a public address (default
   * false: media only from the SDP address, unless that is private; src/media/source-filter.ts).
   */
  mediaNat?: boolean;
  /** SDES-SRTP policy for the trunk's calls (absent: 'off'). */
  srtp?: SrtpPolicy;
}

export type SipTrunkTransport = 'udp' | 'tcp' | 'tls';

/** The URI of a trunk's host for requests to it: `sip:<user@>address[;transport=…]`. */
export function trunkUri(spec: Pick<TrunkSpec, 'address' | 'transport'>, user?: string): string {
  const t = spec.transport ? `;transport=${spec.transport}` : '';
  return `sip:${user === undefined ? '' : `${user}@`}${uriHost(spec.address)}${t}`;
}

/**
 * A trunk's address as a URI host: an IPv6 address in brackets (it is stored without them), else
 * as stored (a name or IPv4 address, possibly with a port where tests give one).
 */
export function uriHost(address: string): string {
  return net.isIP(address) === 6 ? `[${address}]` : address;
}

/** A trunk's address as a URI host without any port (for From and AOR domains). */
export function uriHostWithoutPort(address: string): string {
  return net.isIP(address) === 6 ? `[${address}]` : address.replace(/:\d+$/, '');
}

export interface TrunkIds {
  inboundTrunkId: string;
  outboundTrunkId: string;
}

export interface ProvisionedTrunk extends TrunkIds {
  spec: TrunkSpec;
}

export interface TrunkRegistry {
  /** Provisions the inbound and outbound trunk; `reuse` keeps stored ids when restoring. */
  provision(trunk: TrunkSpec, reuse?: TrunkIds): Promise<TrunkIds>;
  /** Records the row id once the trunk is saved. */
  attach(inboundTrunkId: string, sipTrunkId: number): void;
  /** Removes both trunks; unknown ids are ignored (deprovisioning is idempotent). */
  deprovision(ids: TrunkIds): Promise<void>;
  /** The trunk whose number (or extension) is `number`; numbers compare by digits. */
  findInboundByNumber(number: string): ProvisionedTrunk | undefined;
  /** IP-authorized trunks that allow `ip` as a source. */
  findInboundBySource(ip: string): ProvisionedTrunk[];
  list(): ProvisionedTrunk[];
}

interface Entry extends ProvisionedTrunk {
  allows: (ip: string) => boolean;
}

export class InMemoryTrunkRegistry implements TrunkRegistry {
  private readonly byInbound = new Map<string, Entry>();

  async provision(trunk: TrunkSpec, reuse?: TrunkIds): Promise<TrunkIds> {
    const ids = reuse ?? {
      inboundTrunkId: `ST_in_${crypto.randomBytes(9).toString('base64url')}`,
      outboundTrunkId: `ST_out_${crypto.randomBytes(9).toString('base64url')}`,
    };
    const spec = { ...trunk, allowedIps: trunk.allowedIps ? [...trunk.allowedIps] : null };
    const allows = spec.authType === 'ip' ? ipMatcher(spec.allowedIps ?? []) : () => false;
    this.byInbound.set(ids.inboundTrunkId, { ...ids, spec, allows });
    return { ...ids };
  }

  attach(inboundTrunkId: string, sipTrunkId: number): void {
    const entry = this.byInbound.get(inboundTrunkId);
    if (entry) entry.spec.id = sipTrunkId;
  }

  async deprovision(ids: TrunkIds): Promise<void> {
    this.byInbound.delete(ids.inboundTrunkId);
  }

  findInboundByNumber(number: string): ProvisionedTrunk | undefined {
    const wanted = digitsOf(number);
    for (const entry of this.byInbound.values()) {
      const own = entry.spec.phoneNumber;
      const match = entry.spec.trunkType === 'number' ? wanted !== '' && digitsOf(own) === wanted : own === number;
      if (match) return view(entry);
    }
    return undefined;
  }

  findInboundBySource(ip: string): ProvisionedTrunk[] {
    return [...this.byInbound.values()].filter((e) => e.allows(ip)).map(view);
  }

  list(): ProvisionedTrunk[] {
    return [...this.byInbound.values()].map(view);
  }
}

function view(entry: Entry): ProvisionedTrunk {
  return { inboundTrunkId: entry.inboundTrunkId, outboundTrunkId: entry.outboundTrunkId, spec: entry.spec };
}

/** Where restoreTrunks reads stored trunks from (the sip-trunks repository). */
export interface StoredTrunkSource {
  /** `spec()` opens the sealed password and may throw for that one trunk. */
  allForProvisioning(): Promise<Array<{ sipTrunkId: number; ids: TrunkIds; spec(): TrunkSpec }>>;
}

/**
 * Re-provisions every stored trunk on engine start. One broken trunk (say, a secret sealed under
 * a lost key) is logged and skipped so it cannot keep the others from serving calls.
 */
export async function restoreTrunks(source: StoredTrunkSource, registry: TrunkRegistry, logger: Logger): Promise<number> {
  let restored = 0;
  for (const stored of await source.allForProvisioning()) {
    try {
      await registry.provision(stored.spec(), stored.ids);
      restored++;
    } catch (err) {
      logger.error({ sipTrunkId: stored.sipTrunkId, err: (err as Error).message }, 'could not re-provision SIP trunk');
    }
  }
  return restored;
}
