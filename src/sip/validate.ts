/**
 * The checks a UAS (RFC 3261 8.2) or proxy (16.3) runs on a well-formed request before
 * processing it, as a pure function returning the error response to send, if any. The parser
 * has already rejected what is malformed; these are the "understood but not acceptable" cases.
 */
import { header, headers, type SipRequest } from './message.ts';
import { KNOWN_METHODS } from './methods.ts';
import { parseNameAddr } from './name-addr.ts';
import { mediaType, parseMaxForwards } from './header-values.ts';
import { trimWs } from './scan.ts';
import { parseUri } from './uri.ts';

export interface CheckOptions {
  /** `uas` (default) or `proxy`: they differ on Max-Forwards, Require and body checks. */
  role?: 'uas' | 'proxy';
  /** Methods implemented; others get 501 (RFC 3261 8.2.1). Default: KNOWN_METHODS. */
  methods?: readonly string[];
  /** Request-URI schemes served; others get 416 (8.2.2.1, 16.3 step 2). Default sip, sips. */
  schemes?: readonly string[];
  /** Option-tags understood; anything else in Require (UAS) / Proxy-Require (proxy) gets 420. */
  extensions?: readonly string[];
  /** Body types a UAS processes; others get 415 (8.2.3). Default application/sdp. */
  contentTypes?: readonly string[];
  /** Body types the UAS would answer with; if Accept excludes all of them, 406 (RFC 4475 sdp01). */
  answerTypes?: readonly string[];
}

export type CheckResult =
  | { ok: true }
  | {
      ok: false;
      status: number;
      reason: string;
      /** 420: the option-tags for the Unsupported header. */
      unsupported?: string[];
      /** 415/406: what to list in Accept. 501/405: what to list in Allow. */
      accept?: string[];
      allow?: string[];
    };

function fail(status: number, reason: string, extra: Partial<Extract<CheckResult, { ok: false }>> = {}): CheckResult {
  return { ok: false, status, reason, ...extra };
}

/**
 * In order, as RFC 3261 8.2 / 16.3 process them:
 * - 505 when the version is not SIP/2.0 (for messages built in code; the parser rejects too);
 * - proxy: 483 when Max-Forwards is 0 (RFC 4475 zeromf). A missing Max-Forwards is not an error:
 *   a proxy inserts 70 (16.6 step 3) and RFC 2543 peers omit it (inv2543). A UAS processes
 *   Max-Forwards 0 normally;
 * - UAS: 501 for an unknown method, with Allow (RFC 4475 intmeth, esc02);
 * - 416 for an unsupported Request-URI scheme (unkscm, novelsc);
 * - REGISTER at a UAS: 400 unless To is a SIP/SIPS address of record (unksm2);
 * - 420 with the unsupported option-tags from Require (UAS) or Proxy-Require (proxy) (bext01);
 * - UAS: 415 for a body whose Content-Type it doesn't process, with Accept (invut);
 * - UAS, INVITE/OPTIONS: 406 when Accept rules out every body type it would answer with (sdp01).
 * ACK is never answered, so it always passes.
 */
export function checkRequest(msg: SipRequest, opts: CheckOptions = {}): CheckResult {
  if (msg.method === 'ACK') return { ok: true };
  const role = opts.role ?? 'uas';
  if (msg.version.toUpperCase() !== 'SIP/2.0') return fail(505, 'Version Not Supported');

  const mf = header(msg, 'max-forwards');
  if (role === 'proxy' && mf !== undefined && parseMaxForwards(mf) === 0) return fail(483, 'Too Many Hops');

  const methods = opts.methods ?? KNOWN_METHODS;
  if (role === 'uas' && !methods.includes(msg.method)) return fail(501, 'Not Implemented', { allow: [...methods] });

  const scheme = parseUri(msg.uri)?.scheme;
  if (scheme === undefined || !(opts.schemes ?? ['sip', 'sips']).includes(scheme)) {
    return fail(416, 'Unsupported URI Scheme');
  }

  if (role === 'uas' && msg.method === 'REGISTER') {
    const to = header(msg, 'to');
    const toScheme = to === undefined ? undefined : parseNameAddr(to)?.parsedUri.scheme;
    if (toScheme !== 'sip' && toScheme !== 'sips') return fail(400, 'Invalid AOR in To');
  }

  const known = new Set((opts.extensions ?? []).map((t) => t.toLowerCase()));
  const required = headers(msg, role === 'proxy' ? 'proxy-require' : 'require');
  const unsupported = required.filter((t) => !known.has(t.toLowerCase()));
  if (unsupported.length > 0) return fail(420, 'Bad Extension', { unsupported });
  if (role === 'proxy') return { ok: true };

  const contentTypes = opts.contentTypes ?? ['application/sdp'];
  const ct = header(msg, 'content-type');
  if (msg.body.length > 0 && (ct === undefined || !contentTypes.includes(mediaType(ct) ?? ''))) {
    return fail(415, 'Unsupported Media Type', { accept: [...contentTypes] });
  }

  const accepts = headers(msg, 'accept');
  const answerTypes = opts.answerTypes ?? ['application/sdp'];
  if ((msg.method === 'INVITE' || msg.method === 'OPTIONS') && accepts.length > 0 && !answerTypes.some((t) => accepted(t, accepts))) {
    return fail(406, 'Not Acceptable', { accept: [...answerTypes] });
  }
  return { ok: true };
}

/** Whether a media type is matched by an Accept list (`*\/*`, `type/*`, exact; q=0 excludes). */
function accepted(type: string, accepts: readonly string[]): boolean {
  const [major] = type.split('/');
  return accepts.some((a) => {
    const range = trimWs(a.split(';')[0]!).toLowerCase();
    if (/;\s*q\s*=\s*0(\.0*)?\s*(;|$)/i.test(a)) return false;
    return range === '*/*' || range === `${major}/*` || range === type;
  });
}
