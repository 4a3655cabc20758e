/**
 * Shared failure handling for the speech providers: which errors earn the one retry, and how a
 * vendor's error becomes the engine's ProviderError (whose `retryable` tells the call session
 * whether apologising and trying the next turn makes sense, or the provider is misconfigured).
 */
import OpenAI from 'openai';
import { ProviderError } from '../util/errors.ts';

const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_SOCKET']);

/** 5xx, 429, a refused/reset connection and our own timeouts; never 4xx (a retry cannot fix it). */
export function isTransient(err: unknown): boolean {
  if (err instanceof ProviderError) return err.retryable;
  if (err instanceof OpenAI.APIUserAbortError) return false;
  if (err instanceof OpenAI.APIError) return err.status === undefined || err.status >= 500 || err.status === 429;
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code ?? (err.cause as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
  // undici reports every transport failure as `TypeError: fetch failed` / `terminated`.
  return err instanceof TypeError && /fetch failed|terminated/.test(err.message);
}

export function httpStatusOf(err: unknown): number | undefined {
  return err instanceof OpenAI.APIError ? err.status : undefined;
}

export function toProviderError(err: unknown, provider: string, what: string): ProviderError {
  if (err instanceof ProviderError) return err;
  const status = httpStatusOf(err);
  const detail = err instanceof Error ? err.message : String(err);
  const e = new ProviderError(`${provider} ${what} failed${status ? ` (HTTP ${status})` : ''}: ${detail}`, provider, isTransient(err));
  (e as { cause?: unknown }).cause = err;
  return e;
}

export function timeoutError(provider: string, what: string, ms: number): ProviderError {
  return new ProviderError(`${provider} ${what} timed out after ${ms} ms`, provider, true);
}

/**
 * A controller that aborts itself with a timeout error unless re-armed or cancelled, combined
 * with the caller's signal. The reason tells a timeout (retry) from a barge-in (stop quietly).
 */
export class Deadline {
  private readonly ctl = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  readonly signal: AbortSignal;

  constructor(
    parent: AbortSignal,
    private readonly provider: string,
  ) {
    this.signal = AbortSignal.any([parent, this.ctl.signal]);
  }

  arm(what: string, ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.ctl.abort(timeoutError(this.provider, what, ms)), ms);
  }

  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The timeout error when this deadline fired, otherwise undefined. */
  get expired(): ProviderError | undefined {
    return this.ctl.signal.aborted ? (this.ctl.signal.reason as ProviderError) : undefined;
  }
}
