/**
 * Provider failures on a call, named for the record and the log. A failure has a kind (which
 * part of the engine could not do its job), the provider's label and a short reason taken from
 * the error: an HTTP status (`401`, `500`), a WebSocket close code (`1011`), or a network cause
 * (`connection refused`). Never the error's message: vendors echo parts of the API key in it.
 *
 * The record's `end_cause` for a call a failure ended is `<kind>: <provider> <reason>`, e.g.
 * `stt-unavailable: deepgram 401` (docs/FAILURES-AND-BILLING.md).
 */
import OpenAI from 'openai';
import { ProviderError } from '../util/errors.ts';

export const FAILURE_KINDS = ['stt-unavailable', 'llm-error', 'tts-error', 'realtime-unavailable', 'realtime-dropped'] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

export interface CallFailure {
  kind: FailureKind;
  provider: string;
  reason: string;
}

/**
 * Pipeline: failed assistant turns in a row (each after its own retry) that the call survives
 * with an apology; the next one ends it. A failure no retry can fix (401, 403, 400) ends it at once.
 */
export const MAX_CONSECUTIVE_FAILED_TURNS = 2;

/** How long the closing apology may take to play before the call is hung up anyway. */
export const FAREWELL_GRACE_MS = 15_000;

const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'timeout',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  EPIPE: 'connection reset',
  UND_ERR_SOCKET: 'connection reset',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
};

/** `HTTP 401`, `(HTTP 500)`, `answered 500`, `code 1011`, `(1011 reason)`. */
const STATUS_IN_MESSAGE = /\bHTTP (\d{3})\b|\banswered (\d{3})\b|\bcode (\d{4})\b|\((\d{4})\b/;

/** The short reason of an error (status, close code or network cause); `error` when none is known. */
export function failureReason(err: unknown): string {
  let timedOut = false;
  let e: unknown = err;
  for (let depth = 0; e !== undefined && e !== null && depth < 6; depth++) {
    if (e instanceof OpenAI.APIError && typeof e.status === 'number') return String(e.status);
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code in NETWORK_REASONS) return NETWORK_REASONS[code]!;
    if (typeof code === 'number' && code >= 1000 && code < 5000) return String(code);
    const message = e instanceof Error ? e.message : typeof e === 'string' ? e : '';
    if (/\bno API key configured\b/.test(message)) return 'no API key';
    const m = STATUS_IN_MESSAGE.exec(message);
    if (m) return (m[1] ?? m[2] ?? m[3] ?? m[4])!;
    if (/ECONNREFUSED/.test(message)) return 'connection refused';
    if (/timed out|timeout|in time/i.test(message)) timedOut = true;
    e = (e as { cause?: unknown }).cause;
  }
  return timedOut ? 'timeout' : 'error';
}

/** The failure of `kind` from an error; the provider from the error when it names one. */
export function failureOf(kind: FailureKind, err: unknown, provider: string): CallFailure {
  const named = err instanceof ProviderError && err.provider && !['llm', 'agent', 'tts', 'stt'].includes(err.provider) ? err.provider : provider;
  return { kind, provider: named, reason: failureReason(err) };
}

/** A failure no retry can fix: the provider refused us (bad key, no access, bad request). */
export function isPermanent(err: unknown): boolean {
  if (err instanceof ProviderError) return !err.retryable;
  return /^(400|401|403|404)$/.test(failureReason(err));
}

/** The record's `end_cause`: `stt-unavailable: deepgram 401`. */
export function endCauseOf(f: CallFailure): string {
  return `${f.kind}: ${f.provider} ${f.reason}`;
}

/** Where an engine reports a failure: `fatal` when the call ends because of it. */
export type FailureListener = (failure: CallFailure, fatal: boolean) => void;
