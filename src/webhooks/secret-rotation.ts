import crypto from 'node:crypto';
import { AppError } from '../util/errors.ts';

/**
 * An account's webhook signing secrets over time. A rotation makes a new secret current and keeps
 * the one it replaces signing beside it until the overlap ends, so receivers can switch to the
 * new secret without dropping events (Standard Webhooks: several space-separated signatures in
 * `webhook-signature`). Pure: the caller passes the time; nothing here has a timer.
 */
export interface SecretState {
  current: string;
  /** The secret the last rotation replaced, or null. */
  previous: string | null;
  /** Until when (epoch ms, exclusive) `previous` still signs. */
  previousUntilMs: number | null;
}

/** Default overlap: a day, long enough for a receiver's deploy, short enough to retire a leaked secret. */
export const DEFAULT_OVERLAP_MS = 24 * 60 * 60 * 1000;

/** A new secret in the Standard Webhooks form: `whsec_` + base64 of 24 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${crypto.randomBytes(24).toString('base64')}`;
}

/** The secrets that sign at `nowMs`: the current one first, then the previous one while its overlap lasts. */
export function signingSecrets(state: SecretState, nowMs: number): string[] {
  return isOverlapping(state, nowMs) ? [state.current, state.previous!] : [state.current];
}

export function isOverlapping(state: SecretState, nowMs: number): boolean {
  return state.previous !== null && state.previousUntilMs !== null && nowMs < state.previousUntilMs;
}

/**
 * A rotation asked for while the previous one still overlaps: rotating again would stop the
 * oldest secret signing, which receivers may still verify with. Only a forced rotation does that.
 */
export class RotationInProgressError extends AppError {
  constructor(readonly previousUntilMs: number) {
    super(
      `A rotation is in progress: the previous secret signs until ${new Date(previousUntilMs).toISOString()}. Rotate again with force to retire it now (for a leaked secret, rotate with force and overlap 0).`,
      409,
      'ROTATION_IN_PROGRESS',
      false,
      { error_code: 'ROTATION_IN_PROGRESS' },
    );
  }
}

/**
 * The state after a rotation at `nowMs`. The replaced secret signs for `overlapMs` more (0: it
 * stops at once). While an earlier rotation still overlaps this refuses (RotationInProgressError)
 * unless `force`, which drops that older secret, so at most two secrets ever sign.
 */
export function rotate(state: SecretState, next: string, nowMs: number, overlapMs: number, force = false): SecretState {
  if (!Number.isFinite(overlapMs) || overlapMs < 0) throw new RangeError(`overlap must be a finite number ≥ 0, got ${overlapMs}`);
  if (!force && isOverlapping(state, nowMs)) throw new RotationInProgressError(state.previousUntilMs!);
  if (overlapMs === 0) return { current: next, previous: null, previousUntilMs: null };
  return { current: next, previous: state.current, previousUntilMs: nowMs + overlapMs };
}
