/**
 * Which caller ID a second leg (a bridged blind transfer, a warm transfer's supervisor) presents,
 * and the SIP headers that carry it.
 *
 * The rule for call_transfer's bridged leg (REFER refused). The person it reaches expects to see
 * who is calling, as with any forwarded call, so Switchboard passes the customer's number through
 * ("A-party passthrough") when it can:
 * - the trunk is a `number` trunk (a carrier trunk; an `extension` trunk is a PBX login whose own
 *   extension is the only identity it may present), and
 * - the customer's number is a real E.164 number (not anonymous, not an extension, not the
 *   trunk's own number).
 * Then From and P-Asserted-Identity carry the customer's number, and Diversion (RFC 5806) names
 * the trunk's number as the one forwarding the call: carriers check Diversion to accept a From
 * they did not assign to the trunk. Otherwise From and P-Asserted-Identity carry the trunk's own
 * number, without Diversion.
 * A carrier that still refuses passthrough answers the INVITE at once (403, or an identity error:
 * 428, 433, 438): the leg is dialled again, once, with the trunk's own number
 * (`dialWithCallerId`). The call record keeps which one went out.
 *
 * warm_call_transfer's `caller_id_mode` picks explicitly: `outbound_number` (default) the dialling
 * trunk's number; `customer_number` the same passthrough as above (with the same fallback);
 * `custom` the configured `custom_caller_id` as is (the operator vouches for it).
 */
import type { TrunkSpec } from '../../sip/trunk-registry.ts';
import type { CallerIdMode } from '../tools/control.ts';
import { sameNumber } from '../numbers.ts';

export interface CallerId {
  /** What went out: the customer's number passed through, the trunk's own, or a configured one. */
  kind: 'customer' | 'trunk' | 'custom';
  /** E.164 (or extension) for From and P-Asserted-Identity. */
  number: string;
  /** The forwarding number for Diversion (passthrough only). */
  diversion?: string;
}

/** INVITE answers that mean "not with that caller ID": retried once with the trunk's number. */
export const CALLER_ID_REFUSALS: ReadonlySet<number> = new Set([403, 428, 433, 438]);

const E164 = /^\+[1-9]\d{6,14}$/;

/** The trunk's own identity. */
export function trunkCallerId(trunk: Pick<TrunkSpec, 'phoneNumber'>): CallerId {
  return { kind: 'trunk', number: trunk.phoneNumber };
}

/** The customer's number passed through with Diversion, when trunk and number allow it. */
export function passthroughCallerId(trunk: Pick<TrunkSpec, 'trunkType' | 'phoneNumber'>, customer: string | null | undefined): CallerId | undefined {
  if (trunk.trunkType !== 'number' || !customer || !E164.test(customer)) return undefined;
  if (sameNumber(customer, trunk.phoneNumber)) return undefined;
  return { kind: 'customer', number: customer, diversion: trunk.phoneNumber };
}

/** call_transfer's bridged leg. */
export function transferCallerId(trunk: Pick<TrunkSpec, 'trunkType' | 'phoneNumber'>, customer: string | null | undefined): CallerId {
  return passthroughCallerId(trunk, customer) ?? trunkCallerId(trunk);
}

/** warm_call_transfer's supervisor leg, per `caller_id_mode`. */
export function warmCallerId(
  mode: CallerIdMode,
  trunk: Pick<TrunkSpec, 'trunkType' | 'phoneNumber'>,
  customer: string | null | undefined,
  custom: string | null | undefined,
): CallerId {
  if (mode === 'customer_number') return transferCallerId(trunk, customer);
  if (mode === 'custom' && custom) return { kind: 'custom', number: custom };
  return trunkCallerId(trunk);
}
