/**
 * Phone numbers as trunks write them. `sip_calling_format` says how a trunk spells numbers on the
 * wire: `+e164` (+4420…), `e164` (4420…) or `national` (020…). Inbound we turn what arrives back
 * into E.164 to find the number; outbound we shape the E.164 target the way the trunk wants it.
 */
import type { CallingFormat } from '../sip/trunk-registry.ts';
import { digitsOf } from '../util/phone.ts';
import { parseNameAddr } from '../sip/name-addr.ts';
import { isSipUri, isTelUri, parseUri } from '../sip/uri.ts';

/**
 * Country → calling code, for the national format. Only countries trunks are expected from;
 * an unknown country falls back to treating national numbers as bare digits.
 */
const CALLING_CODE: Record<string, string> = {
  US: '1', CA: '1', GB: '44', IE: '353', DE: '49', FR: '33', ES: '34', IT: '39', NL: '31', BE: '32', CH: '41',
  AT: '43', PT: '351', SE: '46', NO: '47', DK: '45', FI: '358', PL: '48', CZ: '420', GR: '30', RO: '40',
  HU: '36', AU: '61', NZ: '64', IN: '91', BR: '55', MX: '52', AR: '54', ZA: '27', IL: '972', AE: '971',
  SG: '65', JP: '81', KR: '82', CN: '86', HK: '852', TR: '90', RU: '7', UA: '380', NG: '234', KE: '254',
  EG: '20', MA: '212', PH: '63', ID: '62', MY: '60', TH: '66', VN: '84', CO: '57', CL: '56', PE: '51',
};

/**
 * Countries whose national dialling keeps no trunk prefix (NANP) or keeps the leading 0 inside
 * the subscriber number (Italy): for these the national form is the E.164 digits minus the code.
 */
const NO_TRUNK_PREFIX = new Set(['1', '39']);

export function callingCode(country: string): string | undefined {
  return CALLING_CODE[country.toUpperCase()];
}

/** The E.164 form (with +) of a number as a trunk sent it; undefined for extensions/garbage. */
export function toE164(raw: string, format: CallingFormat, country: string): string | undefined {
  const trimmed = raw.trim();
  const digits = digitsOf(trimmed);
  if (digits.length < 3) return undefined;
  if (trimmed.startsWith('+')) return `+${digits}`;
  if (digits.startsWith('00')) return `+${digits.slice(2)}`;
  if (format !== 'national') return `+${digits}`;
  const code = callingCode(country);
  if (code === undefined) return `+${digits}`;
  if (NO_TRUNK_PREFIX.has(code)) return digits.startsWith(code) && digits.length > 10 ? `+${digits}` : `+${code}${digits}`;
  return `+${code}${digits.replace(/^0/, '')}`;
}

/** The E.164 target shaped for the trunk: what goes in the Request-URI and To user part. */
export function formatForTrunk(e164: string, format: CallingFormat, country: string): string {
  const digits = digitsOf(e164);
  if (format === '+e164') return `+${digits}`;
  if (format === 'e164') return digits;
  const code = callingCode(country);
  if (code === undefined || !digits.startsWith(code)) return `+${digits}`; // abroad: keep it international
  const rest = digits.slice(code.length);
  return NO_TRUNK_PREFIX.has(code) ? rest : `0${rest}`;
}

/** User part of a SIP URI or name-addr (`<sip:+4420@host>;tag=x` → `+4420`); tel: URIs too. */
export function userOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const uri = parseNameAddr(value)?.parsedUri ?? parseUri(value);
  if (!uri) return undefined;
  if (isSipUri(uri)) return uri.user === '' ? undefined : uri.user;
  if (isTelUri(uri)) return uri.number;
  return undefined;
}

/** Digits-only comparison, as trunks vary on the `+`. */
export function sameNumber(a: string, b: string): boolean {
  const da = digitsOf(a);
  return da !== '' && da === digitsOf(b);
}
