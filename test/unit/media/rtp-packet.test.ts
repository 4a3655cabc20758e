import { describe, expect, it } from 'vitest';
import { looksLikeRtcp, parseRtp, parseRtpInto, rtpDatagram, seqDelta, serializeRtp, timestampDelta, type RtpPacket } from '../../../src/media/rtp-packet.ts';
import { prng } from './prng.ts';

function hex(s: string): Uint8Array {
  return Uint8Array.from(Buffer.from(s.replace(/\s+/g, ''), 'hex'));
}

describe('RTP packet', () => {
  it('parses a plain PCMU packet as captured on the wire', () => {
    // V=2, PT=0, seq 0x1234, ts 0x000000a0, ssrc 0xdeadbeef, 4 bytes of payload.
    const result = parseRtp(hex('80 00 1234 000000a0 deadbeef ff7f0001'));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.packet).toMatchObject({
      payloadType: 0,
      marker: false,
      sequenceNumber: 0x1234,
      timestamp: 0xa0,
      ssrc: 0xdeadbeef,
      csrcs: [],
      paddingLength: 0,
    });
    expect([...result.packet.payload]).toEqual([0xff, 0x7f, 0x00, 0x01]);
  });

  it('round-trips marker, CSRCs, header extension and padding', () => {
    const bytes = serializeRtp({
      payloadType: 101,
      marker: true,
      sequenceNumber: 65535,
      timestamp: 0xffffffff,
      ssrc: 0x80000001,
      csrcs: [1, 0xfffffffe],
      extension: { profile: 0xbede, data: Uint8Array.of(0x10, 0xaa, 0, 0) },
      payload: Uint8Array.of(1, 2, 3),
      paddingLength: 5,
    });
    expect(bytes[0]).toBe(0x80 | 0x20 | 0x10 | 2);
    const result = parseRtp(bytes);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const p = result.packet;
    expect(p.marker).toBe(true);
    expect(p.payloadType).toBe(101);
    expect(p.sequenceNumber).toBe(65535);
    expect(p.timestamp).toBe(0xffffffff);
    expect(p.ssrc).toBe(0x80000001);
    expect(p.csrcs).toEqual([1, 0xfffffffe]);
    expect(p.extension?.profile).toBe(0xbede);
    expect([...(p.extension?.data ?? [])]).toEqual([0x10, 0xaa, 0, 0]);
    expect([...p.payload]).toEqual([1, 2, 3]);
    expect(p.paddingLength).toBe(5);
  });

  it('rtpDatagram writes the same bytes as serializeRtp, header and payload in one buffer', () => {
    const payload = Uint8Array.from({ length: 160 }, (_, i) => i);
    for (const [pt, marker, seq, ts, ssrc] of [
      [0, false, 0, 0, 0],
      [101, true, 65535, 0xffffffff, 0xffffffff],
      [8, false, 0x1234, 0x89abcdef, 0x80000001],
    ] as const) {
      const fast = rtpDatagram(pt, marker, seq, ts, ssrc, payload);
      expect(Buffer.isBuffer(fast)).toBe(true);
      expect([...fast]).toEqual([...serializeRtp({ payloadType: pt, marker, sequenceNumber: seq, timestamp: ts, ssrc, payload })]);
      const parsed = parseRtp(fast);
      expect(parsed.ok && parsed.packet).toMatchObject({ payloadType: pt, marker, sequenceNumber: seq, timestamp: ts, ssrc, paddingLength: 0 });
      expect(parsed.ok && parsed.packet.extension).toBeUndefined();
    }
    // A fresh buffer each time: dgram may still hold the last one.
    expect(rtpDatagram(0, false, 1, 1, 1, payload)).not.toBe(rtpDatagram(0, false, 1, 1, 1, payload));
  });

  it('writes zeros into the padding before its count (the buffer comes uninitialised from the pool)', () => {
    for (let i = 0; i < 20; i++) {
      const bytes = serializeRtp({ payloadType: 0, sequenceNumber: i, timestamp: 0, ssrc: 1, payload: Uint8Array.of(9), paddingLength: 8 });
      expect([...bytes.subarray(13)]).toEqual([0, 0, 0, 0, 0, 0, 0, 8]);
    }
  });

  it('rejects malformed packets with a reason instead of throwing', () => {
    const cases: Array<[string, string]> = [
      ['80 00 1234', 'too-short'],
      ['40 00 1234 000000a0 deadbeef', 'bad-version'],
      ['82 00 1234 000000a0 deadbeef 00000001', 'csrc-overflow'],
      ['90 00 1234 000000a0 deadbeef bede', 'extension-overflow'],
      ['90 00 1234 000000a0 deadbeef bede 0002 00000000', 'extension-overflow'],
      ['a0 00 1234 000000a0 deadbeef 0102 00', 'bad-padding'],
      ['a0 00 1234 000000a0 deadbeef 0102 09', 'bad-padding'],
    ];
    for (const [bytes, error] of cases) expect(parseRtp(hex(bytes))).toEqual({ ok: false, error });
  });

  it('accepts a header-only packet (empty payload) and padding that eats the whole body', () => {
    expect(parseRtp(hex('80 00 0001 00000000 00000001')).ok).toBe(true);
    const padded = parseRtp(hex('a0 00 0001 00000000 00000001 000003'));
    expect(padded.ok && padded.packet.payload.length).toBe(0);
  });

  it('never throws on random garbage', () => {
    const rand = prng(7);
    for (let i = 0; i < 5000; i++) {
      const bytes = Uint8Array.from({ length: Math.floor(rand() * 40) }, () => Math.floor(rand() * 256));
      if (rand() < 0.5 && bytes.length > 0) bytes[0] = 0x80 | (bytes[0]! & 0x3f);
      expect(() => parseRtp(bytes)).not.toThrow();
    }
  });

  it('tells RTCP from RTP for rtcp-mux', () => {
    expect(looksLikeRtcp(hex('80c8 0006'))).toBe(true); // SR
    expect(looksLikeRtcp(hex('81c9 0007'))).toBe(true); // RR
    expect(looksLikeRtcp(hex('8000 0001'))).toBe(false);
    expect(looksLikeRtcp(hex('80e5 0001'))).toBe(false); // PT 101 with marker
  });

  it('measures sequence and timestamp distance across the wrap', () => {
    expect(seqDelta(65535, 0)).toBe(1);
    expect(seqDelta(0, 65535)).toBe(-1);
    expect(seqDelta(100, 90)).toBe(-10);
    expect(timestampDelta(0xffffff60, 0x00000000)).toBe(160);
    expect(timestampDelta(160, 0)).toBe(-160);
  });
});

describe('parseRtpInto', () => {
  it('fills one reused packet exactly as parseRtp() builds a new one, and leaves it alone on an error', () => {
    const packet = { payloadType: 0, marker: false, sequenceNumber: 0, timestamp: 0, ssrc: 0, csrcs: [] as readonly number[], extension: undefined, payload: new Uint8Array(0), paddingLength: 0 } as RtpPacket;
    const datagrams = [
      serializeRtp({ payloadType: 0, sequenceNumber: 1, timestamp: 160, ssrc: 0xdeadbeef, payload: Uint8Array.of(1, 2, 3) }),
      serializeRtp({ payloadType: 101, marker: true, sequenceNumber: 65535, timestamp: 0xffffffff, ssrc: 7, csrcs: [1, 2], extension: { profile: 0xbede, data: Uint8Array.of(1, 2, 3, 4) }, payload: Uint8Array.of(9), paddingLength: 5 }),
      serializeRtp({ payloadType: 8, sequenceNumber: 2, timestamp: 320, ssrc: 0xdeadbeef, payload: new Uint8Array(160).fill(0xd5) }),
    ];
    for (const d of datagrams) {
      const fresh = parseRtp(d);
      expect(fresh.ok).toBe(true);
      expect(parseRtpInto(d, packet)).toBeUndefined();
      const { extension, ...rest } = packet;
      const { extension: freshExt, ...freshRest } = (fresh as { packet: RtpPacket }).packet;
      expect(rest).toEqual(freshRest);
      expect(extension).toEqual(freshExt);
      // The payload is a view of this datagram, new each time.
      expect(packet.payload.buffer).toBe(d.buffer);
    }
    const before = { ...packet };
    expect(parseRtpInto(Uint8Array.of(0x80, 0), packet)).toBe('too-short');
    expect(parseRtpInto(hex('40 00 1234 000000a0 deadbeef'), packet)).toBe('bad-version');
    expect(packet).toEqual(before);
  });
});
