/**
 * Small header readers the transaction layer needs (top Via branch/sent-by, CSeq, tags).
 * Kept private to the transaction/transport/dialog files so they do not depend on the full
 * parser; they accept the canonical header values that message.ts stores.
 */
import { header, type SipMessage, type SipRequest, type SipResponse } from './message.ts';

export const MAGIC_COOKIE = 'z9hG4bK';

export interface ViaParts {
  protocol: string; // "SIP/2.0/UDP"
  transport: string; // "UDP"
  host: string;
  port: number | undefined;
  params: Map<string, string | undefined>;
}

/** Parses one Via value, e.g. `SIP/2.0/UDP 10.0.0.1:5060;branch=z9hG4bKx;rport`. */
export function parseVia(value: string): ViaParts | undefined {
  const m = /^\s*(SIP\s*\/\s*[^/\s]+\s*\/\s*([A-Za-z]+))\s+([^;]+?)\s*(;.*)?$/.exec(value);
  if (!m) return undefined;
  const hostPort = m[3] ?? '';
  let host: string;
  let port: number | undefined;
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(hostPort);
  if (v6) {
    host = v6[1] ?? '';
    port = v6[2] === undefined ? undefined : Number(v6[2]);
  } else {
    const [h, p] = hostPort.split(':');
    host = (h ?? '').trim();
    port = p === undefined ? undefined : Number(p.trim());
  }
  if (port !== undefined && !Number.isInteger(port)) return undefined;
  return { protocol: (m[1] ?? '').replace(/\s+/g, ''), transport: (m[2] ?? '').toUpperCase(), host, port, params: parseParams(m[4] ?? '') };
}

export function formatVia(via: ViaParts): string {
  const host = via.host.includes(':') ? `[${via.host}]` : via.host;
  let out = `${via.protocol} ${host}${via.port === undefined ? '' : `:${via.port}`}`;
  for (const [k, v] of via.params) out += v === undefined ? `;${k}` : `;${k}=${v}`;
  return out;
}

/** `;a=b;c` → Map{a→b, c→undefined}; keys lowercased. */
export function parseParams(text: string): Map<string, string | undefined> {
  const out = new Map<string, string | undefined>();
  for (const raw of text.split(';')) {
    const part = raw.trim();
    if (!part) continue;
    const eq = part.indexOf('=');
    if (eq === -1) out.set(part.toLowerCase(), undefined);
    else out.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).trim());
  }
  return out;
}

export function topVia(msg: SipMessage): ViaParts | undefined {
  const v = header(msg, 'via');
  return v === undefined ? undefined : parseVia(v);
}

export function cseqOf(msg: SipMessage): { seq: number; method: string } | undefined {
  const v = header(msg, 'cseq');
  const m = v === undefined ? null : /^\s*(\d+)\s+(\S+)\s*$/.exec(v);
  if (!m) return undefined;
  return { seq: Number(m[1]), method: (m[2] ?? '').toUpperCase() };
}

/** The `tag` parameter of a From/To value (params after the name-addr's closing `>`). */
export function tagOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const close = value.lastIndexOf('>');
  const params = close === -1 ? value.slice(Math.max(0, value.indexOf(';'))) : value.slice(close + 1);
  return parseParams(params).get('tag');
}

/** Sent-by as used in transaction keys: lowercased host plus port (default by transport). */
export function sentByKey(via: ViaParts): string {
  const port = via.port ?? (via.transport === 'TLS' ? 5061 : 5060);
  return `${via.host.toLowerCase()}:${port}`;
}

/**
 * Server transaction key per §17.2.3. ACK maps onto its INVITE; CANCEL keeps its own method so
 * it forms a separate transaction. Pre-3261 peers (no magic cookie) fall back to dialog-ish
 * fields (simplified §17.2.3 fallback: Call-ID, From tag, CSeq number, top Via).
 */
export function serverKey(req: SipRequest): string | undefined {
  const via = topVia(req);
  const cseq = cseqOf(req);
  if (!via || !cseq) return undefined;
  const method = req.method === 'ACK' ? 'INVITE' : req.method;
  const branch = via.params.get('branch');
  if (branch && branch.startsWith(MAGIC_COOKIE)) return `${branch}|${sentByKey(via)}|${method}`;
  const callId = header(req, 'call-id') ?? '';
  const fromTag = tagOf(header(req, 'from')) ?? '';
  return `old|${callId}|${fromTag}|${cseq.seq}|${sentByKey(via)}|${branch ?? ''}|${method}`;
}

/** Key of the INVITE server transaction a CANCEL refers to (§9.2). */
export function inviteKeyForCancel(cancel: SipRequest): string | undefined {
  const copy: SipRequest = { ...cancel, method: 'INVITE' };
  return serverKey(copy);
}

/** Client transaction key per §17.1.3: top Via branch plus CSeq method. */
export function clientKey(msg: SipRequest | SipResponse): string | undefined {
  const branch = topVia(msg)?.params.get('branch');
  const cseq = cseqOf(msg);
  if (!branch || !cseq) return undefined;
  const method = cseq.method === 'ACK' ? 'INVITE' : cseq.method;
  return `${branch}|${method}`;
}

export function newBranch(random: () => string): string {
  return `${MAGIC_COOKIE}${random()}`;
}
