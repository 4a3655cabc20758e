/**
 * Runs queued completions a few per event-loop turn. A helper thread's batch (VAD, denoiser)
 * comes back with results for a hundred calls at once; settling them all in one go runs every
 * call's continuation (its detector, its STT write, its next frame) back to back, a block of a
 * few milliseconds that a media-clock pass falling due meanwhile must wait behind, and its RTP
 * packets with it. Sliced, at most `perTurn` results are settled per turn (each slice's promise
 * continuations run right after it; callbacks run inside it), and the turns between slices let
 * due timers run first.
 */
export class TurnSlicer<T> {
  private items: T[] = [];
  private head = 0;
  private scheduled = false;
  private readonly drain = (): void => {
    this.scheduled = false;
    const end = Math.min(this.items.length, this.head + this.perTurn);
    // The next slice is queued before this one runs: work its items set off for the next turn
    // (a helper's next batch, which batches whatever arrives before it starts) comes after it.
    if (end < this.items.length) this.schedule();
    while (this.head < end) {
      const item = this.items[this.head]!;
      this.items[this.head++] = undefined as T;
      this.run(item);
    }
    if (this.head === this.items.length) {
      this.items.length = 0;
      this.head = 0;
    }
  };

  constructor(
    /** Settles one item. It must not throw. */
    private readonly run: (item: T) => void,
    readonly perTurn: number,
  ) {
    if (!(perTurn >= 1)) throw new RangeError(`perTurn must be at least 1, got ${perTurn}`);
  }

  /** Items waiting to be settled. */
  get size(): number {
    return this.items.length - this.head;
  }

  /** Settle `item` in a later turn, after those added before it. */
  add(item: T): void {
    this.items.push(item);
    if (!this.scheduled) this.schedule();
  }

  private schedule(): void {
    this.scheduled = true;
    setImmediate(this.drain);
  }
}
