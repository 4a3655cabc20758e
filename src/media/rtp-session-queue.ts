/**
 * Bounded single-consumer async queue: the hand-off between the playout clock (which must never
 * wait) and whoever reads inbound audio (which may stall: a slow VAD, a GC pause). When the
 * reader falls behind, the oldest items go first, because in a conversation stale audio is worth
 * less than current audio, and memory stays bounded however long the reader is gone.
 */
export class DropOldestQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private head = 0;
  private waiter: ((result: IteratorResult<T>) => void) | undefined;
  private ended = false;
  private droppedCount = 0;
  private readonly parkReader = (resolve: (result: IteratorResult<T>) => void): void => {
    this.waiter = resolve;
  };

  constructor(readonly capacity: number) {
    if (capacity < 1) throw new RangeError('queue capacity must be at least 1');
  }

  get dropped(): number {
    return this.droppedCount;
  }

  get size(): number {
    return this.items.length - this.head;
  }

  /** Never blocks. Returns false when the item was refused because the queue has ended. */
  push(item: T): boolean {
    if (this.ended) return false;
    const waiter = this.waiter;
    if (waiter) {
      this.waiter = undefined;
      waiter({ value: item, done: false });
      return true;
    }
    if (this.size >= this.capacity) {
      this.head++;
      this.droppedCount++;
    }
    this.items.push(item);
    // Compact now and then instead of shift() per item (shift is O(n) on large arrays).
    if (this.head > 64 && this.head * 2 > this.items.length) {
      this.items.splice(0, this.head);
      this.head = 0;
    }
    return true;
  }

  /** No more items: a waiting reader finishes, later reads drain what is left and then finish. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.size > 0) {
          const value = this.items[this.head]!;
          this.items[this.head++] = undefined as T;
          return Promise.resolve({ value, done: false });
        }
        if (this.ended) return Promise.resolve({ value: undefined, done: true });
        if (this.waiter) return Promise.reject(new Error('DropOldestQueue has a single reader'));
        // The executor is made once: per read only the promise (and its resolvers) are new.
        return new Promise(this.parkReader);
      },
      // The reader leaving (break out of for-await) does not stop the producer: frames keep
      // being dropped, oldest first, so a reader can also come back later.
      return: () => Promise.resolve({ value: undefined, done: true }),
    };
  }
}
