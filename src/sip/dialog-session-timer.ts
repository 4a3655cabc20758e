/**
 * RFC 4028 session timers: negotiation helpers (pure) and a small clock-driven scheduler that
 * says when to refresh (we are the refresher) or when to give up (the peer is and went quiet).
 */
import type { Clock, Timer } from '../util/clock.ts';
import { header, type SipHeader, type SipMessage } from './message.ts';
import { parseParams } from './transaction-headers.ts';

export interface SessionExpires {
  deltaSec: number;
  refresher?: 'uac' | 'uas';
}

export function parseSessionExpires(value: string | undefined): SessionExpires | undefined {
  if (value === undefined) return undefined;
  const m = /^\s*(\d+)\s*(;.*)?$/.exec(value);
  if (!m) return undefined;
  const r = parseParams(m[2] ?? '').get('refresher')?.toLowerCase();
  const out: SessionExpires = { deltaSec: Number(m[1]) };
  if (r === 'uac' || r === 'uas') out.refresher = r;
  return out;
}

export function supportsTimer(msg: SipMessage): boolean {
  const values = [...msg.headers.filter((h) => h.name === 'supported' || h.name === 'require').map((h) => h.value)];
  return values.some((v) => v.split(',').some((t) => t.trim().toLowerCase() === 'timer'));
}

export type UasSessionDecision =
  | { kind: 'none' }
  | { kind: 'too-small'; minSeSec: number }
  | { kind: 'use'; deltaSec: number; weRefresh: boolean; headers: SipHeader[] };

/**
 * What the UAS does with the session-timer fields of an INVITE/UPDATE (RFC 4028 §9): reject
 * an interval below our Min-SE with 422, otherwise echo the interval and name the refresher.
 */
export function negotiateAsUas(req: SipMessage, minSeSec: number): UasSessionDecision {
  const se = parseSessionExpires(header(req, 'session-expires'));
  if (!se) return { kind: 'none' };
  if (se.deltaSec < minSeSec) return { kind: 'too-small', minSeSec };
  const uacSupports = supportsTimer(req);
  // Without UAC support only the UAS can refresh (RFC 4028 §9).
  const refresher: 'uac' | 'uas' = se.refresher ?? (uacSupports ? 'uac' : 'uas');
  const hdrs: SipHeader[] = [{ name: 'session-expires', value: `${se.deltaSec};refresher=${refresher}` }];
  if (uacSupports) hdrs.push({ name: 'require', value: 'timer' });
  return { kind: 'use', deltaSec: se.deltaSec, weRefresh: refresher === 'uas', headers: hdrs };
}

/** The UAC reading a 2xx to its INVITE/UPDATE (RFC 4028 §7.2). */
export function negotiateAsUac(res: SipMessage): { deltaSec: number; weRefresh: boolean } | undefined {
  const se = parseSessionExpires(header(res, 'session-expires'));
  if (!se) return undefined;
  return { deltaSec: se.deltaSec, weRefresh: (se.refresher ?? 'uac') === 'uac' };
}

export interface SessionTimerEvents {
  refresh(): void;
  expire(): void;
}

export class SessionTimer {
  private timer: Timer | undefined;
  private current: { deltaSec: number; weRefresh: boolean } | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly events: SessionTimerEvents,
  ) {}

  get active(): { deltaSec: number; weRefresh: boolean } | undefined {
    return this.current;
  }

  /** (Re)starts the interval; a successful refresh from either side calls this again. */
  arm(deltaSec: number, weRefresh: boolean): void {
    this.cancel();
    this.current = { deltaSec, weRefresh };
    const ms = deltaSec * 1000;
    // RFC 4028 §10: refresh at half the interval; the other side waits until
    // expiry minus min(32 s, interval/3) before declaring the session dead.
    const at = weRefresh ? ms / 2 : ms - Math.min(32_000, ms / 3);
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      if (weRefresh) this.events.refresh();
      else this.events.expire();
    }, at);
  }

  cancel(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.current = undefined;
  }
}
