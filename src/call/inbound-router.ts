/**
 * Which trunk an INVITE belongs to, and whether it may become a call: pure decisions over facts
 * the SIP server gathered, so every branch is a table-driven unit test.
 *
 * Trust comes first, numbers second. A source no trunk trusts learns nothing about which numbers
 * exist: it gets 403 whatever it dials, except for numbers of `auth` trunks, which it may
 * authenticate for (401 with the trunk's realm) — that is what digest trunks are for.
 *
 * `auth` trunks register with their provider; the provider then sends calls to the Contact we
 * registered, whose user part is the trunk's inbound id (see registration-manager.ts). Such calls
 * are trusted when they come from the registrar's address; from anywhere else they must answer a
 * digest challenge with the trunk's own username and password.
 */
import type { ProvisionedTrunk } from '../sip/trunk-registry.ts';
import { sameNumber, toE164 } from './numbers.ts';

export type DiagnosticMode = 'echo' | 'tone';

/** User parts that reach the built-in diagnostics instead of an assistant. */
const DIAGNOSTICS: Record<string, DiagnosticMode> = { echo: 'echo', '*43': 'echo', tone: 'tone', '*44': 'tone' };

export function diagnosticMode(user: string | undefined): DiagnosticMode | undefined {
  return user === undefined ? undefined : DIAGNOSTICS[user.toLowerCase()];
}

export interface InviteFacts {
  sourceIp: string;
  /** Request-URI user part. */
  requestUser: string | undefined;
  toUser: string | undefined;
  /** The transport the INVITE came over (absent: not known, taken as plain). */
  transport?: 'udp' | 'tcp' | 'tls';
}

export interface TrunkView {
  trunks: readonly ProvisionedTrunk[];
  /** Inbound ids of the trunks that trust this source (IP allow-list or their registrar). */
  trusting: ReadonlySet<string>;
}

export type RouteDecision =
  | { kind: 'reject'; status: 403 | 404; reason: string; strike: boolean }
  | { kind: 'authenticate'; trunk: ProvisionedTrunk; diagnostic?: DiagnosticMode }
  | { kind: 'accept'; trunk: ProvisionedTrunk; diagnostic?: DiagnosticMode };

const FORBIDDEN = { kind: 'reject', status: 403, reason: 'Forbidden', strike: true } as const;
const TLS_REQUIRED = { kind: 'reject', status: 403, reason: 'TLS Required', strike: false } as const;

/** Does `dialed`, as this trunk spells numbers, name the trunk's own number or extension? */
export function trunkOwns(trunk: ProvisionedTrunk, dialed: string): boolean {
  const spec = trunk.spec;
  if (spec.trunkType === 'extension') return dialed === spec.phoneNumber;
  const e164 = toE164(dialed, spec.callingFormat, spec.countryCode);
  return e164 !== undefined && sameNumber(e164, spec.phoneNumber);
}

export function routeInvite(facts: InviteFacts, view: TrunkView): RouteDecision {
  const trusted = (t: ProvisionedTrunk) => view.trusting.has(t.inboundTrunkId);
  const finish = (trunk: ProvisionedTrunk, diagnostic: DiagnosticMode | undefined): RouteDecision => {
    const extra = diagnostic ? { diagnostic } : {};
    // A trunk that requires TLS takes no call that came in the clear, trusted source or not.
    if (trunk.spec.transport === 'tls' && facts.transport !== 'tls') return TLS_REQUIRED;
    if (trusted(trunk)) return { kind: 'accept', trunk, ...extra };
    if (trunk.spec.authType === 'auth') return { kind: 'authenticate', trunk, ...extra };
    return FORBIDDEN;
  };

  // A call on one of our registrations: the Request-URI is the Contact we registered.
  const onRegistration = view.trunks.find((t) => t.spec.authType === 'auth' && t.inboundTrunkId === facts.requestUser);
  if (onRegistration) return finish(onRegistration, diagnosticMode(facts.toUser));

  const diagnostic = diagnosticMode(facts.requestUser) ?? diagnosticMode(facts.toUser);
  if (diagnostic) {
    // Diagnostics belong to whoever trusts the source; strangers must not get a free echo.
    const owner = view.trunks.find(trusted);
    if (owner?.spec.transport === 'tls' && facts.transport !== 'tls') return TLS_REQUIRED;
    return owner ? { kind: 'accept', trunk: owner, diagnostic } : FORBIDDEN;
  }

  for (const dialed of [facts.requestUser, facts.toUser]) {
    if (dialed === undefined) continue;
    const owners = view.trunks.filter((t) => trunkOwns(t, dialed));
    // Two accounts may route the same number through different carriers: the one trusting
    // this source wins.
    const owner = owners.find(trusted) ?? owners[0];
    if (owner) return finish(owner, undefined);
  }
  if (view.trunks.some(trusted)) return { kind: 'reject', status: 404, reason: 'Not Found', strike: false };
  return FORBIDDEN;
}

export interface AdmissionFacts {
  diagnostic: boolean;
  phoneNumberId: number | undefined;
  assistantId: number | undefined;
  balanceMicros: number;
  minBalanceMicros: number;
  activeForAccount: number;
  activeForTrunk: number;
  maxPerAccount: number;
  maxPerTrunk: number;
}

export type Admission =
  | { ok: true }
  | { ok: false; status: number; reason: string; cause: string; reasonHeader?: string };

/** After the trunk is settled: number record, assistant, capacity and money, in that order. */
export function admit(f: AdmissionFacts): Admission {
  if (!f.diagnostic) {
    if (f.phoneNumberId === undefined) return { ok: false, status: 404, reason: 'Not Found', cause: 'unknown-number' };
    if (f.assistantId === undefined) {
      return { ok: false, status: 480, reason: 'Temporarily Unavailable', cause: 'no-inbound-assistant' };
    }
  }
  if (f.activeForAccount >= f.maxPerAccount) return capRefusal('account');
  if (f.activeForTrunk >= f.maxPerTrunk) return capRefusal('trunk');
  if (!f.diagnostic && f.balanceMicros < f.minBalanceMicros) {
    return {
      ok: false,
      status: 402,
      reason: 'Payment Required',
      cause: 'insufficient-balance',
      reasonHeader: 'SIP;cause=402;text="Insufficient balance"',
    };
  }
  return { ok: true };
}

/** The refusal of a call over a live-call cap (the same whether this node or the service counted). */
export function capRefusal(cap: 'account' | 'trunk'): Extract<Admission, { ok: false }> {
  return cap === 'account' ? busy('account-call-limit', 'account concurrent call limit reached') : busy('trunk-call-limit', 'trunk concurrent call limit reached');
}

function busy(cause: string, text: string): Extract<Admission, { ok: false }> {
  return { ok: false, status: 486, reason: 'Busy Here', cause, reasonHeader: `SIP;cause=486;text="${text}"` };
}
