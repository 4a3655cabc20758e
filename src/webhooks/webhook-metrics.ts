/**
 * The webhook outbox on /metrics, read at scrape time: rows waiting (pending, due now or in
 * backoff) and delivery attempts by outcome. Nothing is counted twice: the worker keeps plain
 * counts (delivery.ts `outcomes`), the counter mirrors them.
 */
import client from 'prom-client';
import { DELIVERY_OUTCOMES, type DeliveryOutcome } from './delivery.ts';

export interface WebhookStats {
  pending(): number;
  outcomes(): Readonly<Record<DeliveryOutcome, number>>;
}

export function registerWebhookMetrics(registry: client.Registry, stats: WebhookStats): void {
  new client.Gauge({
    name: 'switchboard_webhook_outbox_pending',
    help: 'Webhook events stored and not yet delivered nor given up',
    registers: [registry],
    collect() {
      this.set(stats.pending());
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
