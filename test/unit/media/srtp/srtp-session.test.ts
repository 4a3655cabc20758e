/**
 * The SRTP context over many packets: rollover counter across the 16-bit wrap (both ends),
 * reordering inside the replay window, replays and tampering refused and counted without
 * moving the state, SRTCP indexes and replay, for every suite.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { nodeCipherFactory } from '../../../../src/media/srtp/cipher-node.ts';
import { loadNativeCipherFactory } from '../../../../src/media/srtp/cipher-native.ts';
import type { CipherFactory } from '../../../../src/media/srtp/cipher.ts';
import { PacketIndexEstimator } from '../../../../src/media/srtp/packet-index.ts';
import { ReplayWindow } from '../../../../src/media/srtp/replay-window.ts';
import { SRTP_AUTH_FAILED, SRTP_REPLAYED, SrtpSession } from '../../../../src/media/srtp/srtp-session.ts';
import { SRTP_SUITES, type SrtpSuite } from '../../../../src/media/srtp/suites.ts';

function rtp(seq: number, payload = 160): Buffer {
  const b = Buffer.alloc(12 + payload + 32);
  b[0] = 0x80;
  b.writeUInt16BE(seq & 0xffff, 2);
  b.writeUInt32BE((seq * 160) >>> 0, 4);
  b.writeUInt32BE(0x11223344, 8);
  for (let i = 0; i < payload; i++) b[12 + i] = (seq + i) & 0xff;
  return b;
}

const native = loadNativeCipherFactory();
const factories: CipherFactory[] = [nodeCipherFactory, ...(native ? [native] : [])];

/** Two ends of one call; with two factories, each end on a different implementation. */
function pair(suite: SrtpSuite, fa: CipherFactory = nodeCipherFactory, fb: CipherFactory = fa): { a: SrtpSession; b: SrtpSession } {
  const ka = { key: randomBytes(suite.keyLength), salt: randomBytes(suite.saltLength) };
  const kb = { key: randomBytes(suite.keyLength), salt: randomBytes(suite.saltLength) };
  return { a: new SrtpSession(suite, ka, kb, fa), b: new SrtpSession(suite, kb, ka, fb) };
}

describe('replay window', () => {
  it('takes new and reordered indexes once, refuses repeats and what fell behind 64', () => {
    const w = new ReplayWindow();
    for (const i of [100, 102, 101, 164, 140]) {
      expect(w.check(i)).toBe('ok');
      w.accept(i);
    }
    expect(w.check(101)).toBe('replayed'); // 164 - 101 = 63: still inside
    expect(w.check(103)).toBe('ok');
    expect(w.check(100)).toBe('too-old');
    expect(w.check(140)).toBe('replayed');
    expect(w.check(164)).toBe('replayed');
    expect(w.check(139)).toBe('ok');
    w.accept(1000);
    expect(w.check(164)).toBe('too-old');
    expect(w.check(999)).toBe('ok');
  });
});

describe('packet index estimate', () => {
  it('follows the rollover counter across the wrap, and a late packet from before it', () => {
    const e = new PacketIndexEstimator();
    e.commit(e.estimate(65534));
    e.commit(e.estimate(65535));
    const after = e.estimate(1);
    expect(after).toBe(65536 + 1);
    e.commit(after);
    expect(e.estimate(65533)).toBe(65533); // late, from ROC 0
    expect(e.estimate(2)).toBe(65536 + 2);
  });
});

const cases = SRTP_SUITES.flatMap((s) => factories.map((f) => [`${s.name} on ${f.label}`, s, f] as const));

describe.each(cases)('SRTP session %s', (_name, suite, factory) => {
  it('round-trips across the sequence wrap, tolerates reordering, refuses replay and tampering', () => {
    const { a, b } = pair(suite, factory);
    const sent: Buffer[] = [];
    for (let n = 0; n < 40; n++) {
      const p = rtp(65520 + n);
      const len = a.protectRtp(p, 172);
      expect(len).toBe(172 + suite.rtpTagLength);
      sent.push(p.subarray(0, len));
    }
    // Deliver with two pairs swapped.
    const order = sent.map((_, i) => i);
    [order[5], order[6]] = [order[6]!, order[5]!];
    [order[20], order[22]] = [order[22]!, order[20]!];
    for (const i of order) {
      const copy = Buffer.from(sent[i]!);
      expect(b.unprotectRtp(copy, copy.length)).toBe(172);
      expect(copy.subarray(0, 172).equals(rtp(65520 + i).subarray(0, 172))).toBe(true);
    }
    expect(b.unprotectRtp(Buffer.from(sent[30]!), sent[30]!.length)).toBe(SRTP_REPLAYED);
    const next = rtp(65520 + 40);
    const len = a.protectRtp(next, 172);
    const tampered = Buffer.from(next.subarray(0, len));
    tampered[20]! ^= 0x40;
    expect(b.unprotectRtp(tampered, len)).toBe(SRTP_AUTH_FAILED);
    // The forged packet moved nothing: the real one with its index is still taken.
    expect(b.unprotectRtp(next, len)).toBe(172);
    expect(b.counters).toEqual({ authFailed: 1, rtcpAuthFailed: 0, replayed: 1, malformed: 0 });
  });

  it('SRTCP: round trip, index per packet, replay refused, tampering refused', () => {
    const { a, b } = pair(suite, factory);
    const report = Buffer.alloc(64);
    Buffer.from('80c90001aabbccdd', 'hex').copy(report);
    const first = Buffer.from(report);
    const n1 = a.protectRtcp(first, 8);
    const second = Buffer.from(report);
    const n2 = a.protectRtcp(second, 8);
    expect(n1).toBe(8 + 4 + suite.rtcpTagLength);
    const replay = Buffer.from(first.subarray(0, n1));
    expect(b.unprotectRtcp(first, n1)).toBe(8);
    expect(first.subarray(0, 8).toString('hex')).toBe('80c90001aabbccdd');
    expect(b.unprotectRtcp(replay, n1)).toBe(SRTP_REPLAYED);
    second[9]! ^= 1;
    expect(b.unprotectRtcp(second, n2)).toBe(SRTP_AUTH_FAILED);
  });

  it('a plaintext RTCP BYE + SDES (what baresip 1.0 sends at hang-up, see engine-tls.test.ts) is refused and counted as an SRTCP failure', () => {
    const { b } = pair(suite, factory);
    // The 68 bytes the engine's RTCP socket got from baresip: BYE (reason "Adjo"), then SDES
    // with its CNAME, in the clear and with no SRTCP trailer.
    const cname = Buffer.from('sip:14155550199@127.0.0.5;transport=tls', 'latin1');
    const sdes = Buffer.concat([Buffer.from('81ca000c367cbc5901', 'hex'), Buffer.from([cname.length]), cname, Buffer.alloc(3)]);
    const datagram = Buffer.concat([Buffer.from('81cb0003367cbc590441646a6f000000', 'hex'), sdes]);
    expect(datagram.length).toBe(68);
    expect(b.unprotectRtcp(datagram, datagram.length)).toBe(SRTP_AUTH_FAILED);
    expect(b.counters).toMatchObject({ authFailed: 1, rtcpAuthFailed: 1 });
  });
});

describe.runIf(native)('native and node:crypto transforms agree', () => {
  it.each(SRTP_SUITES.map((s) => [s.name, s] as const))('%s: each end on the other implementation, packets of every size and header shape', (_name, suite) => {
    const { a, b } = pair(suite, native!, nodeCipherFactory);
    const { a: c, b: d } = pair(suite, nodeCipherFactory, native!);
    for (let n = 0; n < 300; n++) {
      const payload = n % 200;
      const p = rtp(n * 7, payload);
      if (n % 3 === 0 && payload >= 8) p[0] = 0x82; // two CSRCs: a longer clear header
      const len = 12 + payload;
      for (const [tx, rx] of [[a, b], [c, d]] as const) {
        const copy = Buffer.from(p);
        const out = tx.protectRtp(copy, len);
        expect(rx.unprotectRtp(copy, out)).toBe(len);
        expect(copy.subarray(0, len).equals(p.subarray(0, len))).toBe(true);
      }
    }
    for (const [tx, rx] of [[a, b], [c, d]] as const) {
      const r = Buffer.alloc(80);
      Buffer.from('81c80006aabbccdd0102030405060708090a0b0c0d0e0f10111213', 'hex').copy(r);
      const out = tx.protectRtcp(r, 28);
      expect(rx.unprotectRtcp(r, out)).toBe(28);
    }
  });

  it('refuses lengths outside the buffer and foreign handles with errors, not memory faults', () => {
    const suite = SRTP_SUITES[2]!;
    const cipher = native!.create(suite, { key: randomBytes(16), salt: randomBytes(14), auth: randomBytes(20) });
    const small = Buffer.alloc(20);
    expect(() => cipher.protectRtp(small, 21, 12, 1, 1)).toThrow(RangeError);
    expect(() => cipher.protectRtp(small, 20, 21, 1, 1)).toThrow(RangeError);
    // No room for the tag: -1, nothing written past the end.
    expect(cipher.protectRtp(small, 20, 12, 1, 1)).toBe(-1);
    expect(cipher.unprotectRtp(small, 5, 12, 1, 1)).toBe(-1);
    expect(cipher.unprotectRtcp(small, 10, 1, 1, true)).toBe(-1);
  });
});

describe.each(factories.map((f) => [f.label, f] as const))('hostile input on %s', (_label, factory) => {
  it('random and truncated datagrams are refused with a reason, never thrown on, never accepted', () => {
    let seed = 12345;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (const suite of SRTP_SUITES) {
      const { a, b } = pair(suite, factory);
      const good = rtp(1000);
      const len = a.protectRtp(good, 172);
      for (let i = 0; i < 500; i++) {
        const kind = rand(3);
        let d: Buffer;
        if (kind === 0) d = randomBytes(rand(300));
        else if (kind === 1) d = Buffer.from(good.subarray(0, rand(len)));
        else {
          d = Buffer.from(good.subarray(0, len));
          d[rand(len)]! ^= 1 << rand(8);
        }
        if (kind === 0 && d.length > 0) d[0] = (d[0]! & 0x3f) | 0x80;
        expect(b.unprotectRtp(d, d.length)).toBeLessThan(0);
        expect(b.unprotectRtcp(d, d.length)).toBeLessThan(0);
      }
      // The genuine packet is still taken after all that.
      expect(b.unprotectRtp(good, len)).toBe(172);
    }
  });
});
