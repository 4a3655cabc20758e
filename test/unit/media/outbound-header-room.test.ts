/**
 * OutboundPath's headerRoom (the session's send path): payloads encoded in place come with room
 * for the header before them, and the packets are otherwise exactly those of a path without it,
 * through audio, μ-law pass-through, DTMF, silence, flushes, odd ptimes and a codec change.
 */
import { describe, expect, it } from 'vitest';
import type { AudioFrame } from '../../../src/audio/frame.ts';
import { g722 } from '../../../src/media/codecs/g722.ts';
import { ulaw } from '../../../src/media/codecs/g711.ts';
import { pcma } from '../../../src/media/codecs/pcma.ts';
import { OutboundPath } from '../../../src/media/rtp-session-outbound.ts';
import type { NegotiatedMedia } from '../../../src/media/sdp-negotiate.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { pcmuMedia } from '../../support/negotiated-media.ts';

interface Seen {
  pt: number;
  marker: boolean;
  ts: number;
  payload: string;
  atMs: number;
}

const tone = (f: number): AudioFrame => ({
  samples: Int16Array.from({ length: 320 }, (_, i) => Math.round(6000 * Math.sin((2 * Math.PI * 700 * (f * 320 + i)) / 16000))),
  sampleRate: 16_000,
});

function run(media: NegotiatedMedia, headerRoom: number | undefined, after?: NegotiatedMedia): { seen: Seen[]; inRoom: number } {
  const clock = new ManualClock(0);
  const seen: Seen[] = [];
  let inRoom = 0;
  const out = new OutboundPath(media, {
    clock,
    initialTimestamp: 5000,
    ...(headerRoom === undefined ? {} : { headerRoom }),
    send: (p) => {
      let payload = p.payload;
      if (p.room > 0) {
        expect(p.room).toBe(headerRoom);
        inRoom++;
        payload = payload.subarray(p.room);
      }
      seen.push({ pt: p.payloadType, marker: p.marker, ts: p.timestamp, payload: Buffer.from(payload).toString('hex'), atMs: clock.monotonic() });
    },
  });
  out.setSending(true);
  clock.advance(45);
  for (let f = 0; f < 10; f++) out.write(tone(f));
  clock.advance(120);
  const mulaw = ulaw.encode(new Int16Array(160).map((_, i) => (i % 20 < 10 ? 3000 : -3000)));
  out.writeMulaw(mulaw);
  out.write(tone(11));
  out.writeMulaw(mulaw);
  clock.advance(200);
  void out.sendDtmf('5', { durationMs: 60 });
  clock.advance(300);
  for (let f = 0; f < 6; f++) out.write(tone(f));
  clock.advance(50);
  out.flush();
  clock.advance(100);
  if (after) {
    out.update(after);
    for (let f = 0; f < 4; f++) out.write(tone(f));
    clock.advance(200);
  }
  out.close();
  return { seen, inRoom };
}

describe('OutboundPath headerRoom', () => {
  const cases: Array<[string, NegotiatedMedia, NegotiatedMedia | undefined]> = [
    ['PCMU 20', pcmuMedia(), undefined],
    ['PCMU 10', pcmuMedia({ ptimeMs: 10 }), undefined],
    ['PCMU 30', pcmuMedia({ ptimeMs: 30 }), undefined],
    ['PCMA 20 then G.722 20', pcmuMedia({ codec: pcma, payloadType: 8 }), pcmuMedia({ codec: g722, payloadType: 9 })],
    ['G.722 20 then PCMU 40', pcmuMedia({ codec: g722, payloadType: 9 }), pcmuMedia({ ptimeMs: 40 })],
  ];
  for (const [name, media, after] of cases) {
    it(`${name}: the same packets as without it`, () => {
      const plain = run(media, undefined, after);
      const roomy = run(media, 12, after);
      expect(plain.inRoom).toBe(0);
      expect(roomy.seen).toEqual(plain.seen);
      expect(roomy.seen.length).toBeGreaterThan(20);
      if (media.ptimeMs === 20) expect(roomy.inRoom).toBeGreaterThan(10);
      else if (!after) expect(roomy.inRoom).toBe(0);
    });
  }
});
