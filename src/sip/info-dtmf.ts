/**
 * DTMF in SIP INFO, the way trunks send it without an Info Package (RFC 6086 "legacy" INFO):
 * `application/dtmf-relay` (`Signal=5` and `Duration=160`, one per line) and `application/dtmf`
 * (the key alone, or its event code: 10 for `*`, 11 for `#`). Pure: text in, key out.
 */
import { digitToEvent, eventToDigit } from '../media/dtmf.ts';

export const DTMF_RELAY = 'application/dtmf-relay';
export const DTMF_PLAIN = 'application/dtmf';
export const INFO_DTMF_TYPES: readonly string[] = [DTMF_RELAY, DTMF_PLAIN];

/** Duration when the INFO names none (a typical key press). */
const DEFAULT_DURATION_MS = 100;
const MAX_DURATION_MS = 10_000;

export interface InfoDtmf {
  digit: string;
  durationMs: number;
}

/** A key as written in an INFO body: `5`, `*`, `#`, `A`…`D`, or an event code 0–15. */
function keyOf(text: string): string | undefined {
  const t = text.trim();
  if (/^\d{1,2}$/.test(t)) {
    const digit = eventToDigit(Number(t));
    return digit === 'flash' ? undefined : digit;
  }
  return t.length === 1 && digitToEvent(t) !== undefined ? t.toUpperCase() : undefined;
}

/**
 * The key an INFO carries, for the two DTMF body types; undefined when the body says none
 * (malformed, hook flash, empty). `mediaType` is the Content-Type's type/subtype, lower case.
 */
export function parseInfoDtmf(mediaType: string, body: string): InfoDtmf | undefined {
  if (body.length > 1024) return undefined;
  if (mediaType === DTMF_PLAIN) {
    const digit = keyOf(body);
    return digit === undefined ? undefined : { digit, durationMs: DEFAULT_DURATION_MS };
  }
  if (mediaType !== DTMF_RELAY) return undefined;
  let digit: string | undefined;
  let durationMs = DEFAULT_DURATION_MS;
  for (const line of body.split(/\r?\n/)) {
    const m = /^\s*([A-Za-z-]+)\s*[=:]\s*(.*?)\s*$/.exec(line);
    if (!m) continue;
    const name = m[1]!.toLowerCase();
    if (name === 'signal') digit = keyOf(m[2]!);
    else if (name === 'duration' && /^\d{1,6}$/.test(m[2]!)) durationMs = Math.min(Number(m[2]), MAX_DURATION_MS);
  }
  return digit === undefined ? undefined : { digit, durationMs };
}

/** The body of an `application/dtmf-relay` INFO for one key. */
export function dtmfRelayBody(digit: string, durationMs: number): string {
  return `Signal=${digit}\r\nDuration=${Math.round(durationMs)}\r\n`;
}
