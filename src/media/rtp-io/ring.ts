/**
 * A single-producer single-consumer ring of variable-length records in a SharedArrayBuffer: how
 * datagrams cross between the event-loop thread and the RTP I/O thread (./thread-io.ts,
 * ./worker.ts) without a postMessage or an allocation per packet. One ring per direction.
 *
 * Layout: a header of int32 words (write position, read position), then `capacity` bytes of
 * data. Positions count bytes for ever (mod 2^32); `position & (capacity - 1)` is the offset,
 * so the capacity is a power of two. Each record is a 4-byte length, then the body, padded to
 * 4 bytes. A record never wraps: when it does not fit before the end, the producer writes a
 * length of -1 there (skip to the start) and puts the record at offset 0.
 *
 * Only the producer stores the write position and only the consumer the read position, both
 * with Atomics after the bytes they cover, so a side that loads the other's position sees every
 * byte written before it moved. A full ring refuses the record (`reserve` returns -1): the
 * producer counts it as dropped rather than block.
 */

const WRITE = 0;
const READ = 1;
const HEADER_WORDS = 4;
const HEADER_BYTES = HEADER_WORDS * 4;
const LENGTH_BYTES = 4;
const WRAP = -1;

const align4 = (n: number): number => (n + 3) & ~3;

export class SpscRing {
  readonly capacity: number;
  /** The record bytes; bodies are at the offsets reserve() and peek() return. */
  readonly bytes: Uint8Array;
  /** The same bytes, for the fixed-size fields of a record. */
  readonly view: DataView;
  private readonly header: Int32Array;
  private readonly mask: number;
  /** Producer: the reservation not yet committed (bytes the write position moves by). */
  private reserved = 0;
  /** Consumer: the bytes the record peek() returned occupies (with a skipped tail, if any). */
  private peeked = 0;
  /** Body length of the record peek() returned. */
  peekLength = 0;

  constructor(readonly sab: SharedArrayBuffer) {
    this.capacity = sab.byteLength - HEADER_BYTES;
    if (this.capacity < 64 || (this.capacity & (this.capacity - 1)) !== 0) throw new RangeError(`ring capacity ${this.capacity} is not a power of two ≥ 64`);
    this.header = new Int32Array(sab, 0, HEADER_WORDS);
    this.bytes = new Uint8Array(sab, HEADER_BYTES, this.capacity);
    this.view = new DataView(sab, HEADER_BYTES, this.capacity);
    this.mask = this.capacity - 1;
  }

  /** The memory for a ring with `capacity` bytes of records (a power of two). */
  static create(capacity: number): SharedArrayBuffer {
    return new SharedArrayBuffer(HEADER_BYTES + capacity);
  }

  /** Largest body a record may have: half the ring, so one always fits in an empty ring. */
  get maxRecord(): number {
    return this.capacity / 2 - LENGTH_BYTES;
  }

  /** Bytes in use (records not yet released), from either side. */
  get used(): number {
    return (Atomics.load(this.header, WRITE) - Atomics.load(this.header, READ)) >>> 0;
  }

  get isEmpty(): boolean {
    return Atomics.load(this.header, WRITE) === Atomics.load(this.header, READ);
  }

  // ---- producer ----

  /**
   * Room for a record of `length` bytes: the offset of its body in `bytes`/`view`, or -1 when
   * the ring is too full. Write the body there, then commit(). A second reserve() before the
   * commit replaces the first.
   */
  reserve(length: number): number {
    if (length > this.maxRecord || length < 0) throw new RangeError(`ring record of ${length} bytes (max ${this.maxRecord})`);
    const write = Atomics.load(this.header, WRITE);
    const free = this.capacity - ((write - Atomics.load(this.header, READ)) >>> 0);
    const offset = write & this.mask;
    const size = LENGTH_BYTES + align4(length);
    const tail = this.capacity - offset;
    if (size <= tail) {
      if (size > free) return -1;
      this.reserved = size;
      this.view.setInt32(offset, length, true);
      return offset + LENGTH_BYTES;
    }
    // Skip the tail (always ≥ 4 bytes: everything is 4-aligned) and start over at 0.
    if (tail + size > free) return -1;
    this.view.setInt32(offset, WRAP, true);
    this.view.setInt32(0, length, true);
    this.reserved = tail + size;
    return LENGTH_BYTES;
  }

  /** Publishes the reserved record to the consumer. */
  commit(): void {
    if (this.reserved === 0) throw new Error('commit() without reserve()');
    Atomics.store(this.header, WRITE, (Atomics.load(this.header, WRITE) + this.reserved) | 0);
    this.reserved = 0;
  }

  // ---- consumer ----

  /** The offset of the next record's body, or -1 when there is none; its length is `peekLength`. */
  peek(): number {
    const read = Atomics.load(this.header, READ);
    if (read === Atomics.load(this.header, WRITE)) return -1;
    let offset = read & this.mask;
    let length = this.view.getInt32(offset, true);
    let skipped = 0;
    if (length === WRAP) {
      skipped = this.capacity - offset;
      offset = 0;
      length = this.view.getInt32(0, true);
    }
    this.peekLength = length;
    this.peeked = skipped + LENGTH_BYTES + align4(length);
    return offset + LENGTH_BYTES;
  }

  /** Frees the record peek() returned. */
  release(): void {
    if (this.peeked === 0) throw new Error('release() without peek()');
    Atomics.store(this.header, READ, (Atomics.load(this.header, READ) + this.peeked) | 0);
    this.peeked = 0;
  }
}
