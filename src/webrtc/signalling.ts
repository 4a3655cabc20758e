/**
 * The signalling protocol of browser calls (docs/BROWSER-CALLS.md): the messages both ways, their
 * zod schemas, the close codes, and the socket's message-rate limit as a pure core on a clock.
 */
import { z } from 'zod';

/** Largest message we read (an Opus-only SDP offer is 2-6 KB; a candidate a few hundred bytes). */
export const MAX_MESSAGE_BYTES = 64 * 1024;

const candidate = z.object({
  type: z.literal('candidate'),
  candidate: z.string().max(1024),
  sdpMid: z.string().max(64).nullable().optional(),
  sdpMLineIndex: z.number().int().min(0).max(64).nullable().optional(),
});

export const clientMessage = z.discriminatedUnion('type', [
  z.object({ type: z.literal('auth'), key: z.string().min(1).max(512) }),
  z.object({ type: z.literal('call'), assistant_id: z.number().int().positive(), sdp: z.string().min(1).max(MAX_MESSAGE_BYTES) }),
  candidate,
  z.object({ type: z.literal('hangup') }),
]);

export type ClientMessage = z.infer<typeof clientMessage>;

export type ServerMessage =
  | { type: 'ready'; ice_servers: readonly unknown[] }
  | { type: 'answer'; sdp: string }
  | { type: 'candidate'; candidate: string; sdpMid: string | null; sdpMLineIndex: number | null }
  | { type: 'answered'; call_id: number; uuid: string }
  | { type: 'ended'; call_id: number; uuid: string; end_cause: string; status: string }
  | { type: 'error'; code: string; message: string };

/** WebSocket close codes (4000-4999 are the application's). */
export const CLOSE = {
  normal: { code: 1000, reason: 'call over' },
  badMessage: { code: 4400, reason: 'bad message' },
  unauthorized: { code: 4401, reason: 'unauthorized' },
  forbiddenOrigin: { code: 4403, reason: 'origin not allowed' },
  timeout: { code: 4408, reason: 'timed out' },
  rateLimited: { code: 4429, reason: 'too many messages' },
  shuttingDown: { code: 1001, reason: 'shutting down' },
} as const;

/** Parse one text frame; undefined for anything that is not a known message. */
export function parseClientMessage(text: string): ClientMessage | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = clientMessage.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}

/**
 * Messages per second on one socket: a token bucket (`burst` tokens, `perSecond` back a second).
 * Trickle ICE sends a handful of candidates at once, so the burst has room for them.
 */
export class MessageRate {
  private tokens: number;
  private lastMs: number;

  constructor(
    nowMs: number,
    private readonly perSecond = 20,
    private readonly burst = 40,
  ) {
    this.tokens = burst;
    this.lastMs = nowMs;
  }

  /** One message at `nowMs`: whether it is within the rate. */
  take(nowMs: number): boolean {
    const elapsed = Math.max(0, nowMs - this.lastMs);
    this.lastMs = nowMs;
    this.tokens = Math.min(this.burst, this.tokens + (elapsed * this.perSecond) / 1000);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/**
 * Same origin unless the operator opened others (SWITCHBOARD_WEBRTC_ALLOWED_ORIGINS). A request
 * without Origin is no browser's (a server-side client): allowed, it still needs the key.
 */
export function originAllowed(origin: string | undefined, host: string | undefined, allowed: readonly string[]): boolean {
  if (origin === undefined) return true;
  const o = origin.replace(/\/$/, '');
  if (allowed.includes('*') || allowed.includes(o)) return true;
  if (!host) return false;
  try {
    return new URL(o).host === host;
  } catch {
    return false;
  }
}
