import { describe, expect, it } from 'vitest';
import { parseMessage } from '../../../src/sip/parser.ts';
import { serializeMessage } from '../../../src/sip/serializer.ts';
import { SipStreamFramer } from '../../../src/sip/stream-framer.ts';
import { TORTURE_CASES, torture } from './torture-fixtures.ts';
import { mulberry32, mutate } from '../../support/mutate.ts';

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
