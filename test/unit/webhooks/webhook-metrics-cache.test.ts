/**
 * /metrics takes no key, so the webhook outbox's pending count (a COUNT in the store) is read at
 * most once per 5 s whatever the scrape rate; scrapes in between answer the value read last.
 * Manual clock, a real prom-client registry.
 */
import client from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/util/clock.ts';
import { PENDING_CACHE_MS, registerWebhookMetrics } from '../../../src/webhooks/webhook-metrics.ts';

const outcomes = { delivered: 0, retry: 0, failed: 0 };

async function pendingOf(registry: client.Registry): Promise<number> {
  const text = await registry.metrics();
  return Number(/^switchboard_webhook_outbox_pending (\d+)$/m.exec(text)![1]);
}

describe('webhook outbox pending gauge', () => {
  it('counts in the store at most once per 5 s of scrapes', async () => {
    const clock = new ManualClock();
    const registry = new client.Registry();
    let counts = 0;
    let stored = 3;
    registerWebhookMetrics(registry, { pending: () => (counts++, stored), outcomes: () => outcomes }, () => clock.now());
    for (let i = 0; i < 50; i++) expect(await pendingOf(registry)).toBe(3);
    expect(counts).toBe(1);
    stored = 7;
    clock.advance(PENDING_CACHE_MS - 1);
    expect(await pendingOf(registry)).toBe(3);
    expect(counts).toBe(1);
    clock.advance(1);
    expect(await pendingOf(registry)).toBe(7);
    expect(counts).toBe(2);
    expect(PENDING_CACHE_MS).toBe(5_000);
  });
});
