/**
 * SIP, SIPS (RFC 3261 19.1), TEL (RFC 3966) and other absolute URIs.
 * Parsed components are unescaped exactly once: `v%61lue%25%34%31` becomes `value%41`, never
 * `valueA`. Parameter names are lowercased because they compare case-insensitively.
 */
import { isAlnum } from './scan.ts';

export interface SipUri {
  scheme: 'sip' | 'sips';
  user?: string;
  password?: string;
  /** As written; IPv6 references keep their brackets (`[2001:db8::1]`). */
  host: string;
  port?: number;
  params: Map<string, string | null>;
  headers: Map<string, string>;
}

export interface TelUri {
  scheme: 'tel';
  number: string;
  params: Map<string, string | null>;
}

/** Any other absolute URI (`isbn:`, `http:`, `soap.beep:`); only the scheme is interpreted. */
export interface OtherUri {
  scheme: string;
  opaque: string;
}

export type Uri = SipUri | TelUri | OtherUri;

const MARK = new Set("-_.!~*'()");
const USER_EXTRA = new Set('&=+$,;?/');
const PASSWORD_EXTRA = new Set('&=+$,');
const PARAM_EXTRA = new Set('[]/:&+$');
const HEADER_EXTRA = new Set('[]/?:+$');

function isUnreserved(c: string): boolean {
  return isAlnum(c) || MARK.has(c);
}

function isHex(c: string | undefined): boolean {
  return c !== undefined && /^[0-9a-fA-F]$/.test(c);
}

/** Checks that `s` uses only allowed characters or valid `%HH` escapes, then unescapes it. */
function unescapeChecked(s: string, extra: ReadonlySet<string>): string | undefined {
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '%') {
      if (!isHex(s[i + 1]) || !isHex(s[i + 2])) return undefined;
      bytes.push(parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (isUnreserved(c) || extra.has(c)) {
      bytes.push(c.charCodeAt(0));
    } else {
      return undefined;
    }
  }
  return decodeBytes(Buffer.from(bytes));
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** UTF-8 when the escapes spell valid UTF-8 (the RFC's intent), otherwise one char per byte. */
function decodeBytes(buf: Buffer): string {
  try {
    return utf8.decode(buf);
  } catch {
    return buf.toString('latin1');
  }
}

function escape(s: string, extra: ReadonlySet<string>): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += byte < 0x80 && (isUnreserved(c) || extra.has(c)) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const SCHEME_RE = /^[A-Za-z][A-Za-z0-9+.-]*$/;

export function isValidHost(host: string): boolean {
  if (host.startsWith('[')) return /^\[[0-9a-fA-F:.]+\]$/.test(host) && host.includes(':');
  // `_` is outside RFC 3261's hostname but common in the field (SRV-style names); tolerated.
  return /^[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_.])?$/.test(host);
}

function parseParamList(text: string, extra: ReadonlySet<string>): Map<string, string | null> | undefined {
  const params = new Map<string, string | null>();
  if (text === '') return params;
  for (const part of text.split(';')) {
    const eq = part.indexOf('=');
    const rawName = eq === -1 ? part : part.slice(0, eq);
    const name = unescapeChecked(rawName, extra);
    if (name === undefined || name === '') return undefined;
    let value: string | null = null;
    if (eq !== -1) {
      const v = unescapeChecked(part.slice(eq + 1), extra);
      if (v === undefined || v === '') return undefined;
      value = v;
    }
    params.set(name.toLowerCase(), value);
  }
  return params;
}

function parseHeaderList(text: string): Map<string, string> | undefined {
  const headers = new Map<string, string>();
  for (const part of text.split('&')) {
    const eq = part.indexOf('=');
    if (eq <= 0) return undefined;
    const name = unescapeChecked(part.slice(0, eq), HEADER_EXTRA);
    const value = unescapeChecked(part.slice(eq + 1), HEADER_EXTRA);
    if (name === undefined || value === undefined) return undefined;
    headers.set(name, value);
  }
  return headers;
}

export function parseSipUri(text: string): SipUri | undefined {
  const colon = text.indexOf(':');
  const scheme = text.slice(0, colon).toLowerCase();
  if (colon === -1 || (scheme !== 'sip' && scheme !== 'sips')) return undefined;
  let rest = text.slice(colon + 1);
  const uri: SipUri = { scheme, host: '', params: new Map(), headers: new Map() };

  // A valid SIP URI holds at most one unescaped '@', the end of userinfo; the user part may
  // contain ';' and '?', so userinfo must be cut off before looking for params or headers.
  const at = rest.indexOf('@');
  if (at !== -1) {
    const userinfo = rest.slice(0, at);
    rest = rest.slice(at + 1);
    const pc = userinfo.indexOf(':');
    const user = unescapeChecked(pc === -1 ? userinfo : userinfo.slice(0, pc), USER_EXTRA);
    if (user === undefined || user === '') return undefined;
    uri.user = user;
    if (pc !== -1) {
      const password = unescapeChecked(userinfo.slice(pc + 1), PASSWORD_EXTRA);
      if (password === undefined) return undefined;
      uri.password = password;
    }
  }

  const q = rest.indexOf('?');
  if (q !== -1) {
    const headers = parseHeaderList(rest.slice(q + 1));
    if (!headers) return undefined;
    uri.headers = headers;
    rest = rest.slice(0, q);
  }
  const semi = rest.indexOf(';');
  if (semi !== -1) {
    const params = parseParamList(rest.slice(semi + 1), PARAM_EXTRA);
    if (!params) return undefined;
    uri.params = params;
    rest = rest.slice(0, semi);
  }

  let host = rest;
  let portText: string | undefined;
  if (rest.startsWith('[')) {
    const close = rest.indexOf(']');
    if (close === -1) return undefined;
    host = rest.slice(0, close + 1);
    const after = rest.slice(close + 1);
    if (after !== '') {
      if (!after.startsWith(':')) return undefined;
      portText = after.slice(1);
    }
  } else {
    const pc = rest.indexOf(':');
    if (pc !== -1) {
      host = rest.slice(0, pc);
      portText = rest.slice(pc + 1);
    }
  }
  if (!isValidHost(host)) return undefined;
  uri.host = host;
  if (portText !== undefined) {
    if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) return undefined;
    uri.port = Number(portText);
  }
  return uri;
}

function parseTelUri(text: string): TelUri | undefined {
  const body = text.slice(4);
  const semi = body.indexOf(';');
  const number = semi === -1 ? body : body.slice(0, semi);
  if (!/^\+?[0-9A-Fa-f*#().-]+$/.test(number) || !/[0-9A-Fa-f*#]/.test(number)) return undefined;
  const params = parseParamList(semi === -1 ? '' : body.slice(semi + 1), PARAM_EXTRA);
  return params ? { scheme: 'tel', number, params } : undefined;
}

/**
 * Any absolute URI. SIP/SIPS/TEL must be well-formed; other schemes only need a valid scheme
 * and an opaque part free of whitespace, quotes and angle brackets.
 */
export function parseUri(text: string): Uri | undefined {
  const colon = text.indexOf(':');
  if (colon <= 0) return undefined;
  const scheme = text.slice(0, colon).toLowerCase();
  if (!SCHEME_RE.test(scheme)) return undefined;
  if (scheme === 'sip' || scheme === 'sips') return parseSipUri(text);
  if (scheme === 'tel') return parseTelUri(text);
  const opaque = text.slice(colon + 1);
  if (opaque === '' || /[\s<>"\x00-\x1f\x7f]/.test(opaque)) return undefined;
  return { scheme, opaque };
}

export function isSipUri(uri: Uri): uri is SipUri {
  return uri.scheme === 'sip' || uri.scheme === 'sips';
}

export function isTelUri(uri: Uri): uri is TelUri {
  return uri.scheme === 'tel';
}

function formatParamList(params: ReadonlyMap<string, string | null>): string {
  let out = '';
  for (const [k, v] of params) out += v === null ? `;${escape(k, PARAM_EXTRA)}` : `;${escape(k, PARAM_EXTRA)}=${escape(v, PARAM_EXTRA)}`;
  return out;
}

export function formatUri(uri: Uri): string {
  if (isSipUri(uri)) {
    let out = `${uri.scheme}:`;
    if (uri.user !== undefined) {
      out += escape(uri.user, USER_EXTRA);
      if (uri.password !== undefined) out += `:${escape(uri.password, PASSWORD_EXTRA)}`;
      out += '@';
    }
    out += uri.host;
    if (uri.port !== undefined) out += `:${uri.port}`;
    out += formatParamList(uri.params);
    const hs = [...uri.headers].map(([k, v]) => `${escape(k, HEADER_EXTRA)}=${escape(v, HEADER_EXTRA)}`);
    if (hs.length > 0) out += `?${hs.join('&')}`;
    return out;
  }
  if (isTelUri(uri)) return `tel:${uri.number}${formatParamList(uri.params)}`;
  return `${uri.scheme}:${uri.opaque}`;
}

