/**
 * One Via value (RFC 3261 20.42, RFC 3581 rport): `SIP / 2.0 / UDP host:port;branch=...`,
 * with the LWS the grammar allows around '/', ':', ';' and '='.
 */
import { formatParams, isDigit, parseParams, Scanner, trimWs } from './scan.ts';
import { isValidHost } from './uri.ts';

export const BRANCH_MAGIC_COOKIE = 'z9hG4bK';

export interface Via {
  protocol: string; // "SIP"
  version: string; // "2.0"
  /** Uppercased: UDP, TCP, TLS, SCTP, WS, WSS or an extension token. */
  transport: string;
  host: string;
  port?: number;
  /** Names lowercased, values as written. `formatVia` writes these, not the fields below. */
  params: Map<string, string | null>;
  branch?: string;
  received?: string;
  /** null when present without a value (a request asking for rport). */
  rport?: number | null;
  maddr?: string;
  ttl?: number;
}

function digits(v: string, max: number): number | undefined {
  return v.length > 0 && v.length <= 5 && [...v].every(isDigit) && Number(v) <= max ? Number(v) : undefined;
}

export function parseVia(value: string): Via | undefined {
  const sc = new Scanner(trimWs(value));
  const protocol = sc.token();
  if (!protocol || !sc.eat('/')) return undefined;
  const version = sc.token();
  if (!version || !sc.eat('/')) return undefined;
  const transport = sc.token();
  if (!transport || !sc.skipWs()) return undefined;

  let host: string;
  if (sc.peek() === '[') {
    host = sc.run((c) => c !== ']');
    if (sc.peek() !== ']') return undefined;
    sc.pos++;
    host += ']';
  } else {
    host = sc.run((c) => /[A-Za-z0-9_.-]/.test(c));
  }
  if (!isValidHost(host)) return undefined;
  const via: Via = { protocol, version, transport: transport.toUpperCase(), host, params: new Map() };
  if (sc.eat(':')) {
    const port = digits(sc.run(isDigit), 65535);
    if (port === undefined) return undefined;
    via.port = port;
  }

  const params = parseParams(sc);
  if (!params) return undefined;
  sc.skipWs();
  if (!sc.done) return undefined;
  via.params = params;

  const branch = params.get('branch');
  if (branch === null) return undefined;
  if (branch !== undefined) via.branch = branch;
  const received = params.get('received');
  // RFC 3261 writes an IPv6 `received` without brackets.
  if (received === null || (received !== undefined && !isValidHost(received) && !isValidHost(`[${received}]`))) return undefined;
  if (received !== undefined) via.received = received;
  if (params.has('rport')) {
    const rport = params.get('rport');
    if (rport === null || rport === undefined) via.rport = null;
    else {
      const n = digits(rport, 65535);
      if (n === undefined) return undefined;
      via.rport = n;
    }
  }
  const maddr = params.get('maddr');
  if (maddr === null || (maddr !== undefined && !isValidHost(maddr))) return undefined;
  if (maddr !== undefined) via.maddr = maddr;
  const ttl = params.get('ttl');
  if (ttl !== undefined) {
    const n = ttl === null ? undefined : digits(ttl, 255);
    if (n === undefined) return undefined;
    via.ttl = n;
  }
  return via;
}

export function formatVia(via: Pick<Via, 'protocol' | 'version' | 'transport' | 'host' | 'port' | 'params'>): string {
  const port = via.port !== undefined ? `:${via.port}` : '';
  return `${via.protocol}/${via.version}/${via.transport} ${via.host}${port}${formatParams(via.params)}`;
}

/**
 * Whether the branch follows RFC 3261 (magic cookie plus something unique). A bare cookie, as in
 * RFC 4475 `badbranch`, or no branch means RFC 2543 transaction matching.
 */
export function isRfc3261Branch(branch: string | undefined): boolean {
  return branch !== undefined && branch.length > BRANCH_MAGIC_COOKIE.length && branch.startsWith(BRANCH_MAGIC_COOKIE);
}
