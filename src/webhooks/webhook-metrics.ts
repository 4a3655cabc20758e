/**
 * The webhook outbox on /metrics, read at scrape time: rows waiting (pending, due now or in
 * backoff; counted in the store at most every 5 s) and delivery attempts by outcome. Nothing is counted twice: the worker keeps plain
 * counts (delivery.ts `outcomes`), the counter mirrors them.
 */
import client from 'prom-client';
import { DELIVERY_OUTCOMES, type DeliveryOutcome } from './delivery.ts';

/**
 * How long a pending count read from the store is reused. /metrics takes no key, so every scrape
 * would otherwise run a COUNT over the outbox; anyone could make the engine run them back to back.
 */
export const PENDING_CACHE_MS = 5_000;

/** `read()` at most once per `ttlMs` of `now()`; the value read last in between. */
export function cachedReading(read: () => number | Promise<number>, now: () => number, ttlMs: number): () => Promise<number> {
  let value = 0;
  let readAtMs: number | undefined;
  return async () => {
    const t = now();
    if (readAtMs === undefined || t - readAtMs >= ttlMs || t < readAtMs) {
      readAtMs = t;
      value = await read();
    }
    return value;
  };
}

export interface WebhookStats {
  pending(): number | Promise<number>;
  outcomes(): Readonly<Record<DeliveryOutcome, number>>;
}

/** `now` is the clock the pending count's cache runs on (ms). */
export function registerWebhookMetrics(registry: client.Registry, stats: WebhookStats, now: () => number = Date.now): void {
  const pending = cachedReading(() => stats.pending(), now, PENDING_CACHE_MS);
  new client.Gauge({
    name: 'switchboard_webhook_outbox_pending',
    help: 'Webhook events stored and not yet delivered nor given up',
    registers: [registry],
    async collect() {
      this.set(await pending());
    },
  });
  new client.Counter({
    name: 'switchboard_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: delivered, retry (failed, tried again later), failed (given up, or refused by the outbound guard)',
    labelNames: ['outcome'] as const,
    registers: [registry],
    collect() {
      const counts = stats.outcomes();
      this.reset();
      for (const outcome of DELIVERY_OUTCOMES) this.inc({ outcome }, counts[outcome]);
    },
  });
}
