/**
 * A provider failure told in one line a user can act on, naming the vendor and the cause:
 * "OpenAI: 401 invalid API key", "OpenAI: connection refused (http://127.0.0.1:9)",
 * "Twilio: 500 server error: ...". Keys never appear: authentication failures carry no vendor
 * text (OpenAI's own 401 message quotes part of the key), any configured key is blanked, and a
 * URL is shown as its origin only (no path, query or credentials).
 */
import OpenAI from 'openai';
import { ProviderError } from '../util/errors.ts';

const MAX_DETAIL_CHARS = 200;

/** Fixed wording for the statuses whose fix is on our side; the vendor's text is left out of auth failures. */
const STATUS_TEXT: Record<number, string> = {
  400: 'bad request',
  401: 'invalid API key',
  403: 'permission denied',
  404: 'not found',
  408: 'request timeout',
  413: 'request too large',
  429: 'rate limited or out of quota',
};
const WITHOUT_DETAIL = new Set([401, 403]);

const NETWORK_TEXT: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_SOCKET: 'connection closed',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS certificate not trusted',
  SELF_SIGNED_CERT_IN_CHAIN: 'TLS certificate not trusted',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate not trusted',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS certificate does not match the host',
};

/** Scheme, host and port of a URL; nothing else of it (a path or query may hold a token). */
export function originOf(url: string | undefined): string | undefined {
  if (!url || !URL.canParse(url)) return undefined;
  return new URL(url).origin;
}

/** A URL in free text, up to the next blank or quote. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi;

/**
 * Blanks every given secret, anything shaped like a key or token (OpenAI `sk-…`, `Bearer …`,
 * organisation and project ids), reduces every URL to its origin (no credentials, path or
 * query), and cuts to a readable length.
 */
export function scrub(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join('[redacted]');
  out = out
    .replace(/\bBearer\s+\S+/gi, 'Bearer [redacted]')
    .replace(URL_IN_TEXT, (u) => originOf(u.replace(/[.,;:)\]]+$/, '')) ?? '[url]')
    .replace(/\bsk-[A-Za-z0-9_*-]{6,}/g, '[redacted]')
    .replace(/\borg-\w+/g, '[redacted]')
    .replace(/\bproj_\w+/g, '[redacted]')
    .replace(/\s+/g, ' ')
    .trim();
  return out.length > MAX_DETAIL_CHARS ? `${out.slice(0, MAX_DETAIL_CHARS - 1)}…` : out;
}

/** "401 invalid API key", "500 server error: upstream overloaded". */
export function httpFailureText(status: number, detail: string | undefined): string {
  const known = STATUS_TEXT[status] ?? (status >= 500 ? 'server error' : 'request failed');
  const extra = detail && !WITHOUT_DETAIL.has(status) ? `: ${detail}` : '';
  return `${status} ${known}${extra}`;
}

/** The first error code (ECONNREFUSED, ...) along the cause chain, AggregateError members included. */
function networkCode(err: unknown, depth = 0): string | undefined {
  if (depth > 6 || typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && NETWORK_TEXT[code]) return code;
  if (err instanceof AggregateError) {
    for (const e of err.errors) {
      const c = networkCode(e, depth + 1);
      if (c) return c;
    }
  }
  return networkCode((err as { cause?: unknown }).cause, depth + 1);
}

/** "connection refused (http://127.0.0.1:9)" for a transport failure; undefined when it is not one. */
export function networkFailureText(err: unknown, url: string | undefined): string | undefined {
  const code = networkCode(err);
  if (!code) return undefined;
  const origin = originOf(url);
  return `${NETWORK_TEXT[code]}${origin ? ` (${origin})` : ''}`;
}

export interface DescribeOptions {
  /** How the vendor is named: "OpenAI". */
  label: string;
  /** The endpoint the request went to (its origin is shown for transport failures). */
  url?: string;
  /** Secrets to blank wherever they appear. */
  secrets?: readonly (string | undefined)[];
}

/** The underlying error of a ProviderError (which keeps it as `cause`), else the error itself. */
function rootOf(err: unknown): unknown {
  let e = err;
  for (let i = 0; i < 4 && e instanceof ProviderError && e.cause !== undefined; i++) e = e.cause;
  return e;
}

/** An error of the OpenAI client (HTTP status, connection, timeout). */
export function isOpenAiError(err: unknown): boolean {
  return err instanceof OpenAI.OpenAIError;
}

/** "OpenAI: 401 invalid API key" for an error thrown by an OpenAI-protocol client. */
export function describeOpenAiError(err: unknown, opts: DescribeOptions): string {
  const secrets = opts.secrets ?? [];
  const e = rootOf(err);
  let cause: string;
  if (e instanceof OpenAI.APIConnectionTimeoutError) {
    const origin = originOf(opts.url);
    cause = `request timed out${origin ? ` (${origin})` : ''}`;
  } else if (e instanceof OpenAI.APIError && e.status !== undefined) {
    const body = e.error as { message?: unknown } | undefined;
    const detail = typeof body?.message === 'string' ? scrub(body.message, secrets) : undefined;
    cause = httpFailureText(e.status, detail);
  } else {
    const net = networkFailureText(e, opts.url);
    if (net) cause = net;
    else if (e instanceof OpenAI.APIConnectionError) cause = `could not connect${originOf(opts.url) ? ` (${originOf(opts.url)})` : ''}`;
    else cause = scrub(e instanceof Error ? e.message : String(e), secrets);
  }
  return `${opts.label}: ${cause}`;
}
