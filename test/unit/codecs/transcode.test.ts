import { describe, expect, it } from 'vitest';
import { FRAME_SAMPLES, type AudioFrame } from '../../../src/audio/frame.ts';
import { codecRegistry, findCodec, resolveCodecs } from '../../../src/media/codecs/codecs.ts';
import { rtpTicks } from '../../../src/media/codecs/codec.ts';
import { InboundTranscoder, MediaTranscoder, OutboundTranscoder } from '../../../src/media/codecs/transcode.ts';
import { bestSnrDb, concat, sine, toneLevel } from '../audio/signal.ts';

function frames(pcm: Int16Array): AudioFrame[] {
  const out: AudioFrame[] = [];
  for (let i = 0; i + FRAME_SAMPLES <= pcm.length; i += FRAME_SAMPLES) {
    out.push({ samples: pcm.slice(i, i + FRAME_SAMPLES), sampleRate: 16000 });
  }
  return out;
}

describe('codec registry', () => {
  it('is keyed by lowercased encoding name', () => {
    expect([...codecRegistry.keys()].sort()).toEqual(['g722', 'opus', 'pcma', 'pcmu']);
    expect(findCodec('PCMU')?.payloadType).toBe(0);
    expect(findCodec('Opus')?.clockRate).toBe(48000);
    expect(findCodec('G729')).toBeUndefined();
    expect(resolveCodecs(['PCMA', 'g722']).map((c) => c.name)).toEqual(['PCMA', 'G722']);
    expect(() => resolveCodecs(['pcmu', 'gsm'])).toThrow(/unknown codec "gsm"/);
  });

  it('computes RTP timestamp steps, including the G.722 clock quirk', () => {
    expect(rtpTicks(findCodec('pcmu')!, 20)).toBe(160);
    expect(rtpTicks(findCodec('g722')!, 20)).toBe(160);
    expect(rtpTicks(findCodec('opus')!, 20)).toBe(960);
  });
});

describe('MediaTranscoder', () => {
  for (const name of ['pcmu', 'pcma', 'g722', 'opus']) {
    it(`${name}: 16 kHz frames → payloads → 16 kHz frames keeps a 700 Hz tone`, () => {
      const codec = findCodec(name)!;
      const sender = new MediaTranscoder(codec);
      const receiver = new MediaTranscoder(codec);
      const input = sine(700, 16000, 16000, 8000);
      const received: Int16Array[] = [];
      for (const frame of frames(input)) {
        const payloads = sender.encode(frame);
        expect(payloads).toHaveLength(1); // one packet per 20 ms frame at ptime 20
        for (const p of payloads) {
          for (const f of receiver.decode(p)) {
            expect(f.samples.length).toBe(FRAME_SAMPLES);
            expect(f.sampleRate).toBe(16000);
            received.push(f.samples);
          }
        }
      }
      const out = concat(received);
      expect(out.length).toBeGreaterThanOrEqual(input.length - FRAME_SAMPLES);
      expect(toneLevel(out, 700, 16000, 3200)).toBeGreaterThan((8000 / 32768) * 0.8);
      if (name !== 'opus') expect(bestSnrDb(input, out, 200, 3200).snr).toBeGreaterThan(25);
      sender.close();
      receiver.close();
    });
  }

  it('packetises to the negotiated ptime', () => {
    const out30 = new OutboundTranscoder(findCodec('pcma')!, 30);
    const sizes = frames(new Int16Array(320 * 6)).flatMap((f) => out30.encode(f).map((p) => p.length));
    expect(sizes).toEqual([240, 240, 240, 240]);
    expect(out30.ticksPerPacket).toBe(240);
    const out10 = new OutboundTranscoder(findCodec('g722')!, 10);
    expect(out10.encode(frames(new Int16Array(320))[0]!).map((p) => p.length)).toEqual([80, 80]);
    expect(out10.ticksPerPacket).toBe(80);
  });

  it('accepts frames at another rate by resampling them', () => {
    const out = new OutboundTranscoder(findCodec('pcmu')!);
    const payloads = out.encode({ samples: new Int16Array(480), sampleRate: 24000 });
    expect(payloads.map((p) => p.length)).toEqual([160]);
  });

  it('turns a lost packet into one concealment frame', () => {
    const codec = findCodec('pcmu')!;
    const enc = codec.encoder();
    const rx = new InboundTranscoder(codec);
    rx.decode(enc.encode(sine(400, 8000, 160, 8000)));
    const concealed = rx.conceal();
    expect(concealed).toHaveLength(1);
    expect(concealed[0]!.samples.length).toBe(FRAME_SAMPLES);
  });

  it('decodeInto appends to the caller\'s queue exactly the frames decode() returns, each its own copy', () => {
    for (const name of ['pcmu', 'pcma', 'g722']) {
      const codec = findCodec(name)!;
      const enc = codec.encoder();
      const viaArray = new InboundTranscoder(codec);
      const viaQueue = new InboundTranscoder(codec);
      const queue: AudioFrame[] = [];
      const expected: AudioFrame[] = [];
      // ptime 30 for G.711 (frames straddle packets), 20 for G.722; a loss in the middle.
      const samples = codec.sampleRate === 8000 ? 240 : 320;
      for (let i = 0; i < 6; i++) {
        if (i === 3) {
          expected.push(...viaArray.conceal());
          queue.push(...viaQueue.conceal());
          continue;
        }
        const payload = enc.encode(sine(300 + 100 * i, codec.sampleRate, samples, 8000));
        const before = queue.length;
        expected.push(...viaArray.decode(payload));
        expect(viaQueue.decodeInto(payload, queue)).toBe(queue.length - before);
      }
      expect(queue.map((f) => [...f.samples]), name).toEqual(expected.map((f) => [...f.samples]));
      // Own copies: frames may share a slab (copySamples) but never a byte.
      const ranges = queue.map((f) => ({ buffer: f.samples.buffer, from: f.samples.byteOffset, to: f.samples.byteOffset + f.samples.byteLength }));
      for (let a = 0; a < ranges.length; a++) {
        for (let b = a + 1; b < ranges.length; b++) {
          const x = ranges[a]!;
          const y = ranges[b]!;
          expect(x.buffer !== y.buffer || x.to <= y.from || y.to <= x.from, name).toBe(true);
        }
      }
    }
  });

  it('decodes G.711 ptime 30 packets into whole 20 ms frames', () => {
    const codec = findCodec('pcmu')!;
    const enc = codec.encoder();
    const rx = new InboundTranscoder(codec);
    const counts = [0, 1, 2, 3].map(() => rx.decode(enc.encode(new Int16Array(240))).length);
    expect(counts).toEqual([1, 2, 1, 2]);
  });
});
