/**
 * The send timing core of the RTP I/O thread (./worker.ts): packets come in with the time they
 * are due and leave in order of it. Pure: the worker gives it the time.
 *
 * Within one lane (a socket) packets also leave in the order they were handed over: a packet
 * due earlier than one queued before it on the same socket (a talkspurt's first packet, "now",
 * right after the last comfort-noise packet, due a few ms ahead) waits for that one. Sequence
 * numbers are given in hand-over order, so anything else would reorder the stream. Across lanes
 * only the due times count; equal times keep hand-over order.
 */

interface Entry<T> {
  at: number;
  seq: number;
  lane: number;
  item: T;
}

export class DueQueue<T> {
  private heap: Array<Entry<T>> = [];
  private seq = 0;
  /** Per lane, the due time of the last packet handed over (the floor for the next one). */
  private readonly laneDue = new Map<number, number>();

  get size(): number {
    return this.heap.length;
  }

  /** When the earliest packet is due (Infinity: none queued). */
  get nextDue(): number {
    return this.heap[0]?.at ?? Infinity;
  }

  push(lane: number, due: number, item: T): void {
    const floor = this.laneDue.get(lane);
    const at = floor !== undefined && floor > due ? floor : due;
    this.laneDue.set(lane, at);
    this.insert({ at, seq: this.seq++, lane, item });
  }

  /** The earliest packet if it is due at or before `until` (removed), else undefined. */
  shift(until: number): T | undefined {
    const top = this.heap[0];
    if (!top || top.at > until) return undefined;
    this.removeAt(0);
    return top.item;
  }

  /** Removes every packet of `lane`, in hand-over order, and forgets the lane. */
  takeLane(lane: number): T[] {
    const mine = this.heap.filter((e) => e.lane === lane).sort((a, b) => a.seq - b.seq);
    if (mine.length > 0) {
      this.heap = this.heap.filter((e) => e.lane !== lane);
      // Re-heapify what is left (rare: a socket closing with packets still queued).
      const rest = this.heap;
      this.heap = [];
      for (const e of rest) this.insert(e);
    }
    this.laneDue.delete(lane);
    return mine.map((e) => e.item);
  }

  private insert(entry: Entry<T>): void {
    const heap = this.heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  private removeAt(index: number): void {
    const heap = this.heap;
    const last = heap.pop()!;
    if (index === heap.length) return;
    heap[index] = last;
    let i = index;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && before(heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && before(heap[r]!, heap[m]!)) m = r;
      if (m === i) break;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  }
}

function before<T>(a: Entry<T>, b: Entry<T>): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
