/**
 * Character classes and a small cursor over header-value text, shared by the URI, name-addr,
 * Via and digest parsers. Header values reach these functions with folding already collapsed,
 * so "whitespace" here is only SP and HTAB.
 */

const TOKEN_EXTRA = new Set('-.!%*_+`\'~');

export function isAlnum(c: string): boolean {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

export function isDigit(c: string): boolean {
  return c >= '0' && c <= '9';
}

export function isTokenChar(c: string): boolean {
  return isAlnum(c) || TOKEN_EXTRA.has(c);
}

export function isToken(s: string): boolean {
  if (s.length === 0) return false;
  for (const c of s) if (!isTokenChar(c)) return false;
  return true;
}

/** Trims SP/HTAB only: JavaScript's trim() also eats U+FEFF, NBSP and other non-LWS text. */
export function trimWs(s: string): string {
  return s.replace(/^[ \t]+|[ \t]+$/g, '');
}

export function isWs(c: string | undefined): boolean {
  return c === ' ' || c === '\t';
}

/** Decimal digits only (no sign, no spaces); leading zeros allowed as in `0068`. */
export function parseDigits(s: string, max: number): number | undefined {
  if (s.length === 0 || s.length > 20) return undefined;
  for (const c of s) if (!isDigit(c)) return undefined;
  const n = Number(s);
  return n <= max ? n : undefined;
}

export const UINT32_MAX = 0xffff_ffff;

export class Scanner {
  pos = 0;
  constructor(readonly text: string) {}

  get done(): boolean {
    return this.pos >= this.text.length;
  }

  peek(offset = 0): string | undefined {
    return this.text[this.pos + offset];
  }

  skipWs(): boolean {
    const start = this.pos;
    while (isWs(this.text[this.pos])) this.pos++;
    return this.pos > start;
  }

  /** Consumes `c` with optional whitespace around it (SIP's SWS-delimited separators). */
  eat(c: string): boolean {
    const save = this.pos;
    this.skipWs();
    if (this.text[this.pos] === c) {
      this.pos++;
      this.skipWs();
      return true;
    }
    this.pos = save;
    return false;
  }

  token(): string | undefined {
    const start = this.pos;
    while (this.pos < this.text.length && isTokenChar(this.text[this.pos]!)) this.pos++;
    return this.pos > start ? this.text.slice(start, this.pos) : undefined;
  }

  /** Reads while `pred` holds. */
  run(pred: (c: string) => boolean): string {
    const start = this.pos;
    while (this.pos < this.text.length && pred(this.text[this.pos]!)) this.pos++;
    return this.text.slice(start, this.pos);
  }

  /** A quoted-string starting at the cursor, returned raw (with quotes); undefined if unterminated. */
  quotedRaw(): string | undefined {
    if (this.text[this.pos] !== '"') return undefined;
    const end = quotedEnd(this.text, this.pos);
    if (end === -1) return undefined;
    const raw = this.text.slice(this.pos, end + 1);
    this.pos = end + 1;
    return raw;
  }
}

/** Index of the closing quote of the quoted-string opening at `start`, or -1. */
export function quotedEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === '"') return i;
  }
  return -1;
}

/** Removes the quotes and resolves quoted-pairs (`\"` → `"`, `\\` → `\`). */
export function unquote(raw: string): string {
  if (raw.length < 2 || !raw.startsWith('"') || !raw.endsWith('"')) return raw;
  let out = '';
  for (let i = 1; i < raw.length - 1; i++) {
    const c = raw[i]!;
    if (c === '\\' && i + 1 < raw.length - 1) out += raw[++i];
    else out += c;
  }
  return out;
}

export function quote(s: string): string {
  return `"${s.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

/** Generic parameter value: a quoted-string (kept raw) or a run of token / host characters. */
function paramValue(sc: Scanner): string | undefined {
  if (sc.peek() === '"') return sc.quotedRaw();
  const v = sc.run((c) => isTokenChar(c) || c === '[' || c === ']' || c === ':');
  return v.length > 0 ? v : undefined;
}

/**
 * `*( SEMI name [EQUAL value] )` from the cursor. Names are lowercased (they compare
 * case-insensitively); values are kept as written, quoted-strings included, so a message can be
 * forwarded unchanged. Returns undefined on an empty or malformed parameter (e.g. `;;`).
 */
export function parseParams(sc: Scanner): Map<string, string | null> | undefined {
  const params = new Map<string, string | null>();
  for (;;) {
    if (!sc.eat(';')) break;
    const name = sc.token();
    if (name === undefined) return undefined;
    let value: string | null = null;
    if (sc.eat('=')) {
      const v = paramValue(sc);
      if (v === undefined) return undefined;
      value = v;
    }
    params.set(name.toLowerCase(), value);
  }
  return params;
}

export function formatParams(params: ReadonlyMap<string, string | null>): string {
  let out = '';
  for (const [k, v] of params) out += v === null ? `;${k}` : `;${k}=${v}`;
  return out;
}

/**
 * Splits a list header value on commas that are outside quoted-strings and `<...>`.
 * Undefined when quotes or angle brackets are unbalanced.
 */
export function splitList(value: string): string[] | undefined {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === '"') {
      const end = quotedEnd(value, i);
      if (end === -1) return undefined;
      i = end;
    } else if (c === '<') {
      if (depth > 0) return undefined;
      depth = 1;
    } else if (c === '>') {
      if (depth === 0) return undefined;
      depth = 0;
    } else if (c === ',' && depth === 0) {
      parts.push(trimWs(value.slice(start, i)));
      start = i + 1;
    }
  }
  if (depth !== 0) return undefined;
  parts.push(trimWs(value.slice(start)));
  return parts;
}
