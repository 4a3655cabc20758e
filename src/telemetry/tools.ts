/**
 * Tool calls and webhook deliveries as spans (`tool.call`, `webhook.delivery`); the guarded
 * fetch they make inside carries the span in `traceparent`.
 */
import type { SpanHandle } from './spans.ts';
import { NOOP_HANDLE, traced, tracingOn } from './spans.ts';

/** A tool run in a `tool.call` span; a result with an `error` marks the span failed. */
export function traceTool(name: string, run: () => Promise<Record<string, unknown>>): Promise<Record<string, unknown>> {
  if (!tracingOn()) return run();
  return traced('tool.call', { 'switchboard.tool.name': name }, async (span) => {
    const result = await run();
    if (typeof result.error === 'string') span.fail(result.error);
    return result;
  });
}

/**
 * One webhook delivery attempt in a `webhook.delivery` span of its own trace: deliveries come
 * from the outbox, retried long after whatever enqueued them.
 */
export function traceWebhook<T>(attrs: { outboxId: number; attempt: number; url: string }, fn: (span: SpanHandle) => Promise<T>): Promise<T> {
  if (!tracingOn()) return fn(NOOP_HANDLE);
  const host = URL.canParse(attrs.url) ? new URL(attrs.url).host : 'unparsable';
  return traced('webhook.delivery', { 'switchboard.webhook.outbox_id': attrs.outboxId, 'switchboard.webhook.attempt': attrs.attempt, 'server.address': host }, fn, { root: true });
}
