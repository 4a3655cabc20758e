import type { Logger } from 'pino';
import { defaultOutbound, outboundRefusal } from '../net/outbound/index.ts';
import type { OutboxRepo, OutboxRow } from '../store/repos/outbox.ts';
import type { Clock, Timer } from '../util/clock.ts';
import { signedHeaders } from './signing.ts';
import { traceWebhook } from '../telemetry/tools.ts';
import type { SpanHandle } from '../telemetry/spans.ts';

export interface DeliveryOptions {
  outbox: OutboxRepo;
  /**
   * The account's signing secret(s) now: the current one, plus the previous one while a
   * rotation's overlap lasts (AccountsRepo.signingSecrets). Each signs the delivery.
   */
  secretFor(accountId: number): Promise<string | readonly string[] | undefined>;
  clock: Clock;
  logger: Logger;
  /** The guarded fetch for customer URLs (default: the guard without an allow-list). */
  fetch?: typeof fetch;
  pollMs?: number;
  timeoutMs?: number;
  maxAttempts?: number;
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /** This node's name as the holder of a row's attempt (default 'local'). */
  holder?: string;
  /** How long a claimed row stays this node's; the request is cut at half of it (default 30 s). */
  leaseTtlMs?: number;
}

export type DeliveryOutcome = 'delivered' | 'retry' | 'failed';
export const DELIVERY_OUTCOMES: readonly DeliveryOutcome[] = ['delivered', 'retry', 'failed'];

/** Delay before attempt `attempts + 1`: 5 s, 10 s, 20 s … capped at an hour. */
export function backoffMs(attempts: number, baseMs = 5_000, maxMs = 3_600_000): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, attempts - 1));
}

/** Where a row goes, for logs: scheme, host and port, never the path or query (tokens live there). */
function origin(url: string): string {
  return URL.canParse(url) ? new URL(url).origin : 'unparsable URL';
}

/**
 * Delivers the persisted outbox: due rows are POSTed signed; failures are retried with
 * exponential backoff until `maxAttempts`, then marked failed. All state is in the table, so a
 * restart simply picks up the pending rows; the webhook id stays the same across retries so
 * receivers can deduplicate.
 *
 * Several nodes (docs/WORK-ONCE.md): rows are claimed one by one with a lease (OutboxRepo.claimDue),
 * which counts the attempt; the request is cut at half the lease, so a live node always settles
 * its attempt before the lease could lapse. A row whose node died mid-attempt is claimed again
 * once the lease lapses, as the next attempt: every (event, attempt) is sent at most once, and the
 * `webhook-id` (the same for every attempt of an event) lets the receiver drop a repeat;
 * `webhook-attempt` says which attempt a request is.
 *
 * A URL the outbound guard refuses (it leads to a loopback, private, link-local, ... address)
 * fails at once, without retries: retrying would only probe the same internal address again.
 */
export class DeliveryWorker {
  private timer: Timer | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private readonly fetchImpl: typeof fetch;
  /** Attempts so far by outcome (for /metrics): delivered, retry (failed, tried again later), failed (given up or refused). */
  readonly outcomes: Record<DeliveryOutcome, number> = { delivered: 0, retry: 0, failed: 0 };

  constructor(private readonly opts: DeliveryOptions) {
    this.fetchImpl = opts.fetch ?? defaultOutbound().fetch;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
    await this.running;
  }

  /** A new event was enqueued: deliver soon rather than at the next poll. */
  kick(): void {
    if (!this.stopped) this.schedule(0);
  }

  /** Delivers every due row once; concurrent callers share one pass. */
  runDue(): Promise<void> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private schedule(ms: number): void {
    this.timer?.cancel();
    this.timer = this.opts.clock.setTimeout(() => {
      this.timer = undefined;
      void this.runDue().finally(() => {
        if (!this.stopped && !this.timer) this.schedule(this.opts.pollMs ?? 1_000);
      });
    }, ms);
  }

  private get holder(): string {
    return this.opts.holder ?? 'local';
  }

  private get leaseTtlMs(): number {
    return this.opts.leaseTtlMs ?? 30_000;
  }

  private async pass(): Promise<void> {
    for (;;) {
      const rows = await this.opts.outbox.claimDue(this.holder, this.opts.clock.now(), this.leaseTtlMs);
      if (rows.length === 0) return;
      await Promise.all(rows.map((r) => this.deliver(r)));
    }
  }

  private deliver(row: OutboxRow): Promise<void> {
    // The claim counted this attempt already.
    const attempts = row.attempts;
    return traceWebhook({ outboxId: row.id, attempt: attempts, url: row.url }, (span) => this.attempt(row, attempts, span));
  }

  private async attempt(row: OutboxRow, attempts: number, span: SpanHandle): Promise<void> {
    let error: string | undefined;
    let permanent = false;
    try {
      const secret = await this.opts.secretFor(row.accountId);
      if (!secret || secret.length === 0) throw new Error('account has no signing secret');
      const headers = signedHeaders(secret, `msg_${row.id}`, Math.floor(this.opts.clock.now() / 1000), row.payload);
      const res = await this.fetchImpl(row.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'Switchboard-Webhooks/1', 'webhook-attempt': String(attempts), ...headers },
        body: row.payload,
        signal: AbortSignal.timeout(Math.max(1, Math.min(this.opts.timeoutMs ?? 10_000, Math.floor(this.leaseTtlMs / 2)))),
        redirect: 'manual',
      });
      await res.body?.cancel();
      span.setAttributes({ 'http.response.status_code': res.status });
      if (res.status < 200 || res.status >= 300) error = `HTTP ${res.status}`;
    } catch (err) {
      error = (err as Error).message;
      permanent = outboundRefusal(err) !== undefined;
    }
    if (error === undefined) {
      this.outcomes.delivered++;
      await this.opts.outbox.markDelivered(row.id, attempts);
      return;
    }
    span.fail(error);
    if (permanent) {
      this.outcomes.failed++;
      this.opts.logger.warn({ outboxId: row.id, target: origin(row.url), error }, 'webhook delivery refused by the outbound guard');
      await this.opts.outbox.markFailed(row.id, attempts, error, this.holder);
      return;
    }
    if (attempts >= (this.opts.maxAttempts ?? 8)) {
      this.outcomes.failed++;
      this.opts.logger.warn({ outboxId: row.id, target: origin(row.url), error }, 'webhook delivery gave up');
      await this.opts.outbox.markFailed(row.id, attempts, error, this.holder);
      return;
    }
    this.outcomes.retry++;
    const next = this.opts.clock.now() + backoffMs(attempts, this.opts.baseBackoffMs, this.opts.maxBackoffMs);
    await this.opts.outbox.markRetry(row.id, attempts, next, error, this.holder);
  }
}
