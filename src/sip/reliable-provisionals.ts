/**
 * UAS side of RFC 3262 (100rel), as a pure core on the caller's clock: which provisional
 * responses go out reliably, their RSeq numbers, when each is resent, and which PRACK
 * acknowledges which. It owns no timer: every input takes `nowMs` and `wakeAtMs` says when the
 * owner must call `tick` next (the shape of src/call/turn-taking.ts).
 *
 * The rules it keeps (RFC 3262 §3):
 * - RSeq starts at a random value in 1..2^31-1 and grows by one per reliable provisional;
 * - one reliable provisional is outstanding at a time: a later one waits until the earlier one
 *   is PRACKed (it is then sent; a 2xx may overtake a queued one without SDP);
 * - an outstanding one is resent after T1, then at doubling intervals, until its PRACK; after
 *   64*T1 without one the INVITE is to be answered with a 5xx (`timeout`);
 * - a PRACK matches by RAck (RSeq, CSeq number, method INVITE); anything else is 481;
 * - a 2xx to the INVITE waits while an unacknowledged reliable provisional carried SDP
 *   (`mayAnswer`), since that SDP is the answer the 2xx would otherwise contradict.
 */
import type { SipResponse } from './message.ts';

export interface RAck {
  rseq: number;
  cseq: number;
  method: string;
}

/** `RAck: 776656 1 INVITE` → its parts; undefined when malformed. */
export function parseRAck(value: string | undefined): RAck | undefined {
  const m = /^\s*(\d{1,10})\s+(\d{1,10})\s+([A-Za-z]+)\s*$/.exec(value ?? '');
  if (!m) return undefined;
  return { rseq: Number(m[1]), cseq: Number(m[2]), method: m[3]!.toUpperCase() };
}

/** Whether an option-tag list (Supported / Require values) names 100rel. */
export function lists100rel(values: readonly string[]): boolean {
  return values.some((v) => v.split(',').some((t) => t.trim().toLowerCase() === '100rel'));
}

export type ReliableAction =
  | { type: 'send'; response: SipResponse; rseq: number; retransmission: boolean }
  /** 64*T1 passed without a PRACK: answer the INVITE with a 5xx. */
  | { type: 'timeout'; rseq: number };

interface Outstanding {
  rseq: number;
  response: SipResponse;
  hasSdp: boolean;
  intervalMs: number;
  nextAtMs: number;
  giveUpAtMs: number;
}

export interface ReliableProvisionalsOptions {
  t1Ms: number;
  /** CSeq number of the INVITE (PRACKs carry it in RAck). */
  inviteCseq: number;
  /** First RSeq; random in 1..2^31-1 unless fixed (tests). */
  firstRSeq: number;
}

export class ReliableProvisionals {
  private nextRSeq: number;
  private outstanding: Outstanding | undefined;
  private readonly queued: Array<{ response: SipResponse; rseq: number; hasSdp: boolean }> = [];
  private done = false;
  /** RSeq values PRACKed so far (a retransmitted PRACK in a new transaction still gets 200). */
  private lastAcked: number | undefined;

  constructor(private readonly opts: ReliableProvisionalsOptions) {
    this.nextRSeq = Math.min(Math.max(1, Math.floor(opts.firstRSeq)), 0x7fffffff);
  }

  /**
   * Queues or sends a provisional response that already carries `RSeq: rseq` (use `claim()` to
   * get the number first). Returns the actions to carry out now.
   */
  send(response: SipResponse, rseq: number, nowMs: number): ReliableAction[] {
    if (this.done) return [];
    const hasSdp = response.body.length > 0;
    if (this.outstanding) {
      this.queued.push({ response, rseq, hasSdp });
      return [];
    }
    return this.launch(response, rseq, hasSdp, nowMs);
  }

  /** Takes the next RSeq number for a response about to be built. */
  claim(): number {
    const rseq = this.nextRSeq;
    this.nextRSeq = rseq >= 0x7fffffff ? 1 : rseq + 1;
    return rseq;
  }

  private launch(response: SipResponse, rseq: number, hasSdp: boolean, nowMs: number): ReliableAction[] {
    const t1 = this.opts.t1Ms;
    this.outstanding = { rseq, response, hasSdp, intervalMs: t1, nextAtMs: nowMs + t1, giveUpAtMs: nowMs + 64 * t1 };
    return [{ type: 'send', response, rseq, retransmission: false }];
  }

  /**
   * A PRACK arrived with this RAck: 200 when it acknowledges the outstanding response (or the
   * one acknowledged last, for a PRACK resent in a new transaction), else 481. A match sends
   * the next queued provisional, if any.
   */
  prack(rack: RAck | undefined, nowMs: number): { status: 200 | 481; actions: ReliableAction[] } {
    if (!rack || rack.method !== 'INVITE' || rack.cseq !== this.opts.inviteCseq) return { status: 481, actions: [] };
    const out = this.outstanding;
    if (!out || out.rseq !== rack.rseq) return { status: rack.rseq === this.lastAcked ? 200 : 481, actions: [] };
    this.outstanding = undefined;
    this.lastAcked = rack.rseq;
    const next = this.queued.shift();
    if (!next || this.done) return { status: 200, actions: [] };
    return { status: 200, actions: this.launch(next.response, next.rseq, next.hasSdp, nowMs) };
  }

  /** Resends and the give-up, due at `nowMs`. */
  tick(nowMs: number): ReliableAction[] {
    const out = this.outstanding;
    if (!out || this.done) return [];
    if (nowMs >= out.giveUpAtMs) {
      this.finish();
      return [{ type: 'timeout', rseq: out.rseq }];
    }
    if (nowMs < out.nextAtMs) return [];
    out.intervalMs *= 2;
    out.nextAtMs = Math.min(nowMs + out.intervalMs, out.giveUpAtMs);
    return [{ type: 'send', response: out.response, rseq: out.rseq, retransmission: true }];
  }

  get wakeAtMs(): number | undefined {
    const out = this.outstanding;
    return out && !this.done ? Math.min(out.nextAtMs, out.giveUpAtMs) : undefined;
  }

  /** A 2xx may go out now: no unacknowledged reliable provisional carried SDP. */
  get mayAnswer(): boolean {
    return !this.outstanding?.hasSdp;
  }

  /** Whether a reliable provisional awaits its PRACK. */
  get pending(): boolean {
    return this.outstanding !== undefined;
  }

  /** The INVITE got its final response: nothing more is sent or resent. */
  finish(): void {
    this.done = true;
    this.outstanding = undefined;
    this.queued.length = 0;
  }
}
