/**
 * The campaign dialer: for an `in-progress` campaign, calls its pending leads through an
 * injected `placeCall`, at most `max_concurrent_calls` at a time, only inside `calling_hours`
 * (the assistant's time zone by default), while the balance covers a minute of calling.
 *
 * Rules (docs/CALLS.md, "Call tools, voicemail, campaigns", repeats them):
 * - Never twice by accident: a lead is claimed (pending → calling, attempts + 1, an attempt id in
 *   `last_outcome` as `calling:<id>`) in one conditional UPDATE before its call is placed, and an
 *   outcome is written only while the lead still carries that attempt id.
 * - Restart: leads found `calling` when a run starts are resolved, never re-dialled blindly:
 *   a call record proving the attempt's outcome gives that outcome; an attempt the store can
 *   prove was never placed goes back to pending (attempt not counted); anything else becomes
 *   `failed` with outcome `failed-unknown`.
 * - Outcomes: completed → done. busy / no-answer → retried after `retryDelayMs` while attempts
 *   < `maxAttempts` (default 3 attempts, 15 min apart), then failed. voicemail → retried the
 *   same way, then done (a message was left or the box reached). failed → failed.
 *   An error the engine calls retryable (call limit, shutting down) or a balance refusal gives
 *   the attempt back. A call aborted by stop goes back to pending (a counted attempt).
 * - Balance: checked before each call (one minute, CALL_PRICE_PER_MINUTE_MICROS); when it does
 *   not cover it the run pauses and re-checks every `pollMs` (status stays in-progress).
 * - stop: no new call starts, every ongoing call's AbortSignal fires, stop() resolves once the
 *   calls have settled.
 * - When no lead is pending or calling and no call is ongoing, the campaign becomes completed.
 * - Several nodes (docs/WORK-ONCE.md): every node may run the same campaign. A claim is also a
 *   lease (the store's `holder`, `leaseTtlMs`), renewed every third of its life while the call
 *   lasts; a call whose lease could not be renewed (another node settled the lead) is hung up.
 *   A `calling` lead is settled as after a restart only when its lease has lapsed (its node died)
 *   or it is this node's own and no call of this process carries it; the run wakes when the
 *   earliest lease of another node would lapse, so a survivor carries the campaign on. Just
 *   before a call is placed the lease is renewed once more: a node that stalled past its lease
 *   between the claim and the call does not place it. `max_concurrent_calls` counts the calling
 *   leads of every node (checked inside the claim's UPDATE; on PostgreSQL two claims at the same
 *   instant may pass it by one). Each node carries at most its share of the cap (the cap over
 *   the nodes alive, rounded up). A node at the cap with no call of its own wakes on the wiring's
 *   campaign watch.
 */
import { CALL_PRICE_PER_MINUTE_MICROS } from '../billing/prices.ts';
import type { Campaign } from '../store/repos/campaigns.ts';
import type { Lead, LeadStatus } from '../store/repos/leads.ts';
import type { Clock, Timer } from '../util/clock.ts';
import { AppError } from '../util/errors.ts';
import { lapsed, renewEveryMs } from '../cluster/lease-core.ts';
import { withinCallingHours } from './calling-hours.ts';
import type { CampaignRunner } from './state.ts';

export type CallOutcome = 'completed' | 'busy' | 'no-answer' | 'voicemail' | 'failed';
/** What became of an attempt, including the ways a call can fail to happen. */
export type AttemptResult = CallOutcome | 'aborted' | 'not-placed-retryable' | 'not-placed-balance';

/** Places one lead's call and resolves when the call is over. Must honour `signal` (BYE/CANCEL). */
export type PlaceCall = (lead: Lead, campaign: Campaign, signal: AbortSignal) => Promise<CallOutcome>;

/** How a `calling` lead found at start is settled. */
export type InterruptedAttempt = CallOutcome | 'not-placed' | 'unknown';

export interface LeadPatch {
  status: LeadStatus;
  lastOutcome: string | null;
  nextAttemptAt: number | null;
  /** Added to attempts (-1 gives an attempt back). */
  attemptsDelta?: number;
}

/** The dialer's view of the store (dialer-store.ts implements it over SQLite). */
export interface DialerStore {
  /** This node's name as a lead's lease holder, and how long a claim lasts unrenewed. */
  readonly holder: string;
  readonly leaseTtlMs: number;
  campaign(id: number): Promise<Campaign | undefined>;
  /** in-progress → completed; false if the status changed meanwhile. */
  complete(id: number): Promise<boolean>;
  /** Pending leads due at `nowMs` (no retry time, or one that has passed), oldest first. */
  dueLeads(campaignId: number, nowMs: number, limit: number): Promise<Lead[]>;
  /** Earliest retry time of a pending lead after `nowMs`, or null. */
  nextRetryAt(campaignId: number, nowMs: number): Promise<number | null>;
  /** Pending plus calling leads. */
  openCount(campaignId: number): Promise<number>;
  /**
   * pending → calling for this attempt, only while fewer than `cap` of the campaign's leads are
   * calling (on any node) when a cap is given; false when the lead was taken or the cap reached.
   */
  claim(leadId: number, attemptId: string, cap?: { campaignId: number; max: number }): Promise<boolean>;
  /** Leads of the campaign being called now, by any node. */
  callingCount(campaignId: number): Promise<number>;
  /** Engine nodes alive now (their presence leases, docs/WORK-ONCE.md); at least 1. */
  liveNodes(nowMs: number): Promise<number>;
  /** Writes the attempt's result if the lead still carries this attempt; false otherwise. */
  finish(leadId: number, attemptId: string, patch: LeadPatch): Promise<boolean>;
  /** Pushes the leases of these calling leads on; returns the ids still held by this node. */
  renew(leadIds: readonly number[]): Promise<number[]>;
  callingLeads(campaignId: number): Promise<Lead[]>;
  interrupted(lead: Lead): Promise<InterruptedAttempt>;
  timeZoneOf(assistantId: number): Promise<string | undefined>;
  covers(accountId: number, micros: number): boolean | Promise<boolean>;
}

export interface DialerOptions {
  maxAttempts?: number;
  retryDelayMs?: number;
  /** Re-check interval while paused (balance, calling hours) and after retryable refusals. */
  pollMs?: number;
  minBalanceMicros?: number;
  newAttemptId?: () => string;
  onError?: (err: unknown, campaignId: number) => void;
}

const DEFAULTS = { maxAttempts: 3, retryDelayMs: 15 * 60_000, pollMs: 60_000, minBalanceMicros: CALL_PRICE_PER_MINUTE_MICROS };

/** Pure: the lead's next state after an attempt (`attempts` already counts this one). */
export function afterAttempt(attempts: number, result: AttemptResult, nowMs: number, o: { maxAttempts: number; retryDelayMs: number; pollMs: number }): LeadPatch {
  const retry = attempts < o.maxAttempts;
  switch (result) {
    case 'completed':
      return { status: 'done', lastOutcome: 'completed', nextAttemptAt: null };
    case 'busy':
    case 'no-answer':
      return retry ? { status: 'pending', lastOutcome: result, nextAttemptAt: nowMs + o.retryDelayMs } : { status: 'failed', lastOutcome: result, nextAttemptAt: null };
    case 'voicemail':
      return retry ? { status: 'pending', lastOutcome: result, nextAttemptAt: nowMs + o.retryDelayMs } : { status: 'done', lastOutcome: result, nextAttemptAt: null };
    case 'aborted':
      return retry ? { status: 'pending', lastOutcome: 'aborted', nextAttemptAt: null } : { status: 'failed', lastOutcome: 'aborted', nextAttemptAt: null };
    case 'not-placed-retryable':
      return { status: 'pending', lastOutcome: 'not-placed', nextAttemptAt: nowMs + o.pollMs, attemptsDelta: -1 };
    case 'not-placed-balance':
      // Not due at once: if placeCall's own balance bar is higher than ours, no tight loop.
      return { status: 'pending', lastOutcome: 'insufficient-balance', nextAttemptAt: nowMs + o.pollMs, attemptsDelta: -1 };
    case 'failed':
      return { status: 'failed', lastOutcome: 'failed', nextAttemptAt: null };
  }
}

/** Pure: how a thrown placeCall error counts. */
export function errorResult(err: unknown, aborted: boolean): AttemptResult {
  if (aborted) return 'aborted';
  if (err instanceof AppError && err.code === 'INSUFFICIENT_BALANCE') return 'not-placed-balance';
  if (err instanceof AppError && err.retryable) return 'not-placed-retryable';
  return 'failed';
}

interface Run {
  id: number;
  stopped: boolean;
  active: Map<number, AbortController>;
  calls: Set<Promise<void>>;
  timer: Timer | undefined;
  pumping: Promise<void> | undefined;
  again: boolean;
  paused: 'balance' | 'hours' | null;
}

export class CampaignDialer implements CampaignRunner {
  private readonly runs = new Map<number, Run>();
  private readonly o: Required<Omit<DialerOptions, 'onError'>> & Pick<DialerOptions, 'onError'>;
  private seq = 0;
  private renewTimer: Timer | undefined;

  constructor(
    private readonly store: DialerStore,
    private readonly placeCall: PlaceCall,
    private readonly clock: Clock,
    options: DialerOptions = {},
  ) {
    this.o = { ...DEFAULTS, newAttemptId: () => `${clock.now().toString(36)}-${(++this.seq).toString(36)}`, ...options };
  }

  /** Begins (or resumes after a restart) dialing an in-progress campaign; idempotent. */
  async start(campaignId: number): Promise<void> {
    const existing = this.runs.get(campaignId);
    if (existing) {
      this.kick(existing);
      return;
    }
    const campaign = await this.store.campaign(campaignId);
    if (!campaign || campaign.status !== 'in-progress') return;
    const run: Run = { id: campaignId, stopped: false, active: new Map(), calls: new Set(), timer: undefined, pumping: undefined, again: false, paused: null };
    this.runs.set(campaignId, run);
    this.kick(run);
  }

  /** No new call; ongoing calls are aborted; resolves once they have settled. */
  async stop(campaignId: number): Promise<void> {
    const run = this.runs.get(campaignId);
    if (!run) return;
    run.stopped = true;
    run.timer?.cancel();
    for (const ac of run.active.values()) ac.abort(new AppError('The campaign was stopped.', 409, 'CAMPAIGN_STOPPED'));
    await run.pumping;
    await Promise.allSettled([...run.calls]);
    this.runs.delete(campaignId);
  }

  async close(): Promise<void> {
    await Promise.all([...this.runs.keys()].map((id) => this.stop(id)));
    this.renewTimer?.cancel();
    this.renewTimer = undefined;
  }

  /** For status displays and tests. */
  status(campaignId: number): { running: boolean; active: number; paused: 'balance' | 'hours' | null } {
    const run = this.runs.get(campaignId);
    return { running: run !== undefined, active: run?.active.size ?? 0, paused: run?.paused ?? null };
  }

  /** Resolves when the run has nothing in flight but its calls (tests wait on this). */
  async settled(campaignId: number): Promise<void> {
    for (let run = this.runs.get(campaignId); run?.pumping; run = this.runs.get(campaignId)) await run.pumping;
  }

  /**
   * Settles the `calling` leads nobody carries any more (see the header); returns when the
   * earliest lease held by another node lapses, or null.
   */
  private async resolveInterrupted(run: Run): Promise<number | null> {
    const now = this.clock.now();
    let nextLapse: number | null = null;
    for (const lead of await this.store.callingLeads(run.id)) {
      const ours = lead.leaseHolder === this.store.holder;
      if (run.active.has(lead.id) || (!ours && !lapsed(lead.leaseExpiresAt, now))) {
        if (!ours && lead.leaseExpiresAt !== null) nextLapse = Math.min(nextLapse ?? Infinity, lead.leaseExpiresAt);
        continue;
      }
      const attemptId = (lead.lastOutcome ?? '').replace(/^calling:/, '');
      const found = await this.store.interrupted(lead);
      const patch: LeadPatch =
        found === 'not-placed'
          ? { status: 'pending', lastOutcome: 'not-placed', nextAttemptAt: null, attemptsDelta: -1 }
          : found === 'unknown'
            ? { status: 'failed', lastOutcome: 'failed-unknown', nextAttemptAt: null }
            : afterAttempt(lead.attempts, found, now, this.o);
      await this.store.finish(lead.id, attemptId, patch);
    }
    return nextLapse;
  }

  /** Runs the pump, coalescing kicks that arrive while it runs into one more pass. */
  private kick(run: Run): void {
    if (run.stopped) return;
    if (run.pumping) {
      run.again = true;
      return;
    }
    run.pumping = this.pump(run)
      .catch((err: unknown) => {
        this.o.onError?.(err, run.id);
        this.schedule(run, this.o.pollMs);
      })
      .finally(() => {
        run.pumping = undefined;
        if (run.again) {
          run.again = false;
          this.kick(run);
        }
      });
  }

  private schedule(run: Run, delayMs: number): void {
    if (run.stopped) return;
    run.timer?.cancel();
    run.timer = this.clock.setTimeout(() => {
      run.timer = undefined;
      this.kick(run);
    }, delayMs);
  }

  private async pump(run: Run): Promise<void> {
    const campaign = await this.store.campaign(run.id);
    if (run.stopped) return;
    if (!campaign || campaign.status !== 'in-progress') {
      // Stopped elsewhere (another node, a manual edit): behave as stop() would.
      void this.stop(run.id);
      return;
    }
    const now = this.clock.now();
    const tz = campaign.callingHours?.timezone ?? (await this.store.timeZoneOf(campaign.assistantId)) ?? 'UTC';
    if (!withinCallingHours(campaign.callingHours, now, tz)) {
      run.paused = 'hours';
      this.schedule(run, this.o.pollMs);
      return;
    }
    const nextLapse = await this.resolveInterrupted(run);
    if (run.stopped) return;
    const cap = Math.max(1, campaign.maxConcurrentCalls);
    // This node's share of the cap: the nodes alive split it, so a node that fills its slots
    // first does not starve the others; a dead node's share returns when its presence lapses.
    const share = Math.ceil(cap / Math.max(1, await this.store.liveNodes(now)));
    while (!run.stopped && run.active.size < share) {
      if (!(await this.store.covers(campaign.accountId, this.o.minBalanceMicros))) {
        run.paused = 'balance';
        this.schedule(run, this.o.pollMs);
        return;
      }
      // max_concurrent_calls holds for the campaign, whichever nodes carry its calls.
      if ((await this.store.callingCount(run.id)) >= cap) break;
      const [lead] = await this.store.dueLeads(run.id, now, 1);
      if (!lead) break;
      const attemptId = this.o.newAttemptId();
      if (!(await this.store.claim(lead.id, attemptId, { campaignId: run.id, max: cap }))) continue;
      if (run.stopped) {
        // Stopped between the claim and the call: the lead was never dialled.
        await this.store.finish(lead.id, attemptId, { status: 'pending', lastOutcome: null, nextAttemptAt: lead.nextAttemptAt, attemptsDelta: -1 });
        return;
      }
      this.launch(run, campaign, { ...lead, status: 'calling', attempts: lead.attempts + 1, lastOutcome: `calling:${attemptId}` }, attemptId);
    }
    run.paused = null;
    if (run.stopped) return;
    if (run.active.size === 0 && (await this.store.openCount(run.id)) === 0) {
      await this.store.complete(run.id);
      this.runs.delete(run.id);
      return;
    }
    if (run.active.size < cap) {
      const next = await this.store.nextRetryAt(run.id, now);
      const wake = Math.min(next ?? Infinity, nextLapse ?? Infinity);
      if (wake !== Infinity) this.schedule(run, Math.max(0, wake - now));
    }
  }

  /** Renews the leases of every call this node carries, while it carries any. */
  private armRenewal(): void {
    if (this.renewTimer) return;
    this.renewTimer = this.clock.setTimeout(() => {
      this.renewTimer = undefined;
      void this.renewAll()
        .catch((err: unknown) => this.o.onError?.(err, 0))
        .finally(() => {
          if ([...this.runs.values()].some((r) => r.active.size > 0)) this.armRenewal();
        });
    }, renewEveryMs({ ttlMs: this.store.leaseTtlMs }));
  }

  private async renewAll(): Promise<void> {
    const active = new Map<number, AbortController>();
    for (const run of this.runs.values()) for (const [id, ac] of run.active) active.set(id, ac);
    if (active.size === 0) return;
    const held = new Set(await this.store.renew([...active.keys()]));
    for (const [id, ac] of active) {
      // Finished meanwhile (its lease cleared by its own finish): nothing to hang up.
      if (!held.has(id) && !ac.signal.aborted && [...this.runs.values()].some((r) => r.active.get(id) === ac)) {
        ac.abort(new AppError('The lead was taken over by another node.', 409, 'LEASE_LOST'));
      }
    }
  }

  private launch(run: Run, campaign: Campaign, lead: Lead, attemptId: string): void {
    const ac = new AbortController();
    run.active.set(lead.id, ac);
    const call = (async () => {
      let result: AttemptResult;
      try {
        // The fence: a node that stalled past its lease since the claim must not place the call.
        if (!(await this.store.renew([lead.id])).includes(lead.id)) throw new AppError('The lead lease lapsed before the call.', 409, 'LEASE_LOST', true);
        result = await this.placeCall(lead, campaign, ac.signal);
        // A call that ended because of stop counts as aborted unless it had reached an outcome
        // that needs no redial (completed: the conversation happened).
        if (ac.signal.aborted && result !== 'completed') result = 'aborted';
      } catch (err) {
        result = errorResult(err, ac.signal.aborted);
      }
      await this.store.finish(lead.id, attemptId, afterAttempt(lead.attempts, result, this.clock.now(), this.o));
    })()
      .catch((err: unknown) => this.o.onError?.(err, run.id))
      .finally(() => {
        run.active.delete(lead.id);
        run.calls.delete(call);
        this.kick(run);
      });
    run.calls.add(call);
    this.armRenewal();
  }
}
