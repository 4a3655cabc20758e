import { z } from 'zod';

/**
 * Value checks shared by the assistant fields and the built-in tools.
 */

let zones: Set<string> | undefined;

/** The IANA names this runtime knows (canonical list), loaded once. */
function knownZones(): Set<string> {
  zones ??= new Set(Intl.supportedValuesOf('timeZone'));
  return zones;
}

/**
 * A region/city IANA zone (`Europe/Paris`, `America/Argentina/Buenos_Aires`). Bare `UTC` or
 * offsets are not region/city; aliases the canonical list omits (`Asia/Calcutta`) are still real
 * IANA names, so the runtime's own parser gets the last word for those.
 */
export function isRegionCityZone(name: string): boolean {
  if (!/^[A-Za-z]+(\/[A-Za-z0-9_+-]+)+$/.test(name)) return false;
  if (knownZones().has(name)) return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

export const timezone = z.string().max(64).refine(isRegionCityZone, {
  message: 'The timezone must be a valid IANA time zone in region/city form, e.g. Europe/Paris.',
});

/** Webhook targets: absolute http(s) URLs only. */
export const httpUrl = z.url({ protocol: /^https?$/, hostname: z.regexes.hostname }).max(2000);
