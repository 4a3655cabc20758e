/**
 * The native drain (native/rtp-udp/fast_drain.c) against the TypeScript receive path: one call's
 * datagrams go into an inbound ring as the RTP I/O thread writes them; one InboundPath takes them
 * the way thread-io.ts does with the native drain attached (C takes the plain audio, JavaScript
 * the rest, in ring order), another receives every one of them in TypeScript. Every frame played
 * out, every counter and every statistic must come out the same, through loss, jitter,
 * reordering, duplicates, DTMF, comfort noise, RTCP on the RTP port, a stranger's packets, header
 * extras, an SSRC change and a change of ptime.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AudioFrame } from '../../../../src/audio/frame.ts';
import { loadNativeInbound, NativeJitterBuffer, NativeReceiverStats } from '../../../../src/media/native-inbound.ts';
import { encodeAddress, PACKET, payloadLength, payloadStart, recordPort, recordTime, writeRecord } from '../../../../src/media/rtp-io/records.ts';
import { SpscRing } from '../../../../src/media/rtp-io/ring.ts';
import type { NativeInboundPort } from '../../../../src/media/rtp-io/types.ts';
import { looksLikeRtcp, parseRtp, serializeRtp, type RtpPacketInit } from '../../../../src/media/rtp-packet.ts';
import { InboundPath } from '../../../../src/media/rtp-session-inbound.ts';
import { DropOldestQueue } from '../../../../src/media/rtp-session-queue.ts';
import { pcmuMedia } from '../../../support/negotiated-media.ts';
import { prng } from '../prng.ts';

const SOURCE = { address: '192.0.2.1', port: 4000 };
const STRANGER = { address: '192.0.2.99', port: 4000 };
const SOCKET_ID = 7;

interface Datagram {
  at: number;
  from: { address: string; port: number };
  bytes: Uint8Array;
}

/** The caller's side: 20 ms PCMU (then 30 ms), with everything a real network and peer add. */
function scenario(seed: number, seconds: number): Datagram[] {
  const rand = prng(seed);
  const out: Datagram[] = [];
  let seq = 65_000 + Math.floor(rand() * 500); // wraps within the call
  let ts = 0xffff_f000 >>> 0; // so does the timestamp
  let ssrc = 0x1234_5678;
  let sendMs = 0;
  const payload = (n: number): Uint8Array => Uint8Array.from({ length: n }, () => Math.floor(rand() * 256));
  const push = (at: number, init: RtpPacketInit, from = SOURCE): void => {
    out.push({ at, from, bytes: serializeRtp(init) });
  };
  while (sendMs < seconds * 1000) {
    const ptime = sendMs >= 8_500 ? 30 : 20;
    if (sendMs >= 7_000 && ssrc === 0x1234_5678) {
      ssrc = 0x0bad_cafe;
      seq = Math.floor(rand() * 65_536);
    }
    const jitter = rand() < 0.03 ? 60 + rand() * 40 : rand() * 25;
    const at = sendMs + 5 + jitter;
    const base = { payloadType: 0, sequenceNumber: seq, timestamp: ts, ssrc, marker: false };
    const r = rand();
    if (r < 0.02) {
      // lost
    } else if (r < 0.03) {
      push(at, { ...base, payload: payload((ptime * 8) | 0) });
      push(at + 1, { ...base, payload: payload((ptime * 8) | 0) }); // duplicate
    } else if (r < 0.035) {
      push(at, { ...base, csrcs: [0x11111111], payload: payload(ptime * 8) }); // a mixer's CSRC
    } else if (r < 0.04) {
      push(at, { ...base, paddingLength: 4, payload: payload(ptime * 8) });
    } else {
      push(at, { ...base, payload: payload(ptime * 8) });
    }
    if (rand() < 0.01) push(at + 2, { ...base, sequenceNumber: (seq + 7) & 0xffff, payload: payload(160) }, STRANGER);
    if (rand() < 0.01) push(at + 3, { payloadType: 13, sequenceNumber: seq, timestamp: ts, ssrc, marker: false, payload: payload(1) }); // comfort noise
    if (rand() < 0.005) {
      // An RTCP receiver report on the RTP port (rtcp-mux).
      out.push({ at: at + 4, from: SOURCE, bytes: Uint8Array.from([0x80, 201, 0, 1, 0x12, 0x34, 0x56, 0x78]) });
    }
    seq = (seq + 1) & 0xffff;
    ts = (ts + ptime * 8) >>> 0;
    sendMs += ptime;
    if (sendMs >= 5_000 && sendMs < 5_000 + ptime) {
      // The caller presses 5: RFC 4733 events in the stream's sequence space, the end sent three times.
      for (let i = 0; i < 6; i++) {
        const duration = Math.min(i + 1, 3) * 160;
        const body = Uint8Array.from([5, (i >= 3 ? 0x80 : 0) | 10, duration >> 8, duration & 0xff]);
        push(sendMs + 5 + i * 20, { payloadType: 101, sequenceNumber: seq, timestamp: ts, ssrc, marker: i === 0, payload: body });
        seq = (seq + 1) & 0xffff;
      }
      sendMs += 6 * 20;
      ts = (ts + 6 * 160) >>> 0;
    }
  }
  return out.sort((a, b) => a.at - b.at);
}

function frameSamples(frames: AudioFrame[]): number[][] {
  return frames.map((f) => Array.from(f.samples));
}

async function collect(queue: DropOldestQueue<AudioFrame>): Promise<AudioFrame[]> {
  queue.end();
  const frames: AudioFrame[] = [];
  for await (const f of queue) frames.push(f);
  return frames;
}

describe('native drain (fast_drain.c)', () => {
  let now = 0;
  beforeEach(() => {
    now = 0;
    // The ring's times and the session clock are one here: performance.now() is the test's clock.
    vi.spyOn(performance, 'now').mockImplementation(() => now);
  });
  afterEach(() => vi.restoreAllMocks());

  /**
   * Runs `seed`'s scenario through both paths, a pass every 20 ms, checking after each that they
   * agree; `events` run on both paths at their times (ms). Returns what the native drain did.
   */
  async function compare(seed: number, events: Record<number, (path: InboundPath) => void> = {}) {
    const native = loadNativeInbound();
    expect(native, 'native/rtp-udp is built in every test run').toBeDefined();
    const ring = new SpscRing(SpscRing.create(1 << 16));
    const whole = new Uint8Array(ring.sab);
    let attaches = 0;
    /** The jitter buffers the drain was given. */
    const buffers = new Set<object>();
    const port: NativeInboundPort = {
      attach: (spec) => {
        attaches++;
        buffers.add(spec.jitter);
        return native!.fastAttach(whole, SOCKET_ID, spec.jitter, spec.stats, spec.words, encodeAddress(spec.address), spec.port, spec.payloadType);
      },
      detach: () => native!.fastDetach(whole, SOCKET_ID),
    };
    const media = pcmuMedia();
    const digits: Record<'ts' | 'c', string[]> = { ts: [], c: [] };
    const tsQueue = new DropOldestQueue<AudioFrame>(100_000);
    const cQueue = new DropOldestQueue<AudioFrame>(100_000);
    const tsPath = new InboundPath(media, 0, tsQueue, { dtmf: (d) => digits.ts.push(d), latched: () => undefined });
    const cPath = new InboundPath(media, 0, cQueue, { dtmf: (d) => digits.c.push(d), latched: () => undefined }, { native: port });

    const datagrams = scenario(seed, 10);
    let next = 0;
    /** Per pass: datagrams written, and how many of them the JavaScript drain took. */
    const passes: Array<{ at: number; written: number; inJavaScript: number }> = [];
    const receive = (path: InboundPath, bytes: Uint8Array, from: { address: string; port: number }, at: number): void => {
      if (looksLikeRtcp(bytes)) return;
      const parsed = parseRtp(bytes);
      if (parsed.ok) path.receive(parsed.packet, from, at);
    };
    for (now = 0; now <= 10_000; now += 20) {
      const event = events[now];
      if (event) {
        event(tsPath);
        event(cPath);
      }
      // What arrived since the last pass, into the ring as the I/O thread writes it, and straight
      // to the TypeScript path.
      const pass = { at: now, written: 0, inJavaScript: 0 };
      passes.push(pass);
      for (; next < datagrams.length && datagrams[next]!.at <= now; next++) {
        const d = datagrams[next]!;
        expect(writeRecord(ring, PACKET, SOCKET_ID, d.at, d.from.port, encodeAddress(d.from.address), d.bytes)).toBe(true);
        pass.written++;
        receive(tsPath, d.bytes, d.from, d.at);
      }
      // The pass's drain, as thread-io.ts does it.
      for (;;) {
        const left = native!.fastDrain(whole);
        if (left === 0) break;
        const at = ring.peek();
        const start = payloadStart(ring, at);
        const bytes = ring.bytes.slice(start, start + payloadLength(ring, at));
        const from = { address: new TextDecoder().decode(ring.bytes.subarray(at + 16, start)), port: recordPort(ring, at) };
        const arrival = recordTime(ring, at);
        ring.release();
        pass.inJavaScript++;
        receive(cPath, bytes, from, arrival);
      }
      expect(ring.used).toBe(0);
      tsPath.playout(now);
      cPath.playout(now);
      expect(cPath.counters).toEqual(tsPath.counters);
      expect(cPath.snapshot()).toEqual(tsPath.snapshot());
      expect(cPath.receiverStats.snapshot()).toEqual(tsPath.receiverStats.snapshot());
      expect(cPath.msSinceMedia(now)).toBe(tsPath.msSinceMedia(now));
    }
    const [tsFrames, cFrames] = await Promise.all([collect(tsQueue), collect(cQueue)]);
    expect(cFrames.length).toBe(tsFrames.length);
    expect(frameSamples(cFrames)).toEqual(frameSamples(tsFrames));
    expect(digits.c).toEqual(digits.ts);
    expect(digits.ts).toEqual(['5']);
    expect(cPath.droppedByFilter).toBe(tsPath.droppedByFilter);
    // Hung up: every C buffer the call had is freed (one replaced at the ptime change already
    // was), its numbers kept.
    tsPath.close();
    cPath.close();
    expect(cPath.snapshot()).toEqual(tsPath.snapshot());
    expect(buffers.size).toBeGreaterThanOrEqual(1);
    for (const jb of buffers) expect(() => native!.jbPull(jb, now)).toThrow(/closed/);
    /** Datagrams the native drain took in the passes from `from` to `to` ms. */
    const takenInC = (from: number, to: number) =>
      passes.filter((p) => p.at >= from && p.at <= to).reduce((n, p) => n + p.written - p.inJavaScript, 0);
    return { attaches, takenInC };
  }

  it.each([1, 2, 3])('plays out exactly what the TypeScript path does (seed %i)', async (seed) => {
    const { attaches, takenInC } = await compare(seed);
    // From the pass after the caller's first packet locked the source (DTMF, CN, RTCP, extras
    // and the stranger go to JavaScript); again after the ptime change rebuilt the buffer (at 8.5 s).
    expect(takenInC(0, 20)).toBe(0);
    expect(takenInC(40, 3000)).toBeGreaterThan(100);
    expect(takenInC(3100, 10_000)).toBeGreaterThan(250);
    expect(attaches).toBeGreaterThanOrEqual(2);
  });

  it('keeps a buffer it holds from being closed until it lets go', () => {
    const native = loadNativeInbound()!;
    const whole = new Uint8Array(SpscRing.create(1 << 12));
    const jb = new NativeJitterBuffer({ clockRate: 8000 });
    const rx = new NativeReceiverStats({ clockRate: 8000 });
    const words = new Float64Array(10);
    const attach = () => native.fastAttach(whole, SOCKET_ID, jb.handle, rx.handle, words, encodeAddress('127.0.0.1'), 4000, 0);
    expect(attach()).toBe(true);
    // Attached again (what a re-attach does): still held once.
    expect(attach()).toBe(true);
    expect(() => jb.close()).toThrow(/fastDetach first/);
    expect(jb.stats.pushed).toBe(0);
    native.fastDetach(whole, SOCKET_ID);
    jb.close();
    expect(attach).toThrow(/not closed/);
  });

  it('lets go while a tap watches every packet, and after a re-INVITE attaches again', async () => {
    const { attaches, takenInC } = await compare(4, {
      4000: (path) => path.observe(true),
      5000: (path) => path.observe(false),
      6000: (path) => path.update(pcmuMedia(), 6000),
    });
    expect(takenInC(3100, 3980)).toBeGreaterThan(30);
    expect(takenInC(4000, 4980)).toBe(0);
    expect(takenInC(5020, 5980)).toBeGreaterThan(30);
    expect(takenInC(6020, 6980)).toBeGreaterThan(30);
    // The first attach, after the tap, after the re-INVITE, after the ptime change.
    expect(attaches).toBe(4);
  });
});
