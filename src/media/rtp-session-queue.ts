/**
 * Bounded single-consumer async queue: the hand-off between the playout clock (which must never
 * wait) and whoever reads inbound audio (which may stall: a slow VAD, a GC pause). When the
 * reader falls behind, the oldest items go first, because in a conversation stale audio is worth
 * less than current audio, and memory stays bounded however long the reader is gone.
 *
 * Two ways to read it, one reader at a time:
 * - `for await`: a promise, a result object and an async resumption per item;
 * - `pipe(reader)`: each item is handed to `reader.item()` in the producer's own turn (the
 *   media clock's playout), with nothing allocated. The reader pauses the pipe while it works on
 *   an item and resumes it when done; meanwhile items queue (oldest dropped) exactly as they do
 *   for a slow `for await` reader. At 50 frames a second per call, the difference is a visible
 *   share of all the garbage the event loop makes (docs/bench-history.md, 2026-11-26 19:46).
 */
export class DropOldestQueue<T> implements AsyncIterable<T>, Pipeable<T> {
  private readonly items: T[] = [];
  private head = 0;
  private waiter: ((result: IteratorResult<T>) => void) | undefined;
  private ended = false;
  private droppedCount = 0;
  private piped: PipeReader<T> | undefined;
  private paused = false;
  /** A delivery loop is running (a reader's resume() inside item() only unpauses). */
  private delivering = false;
  private endDelivered = false;
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
    if (this.piped && !this.paused && !this.delivering && this.size === 0) {
      this.handTo(this.piped, item);
      return true;
    }
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
    if (this.piped && !this.paused) this.deliver();
    return true;
  }

  /**
   * Read every item through `reader`, synchronously as it is pushed. The pipe starts paused:
   * `resume()` delivers what is queued and opens it. A reader that throws is detached and ended
   * with the error.
   */
  pipe(reader: PipeReader<T>): PipeControl {
    if (this.piped || this.waiter) throw new Error('DropOldestQueue has a single reader');
    this.piped = reader;
    this.endDelivered = false;
    this.paused = true;
    return {
      pause: () => {
        this.paused = true;
      },
      resume: () => {
        if (this.piped !== reader) return;
        this.paused = false;
        this.deliver();
      },
      stop: () => {
        if (this.piped !== reader) return;
        this.piped = undefined;
        this.paused = false;
      },
    };
  }

  /**
   * The reader runs inside the producer's turn (a media clock pass shared by every call), so a
   * reader that throws is detached and ended with the error rather than let it reach the clock.
   */
  private handTo(reader: PipeReader<T>, value: T): void {
    try {
      reader.item(value);
    } catch (error) {
      if (this.piped !== reader) return;
      this.piped = undefined;
      this.paused = false;
      try {
        reader.end(error);
      } catch {
        // nothing more to tell it
      }
    }
  }

  /** Hands queued items (then the end) to the piped reader until it pauses or none is left. */
  private deliver(): void {
    if (this.delivering) return;
    const reader = this.piped!;
    this.delivering = true;
    try {
      while (!this.paused && this.piped === reader && this.size > 0) {
        const value = this.items[this.head]!;
        this.items[this.head++] = undefined as T;
        this.handTo(reader, value);
      }
    } finally {
      this.delivering = false;
    }
    if (this.ended && this.piped === reader && !this.paused && this.size === 0 && !this.endDelivered) {
      this.endDelivered = true;
      reader.end();
    }
  }

  /** No more items: a waiting reader finishes, later reads drain what is left and then finish. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.piped) {
      if (!this.paused) this.deliver();
      return;
    }
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
        if (this.waiter || this.piped) return Promise.reject(new Error('DropOldestQueue has a single reader'));
        // The executor is made once: per read only the promise (and its resolvers) are new.
        return new Promise(this.parkReader);
      },
      // The reader leaving (break out of for-await) does not stop the producer: frames keep
      // being dropped, oldest first, so a reader can also come back later.
      return: () => Promise.resolve({ value: undefined, done: true }),
    };
  }
}

/** A reader that takes items as they come (DropOldestQueue.pipe). */
export interface PipeReader<T> {
  item(value: T): void;
  /** The source ended and every item was delivered; or, with an error, reading failed (the source or the reader threw). */
  end(error?: unknown): void;
}

export interface PipeControl {
  /** No item until resume(); a reader pauses while it works on one. */
  pause(): void;
  /** Delivers what queued meanwhile, then items as they come. May run item() before returning. */
  resume(): void;
  /**
   * The reader leaves (as `break` out of a for-await): no item nor end reaches it any more. A
   * queue goes on taking items (oldest dropped), so a reader can come back later.
   */
  stop(): void;
}

/** A source that can be read by `pipe` as well as by `for await`. */
export interface Pipeable<T> {
  pipe(reader: PipeReader<T>): PipeControl;
}

const isPipeable = <T>(source: AsyncIterable<T>): source is AsyncIterable<T> & Pipeable<T> =>
  typeof (source as Partial<Pipeable<T>>).pipe === 'function';

/**
 * Read any async iterable through a PipeReader, paused until `resume()`: by `pipe` where the
 * source offers it, else by a pump that asks the source for the next item only while the reader is not paused, as a pulling
 * loop would. A source or reader that throws ends the reader with the error.
 */
export function readThrough<T>(source: AsyncIterable<T>, reader: PipeReader<T>): PipeControl {
  if (isPipeable(source)) return source.pipe(reader);
  let paused = true;
  let stopped = false;
  let wake: (() => void) | undefined;
  const unpause = (): void => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const it = source[Symbol.asyncIterator]();
  void (async () => {
    try {
      for (;;) {
        while (paused && !stopped) await new Promise<void>((r) => (wake = r));
        if (stopped) return;
        const r = await it.next();
        if (stopped) return;
        if (r.done) break;
        reader.item(r.value);
      }
      reader.end();
    } catch (err) {
      if (!stopped) reader.end(err);
    }
  })();
  return {
    pause: () => {
      paused = true;
    },
    resume: () => {
      paused = false;
      unpause();
    },
    stop: () => {
      if (stopped) return;
      stopped = true;
      unpause();
      void it.return?.();
    },
  };
}
