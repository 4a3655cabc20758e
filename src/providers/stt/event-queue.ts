/**
 * A single-consumer async queue of events. Providers push from socket and request callbacks,
 * which must never block, so the queue is unbounded; transcript events are tiny and few.
 */
export class EventQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiter: ((r: IteratorResult<T>) => void) | undefined;
  private ended = false;
  private iterated = false;

  get isEnded(): boolean {
    return this.ended;
  }

  push(item: T): void {
    if (this.ended) return;
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      w({ value: item, done: false });
    } else {
      this.items.push(item);
    }
  }

  /** Items already queued are still delivered; nothing pushed after this is. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    const w = this.waiter;
    this.waiter = undefined;
    w?.({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    // Two readers would each see half the events; that is always a bug in the caller.
    if (this.iterated) throw new Error('an STT event stream can be iterated only once');
    this.iterated = true;
    return {
      next: () => {
        const item = this.items.shift();
        if (item !== undefined) return Promise.resolve({ value: item, done: false });
        if (this.ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (this.waiter = resolve));
      },
      return: () => {
        this.items.length = 0;
        this.end();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
