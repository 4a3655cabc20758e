/**
 * name-addr / addr-spec with header parameters (RFC 3261 20.10, 25.1), the shape of To, From,
 * Contact, Route, Record-Route, Reply-To, Refer-To and friends.
 */
import { formatParams, isToken, isWs, parseParams, quote, Scanner, trimWs, unquote } from './scan.ts';
import { parseUri, type Uri } from './uri.ts';

export interface NameAddr {
  /** Unquoted (quoted-pairs resolved) or the token words as written; absent when none. */
  displayName?: string;
  /** The URI exactly as written, without angle brackets: forward this, don't re-format it. */
  uri: string;
  parsedUri: Uri;
  /** Header parameters (tag, expires, q, ...): names lowercased, values as written. */
  params: Map<string, string | null>;
}

/** A display name of unquoted tokens (the `caller<sip:...>` form without LWS is tolerated). */
function tokenDisplayName(text: string): string | undefined {
  const words = text.split(/[ \t]+/).filter((w) => w !== '');
  return words.every(isToken) ? words.join(' ') : undefined;
}

export function parseNameAddr(value: string): NameAddr | undefined {
  const sc = new Scanner(trimWs(value));
  let displayName: string | undefined;
  let uriText: string;

  if (sc.peek() === '"') {
    const raw = sc.quotedRaw();
    if (raw === undefined) return undefined;
    displayName = unquote(raw);
    sc.skipWs();
    if (sc.peek() !== '<') return undefined;
  } else {
    const lt = sc.text.indexOf('<');
    const q = sc.text.indexOf('"');
    // A quote before '<' can only belong to a parameter of an addr-spec (`;x="<...>"`).
    if (lt !== -1 && (q === -1 || q > lt)) {
      const dn = tokenDisplayName(sc.text.slice(0, lt));
      if (dn === undefined) return undefined;
      if (dn !== '') displayName = dn;
      sc.pos = lt;
    }
  }

  if (sc.peek() === '<') {
    const gt = sc.text.indexOf('>', sc.pos);
    if (gt === -1) return undefined;
    uriText = sc.text.slice(sc.pos + 1, gt);
    sc.pos = gt + 1;
  } else {
    // addr-spec: the URI ends at the first ';' or whitespace, and anything after is a header
    // parameter. A URI carrying '?' or ',' must have been bracketed (RFC 3261 section 20).
    uriText = sc.run((c) => c !== ';' && !isWs(c));
    if (uriText.includes('?') || uriText.includes(',')) return undefined;
  }
  if (uriText === '' || /\s/.test(uriText)) return undefined;
  const parsedUri = parseUri(uriText);
  if (!parsedUri) return undefined;

  const params = parseParams(sc);
  if (!params) return undefined;
  sc.skipWs();
  if (!sc.done) return undefined;

  const out: NameAddr = { uri: uriText, parsedUri, params };
  if (displayName !== undefined) out.displayName = displayName;
  return out;
}

/** Always the bracketed form, which is valid whatever the URI holds. */
export function formatNameAddr(na: Pick<NameAddr, 'displayName' | 'uri' | 'params'>): string {
  const dn = na.displayName !== undefined ? `${quote(na.displayName)} ` : '';
  return `${dn}<${na.uri}>${formatParams(na.params)}`;
}

export function isWildcardContact(value: string): boolean {
  return trimWs(value) === '*';
}

/** One header parameter of a name-addr value; undefined if absent, unparsable, or valueless. */
export function nameAddrParam(value: string, name: string): string | undefined {
  return parseNameAddr(value)?.params.get(name.toLowerCase()) ?? undefined;
}

/** The `tag` of a To or From value. */
export function tagOf(value: string): string | undefined {
  return nameAddrParam(value, 'tag');
}
