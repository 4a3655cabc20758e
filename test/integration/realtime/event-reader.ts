/** Reads a connection's single event stream from tests, keeping everything it has seen. */
import type { RealtimeEvent } from '../../../src/providers/realtime/realtime.ts';

export class EventReader {
  readonly seen: RealtimeEvent[] = [];
  private readonly it: AsyncIterator<RealtimeEvent>;
  private done = false;

  constructor(events: AsyncIterable<RealtimeEvent>) {
    this.it = events[Symbol.asyncIterator]();
  }

  /** The next event matching `pred` (earlier ones stay in `seen`); throws on end or timeout. */
  async until<T extends RealtimeEvent['type']>(type: T, pred: (e: Extract<RealtimeEvent, { type: T }>) => boolean = () => true, timeoutMs = 5000): Promise<Extract<RealtimeEvent, { type: T }>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.done) throw new Error(`events ended before ${type}`);
      const left = deadline - Date.now();
      let timer: NodeJS.Timeout | undefined;
      const r = await Promise.race([
        this.it.next(),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting for ${type}; saw ${this.types().join(',')}`)), left))),
      ]).finally(() => clearTimeout(timer));
      if (r.done) {
        this.done = true;
        continue;
      }
      this.seen.push(r.value);
      if (r.value.type === type && pred(r.value as Extract<RealtimeEvent, { type: T }>)) return r.value as Extract<RealtimeEvent, { type: T }>;
    }
  }

  of<T extends RealtimeEvent['type']>(type: T): Extract<RealtimeEvent, { type: T }>[] {
    return this.seen.filter((e): e is Extract<RealtimeEvent, { type: T }> => e.type === type);
  }

  types(): string[] {
    return this.seen.map((e) => e.type);
  }
}
