import { describe, expect, it } from 'vitest';
import { parseMessage } from '../../../src/sip/parser.ts';
import { serializeMessage } from '../../../src/sip/serializer.ts';
import { SipStreamFramer } from '../../../src/sip/stream-framer.ts';
import { TORTURE_CASES, torture } from './torture-fixtures.ts';

/** Deterministic PRNG so a failure reproduces. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const INTERESTING = [0x00, 0x0d, 0x0a, 0x20, 0x09, 0x22, 0x3c, 0x3e, 0x2c, 0x3b, 0x3a, 0x25, 0x5c, 0x40, 0xff, 0x2d, 0x30, 0x39];

function mutate(buf: Buffer, rnd: () => number): Buffer {
  let out = Buffer.from(buf);
  const edits = 1 + Math.floor(rnd() * 6);
  for (let e = 0; e < edits; e++) {
    const pos = Math.floor(rnd() * Math.max(1, out.length));
    const byte = rnd() < 0.6 ? INTERESTING[Math.floor(rnd() * INTERESTING.length)]! : Math.floor(rnd() * 256);
    const op = Math.floor(rnd() * 4);
    if (op === 0) out[pos] = byte;
    else if (op === 1) out = Buffer.concat([out.subarray(0, pos), Buffer.from([byte]), out.subarray(pos)]);
    else if (op === 2) out = Buffer.concat([out.subarray(0, pos), out.subarray(pos + 1 + Math.floor(rnd() * 8))]);
    else out = out.subarray(0, pos);
  }
  return out;
}

describe('fuzzing the parser with mutated torture messages', () => {
  it('never throws, and whatever parses also serializes and re-parses', () => {
    const rnd = mulberry32(4475);
    let parsed = 0;
    for (const c of TORTURE_CASES) {
      const original = torture(c.name);
      for (let i = 0; i < 300; i++) {
        const input = mutate(original, rnd);
        const r = parseMessage(input);
        expect(typeof r.ok).toBe('boolean');
        if (r.ok) {
          parsed++;
          const again = parseMessage(serializeMessage(r.message));
          expect(again.ok, `${c.name} #${i}: ${again.ok ? '' : again.error}`).toBe(true);
        }
      }
    }
    expect(parsed).toBeGreaterThan(100);
  });

  it('never throws on stream input split at random points', () => {
    const rnd = mulberry32(3261);
    for (const c of TORTURE_CASES) {
      const framer = new SipStreamFramer();
      const input = mutate(torture(c.name), rnd);
      for (let pos = 0; pos < input.length; ) {
        const n = 1 + Math.floor(rnd() * 200);
        expect(() => framer.push(input.subarray(pos, pos + n))).not.toThrow();
        pos += n;
      }
    }
  });

  it('survives pathological inputs', () => {
    const cases = [
      Buffer.alloc(0),
      Buffer.from('\r\n\r\n'),
      Buffer.from('SIP/2.0'),
      Buffer.from('INVITE'),
      Buffer.from(':\r\n\r\n'),
      Buffer.from(' \r\n\r\n'),
      Buffer.alloc(70_000, 0x41),
      Buffer.from(`INVITE sip:a@b SIP/2.0\r\n${'X: y\r\n'.repeat(300)}\r\n`),
      Buffer.from(`INVITE sip:a@b SIP/2.0\r\nVia: ${'"'.repeat(5000)}\r\n\r\n`),
      Buffer.from(`INVITE sip:a@b SIP/2.0\r\nContent-Length: 99999999999999999999999\r\n\r\n`),
      Buffer.from([0xff, 0xfe, 0x00, 0x0d, 0x0a, 0x0d, 0x0a]),
    ];
    for (const input of cases) expect(parseMessage(input).ok).toBe(false);
  });
});
