import type { OutboxRepo } from '../store/repos/outbox.ts';
import type { Clock } from '../util/clock.ts';

/** Event names on the wire (`type` of the body). */
export type EventType = 'conversation.ended' | 'message.read_receipt' | 'call.completed';

/**
 * The envelope of every webhook body: `{type, timestamp, data}` as Standard Webhooks suggests.
 * Serialized once at enqueue time; retries send (and sign) exactly these bytes.
 */
export function eventBody(type: EventType, nowMs: number, data: Record<string, unknown>): string {
  return JSON.stringify({ type, timestamp: new Date(nowMs).toISOString(), data });
}

export class EventPublisher {
  constructor(
    private readonly outbox: OutboxRepo,
    private readonly clock: Clock,
    /** Wakes the delivery worker. */
    private readonly onEnqueued: () => void = () => {},
  ) {}

  async publish(accountId: number, url: string, type: EventType, data: Record<string, unknown>): Promise<number> {
    const id = await this.outbox.enqueue(accountId, type, url, eventBody(type, this.clock.now(), data));
    this.onEnqueued();
    return id;
  }

  /**
   * Writes the event through `outbox` (one built over the caller's transaction) without waking
   * the worker; call `kick()` once that transaction has committed.
   */
  async enqueueIn(outbox: OutboxRepo, accountId: number, url: string, type: EventType, data: Record<string, unknown>): Promise<number> {
    return outbox.enqueue(accountId, type, url, eventBody(type, this.clock.now(), data));
  }

  kick(): void {
    this.onEnqueued();
  }
}
