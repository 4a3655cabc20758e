/**
 * The SPSC ring and the record layout on top of it (src/media/rtp-io/ring.ts, records.ts): order,
 * wrap-around at every offset, a full ring refusing records, and many sockets' records mixed.
 */
import { describe, expect, it } from 'vitest';
import { SpscRing } from '../../../../src/media/rtp-io/ring.ts';
import {
  AddressCache,
  DROPPED,
  PACKET,
  payloadLength,
  payloadStart,
  recordKind,
  recordPort,
  recordSocket,
  recordTime,
  RECORD_HEADER,
  writeRecord,
} from '../../../../src/media/rtp-io/records.ts';

/** Producer and consumer views of one ring, as the two threads have them. */
function ring(capacity: number): { tx: SpscRing; rx: SpscRing } {
  const sab = SpscRing.create(capacity);
  return { tx: new SpscRing(sab), rx: new SpscRing(sab) };
}

function put(r: SpscRing, bytes: Uint8Array): boolean {
  const at = r.reserve(bytes.length);
  if (at < 0) return false;
  r.bytes.set(bytes, at);
  r.commit();
  return true;
}

function take(r: SpscRing): Uint8Array | undefined {
  const at = r.peek();
  if (at < 0) return undefined;
  const out = r.bytes.slice(at, at + r.peekLength);
  r.release();
  return out;
}

const filled = (n: number, v: number): Uint8Array => new Uint8Array(n).fill(v & 0xff);

describe('SpscRing', () => {
  it('keeps records in order, with their lengths, and is empty after', () => {
    const { tx, rx } = ring(1024);
    expect(rx.peek()).toBe(-1);
    for (let i = 0; i < 5; i++) expect(put(tx, filled(i * 7, i))).toBe(true);
    for (let i = 0; i < 5; i++) expect(take(rx)).toEqual(filled(i * 7, i));
    expect(take(rx)).toBeUndefined();
    expect(rx.isEmpty).toBe(true);
    expect(tx.used).toBe(0);
  });

  it('wraps around at every offset without splitting a record', () => {
    const { tx, rx } = ring(256);
    // Record sizes that are not multiples of each other walk the write offset through the ring.
    let n = 0;
    for (let round = 0; round < 2000; round++) {
      const size = 1 + ((round * 37) % 90);
      expect(put(tx, filled(size, round))).toBe(true);
      const got = take(rx)!;
      expect(got.length).toBe(size);
      expect(got.every((b) => b === (round & 0xff))).toBe(true);
      n++;
    }
    expect(n).toBe(2000);
    expect(rx.isEmpty).toBe(true);
  });

  it('refuses a record that does not fit, takes it again once there is room, and never loses one it took', () => {
    const { tx, rx } = ring(256);
    const accepted: number[] = [];
    let refused = 0;
    for (let i = 0; i < 20; i++) {
      if (put(tx, filled(40, i))) accepted.push(i);
      else refused++;
    }
    // 256 bytes hold five records of 4 + 40 bytes.
    expect(accepted).toEqual([0, 1, 2, 3, 4]);
    expect(refused).toBe(15);
    expect(take(rx)).toEqual(filled(40, 0));
    expect(put(tx, filled(40, 99))).toBe(true);
    for (const v of [1, 2, 3, 4, 99]) expect(take(rx)).toEqual(filled(40, v));
    expect(take(rx)).toBeUndefined();
  });

  it('counts a skipped tail as used, so a wrapped record never overwrites unread ones', () => {
    const { tx, rx } = ring(128);
    expect(put(tx, filled(50, 1))).toBe(true); // 0..56
    expect(put(tx, filled(50, 2))).toBe(true); // 56..112
    expect(take(rx)).toEqual(filled(50, 1)); // 56 bytes free at the start, 16 at the end
    // 60 bytes: not in the 16-byte tail; with the tail skipped it needs 16 + 64 > 72 free.
    expect(put(tx, filled(60, 3))).toBe(false);
    expect(put(tx, filled(40, 4))).toBe(true); // tail skipped, 44 at the start
    expect(take(rx)).toEqual(filled(50, 2));
    expect(take(rx)).toEqual(filled(40, 4));
    expect(tx.used).toBe(0);
  });

  it('refuses records larger than half the ring, and sizes that are not a power of two', () => {
    const { tx } = ring(256);
    expect(() => tx.reserve(200)).toThrow(RangeError);
    expect(() => new SpscRing(new SharedArrayBuffer(16 + 100))).toThrow(RangeError);
  });

  it('survives the positions wrapping past 2^31', () => {
    const { tx, rx } = ring(64);
    // Put both positions just short of the int32 limit by hand.
    const header = new Int32Array(tx.sab, 0, 2);
    header[0] = 0x7fff_fff0;
    header[1] = 0x7fff_fff0;
    for (let i = 0; i < 50; i++) {
      expect(put(tx, filled(9, i))).toBe(true);
      expect(take(rx)).toEqual(filled(9, i));
    }
    expect(Atomics.load(header, 0)).toBeLessThan(0); // wrapped
    expect(rx.isEmpty).toBe(true);
  });
});

describe('RTP records', () => {
  it('carry many sockets’ packets with time, port, address and payload; DROPPED counts too', () => {
    const { tx, rx } = ring(4096);
    const cache = new AddressCache();
    const sent: Array<{ socket: number; time: number; port: number; address: string; payload: Uint8Array }> = [];
    for (let i = 0; i < 30; i++) {
      const socket = 1 + (i % 7);
      const address = socket % 2 ? '127.0.0.1' : '::1';
      const payload = filled(12 + i, i);
      const e = { socket, time: 1000.25 + i, port: 40000 + socket, address, payload };
      expect(writeRecord(tx, PACKET, socket, e.time, e.port, new AddressCache().encode(address), payload)).toBe(true);
      sent.push(e);
    }
    expect(writeRecord(tx, DROPPED, 3, 17, 0, undefined, undefined)).toBe(true);
    for (const e of sent) {
      const at = rx.peek();
      expect(recordKind(rx, at)).toBe(PACKET);
      expect(recordSocket(rx, at)).toBe(e.socket);
      expect(recordTime(rx, at)).toBe(e.time);
      expect(recordPort(rx, at)).toBe(e.port);
      expect(cache.read(rx, at)).toBe(e.address);
      const start = payloadStart(rx, at);
      expect(rx.bytes.slice(start, start + payloadLength(rx, at))).toEqual(e.payload);
      rx.release();
    }
    const at = rx.peek();
    expect([recordKind(rx, at), recordSocket(rx, at), recordTime(rx, at), rx.peekLength]).toEqual([DROPPED, 3, 17, RECORD_HEADER]);
    rx.release();
    expect(rx.isEmpty).toBe(true);
  });

  it('reuses the decoded address string while the address stays the same', () => {
    const { tx, rx } = ring(1024);
    const enc = new AddressCache();
    const first = enc.encode('10.0.0.1');
    expect(enc.encode('10.0.0.1')).toBe(first);
    writeRecord(tx, PACKET, 1, 0, 5, first, filled(4, 1));
    writeRecord(tx, PACKET, 1, 0, 5, first, filled(4, 2));
    const dec = new AddressCache();
    const a = dec.read(rx, rx.peek());
    rx.release();
    const b = dec.read(rx, rx.peek());
    rx.release();
    expect(a).toBe('10.0.0.1');
    expect(b).toBe(a);
  });
});
