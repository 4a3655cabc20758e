/**
 * The C ports of the jitter buffer and the receiver statistics (native/rtp-udp/rtp_inbound.c,
 * through src/media/native-inbound.ts) against their TypeScript originals: both are driven side
 * by side with the same packets at the same times, and every push result, every pull output
 * (kind, payload bytes, sequence number, timestamp, ssrc, payload type, next), every verdict,
 * snapshot and report block, and the stats after every step must be identical: the same numbers,
 * -0 told from 0 as toEqual does.
 *
 * Streams come from a seeded generator (so a failure names its seed and step, and repeats) that
 * mixes in everything the buffer treats specially; each run also counts what it went through
 * and fails if a corner was never reached, so the parity claim covers them.
 *
 * The native module is always built in CI: where it is missing these tests fail, not skip.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { JitterBuffer, type JitterBufferOptions, type JitterBufferStats, type JitterOutput, type JitterPacket, type PushResult } from '../../../src/media/jitter-buffer.ts';
import { loadNativeInbound, NativeJitterBuffer, NativeReceiverStats, type JitterBufferLike, type ReceiverStatsLike } from '../../../src/media/native-inbound.ts';
import type { ReportBlock } from '../../../src/media/rtcp.ts';
import { RtpReceiverStats, type ReceiverSnapshot, type ReceiverStatsOptions, type SeqVerdict } from '../../../src/media/rtp-receiver-stats.ts';
import { prng } from './prng.ts';

// ---- exact comparison ----

/** Deep equality with Object.is on numbers (so NaN = NaN and -0 ≠ 0, as toEqual). */
function same(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  return Object.is(a, b);
}

/**
 * Checks one step. Comparing every step with expect() would cost more than the buffers do, so a
 * plain comparison runs first and expect() only reports a difference, with its context.
 */
function check(what: string, ts: unknown, native: unknown): void {
  if (same(ts, native)) return;
  expect(native, what).toEqual(ts);
  // toEqual let it through (e.g. a difference it does not see): fail anyway.
  throw new Error(`${what}: ${String(native)} differs from ${String(ts)}`);
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** A pull output as plain values, everything a consumer can see. */
function outputView(out: JitterOutput): unknown[] {
  switch (out.kind) {
    case 'frame':
      return ['frame', hex(out.payload), out.sequenceNumber, out.timestamp, out.ssrc, out.payloadType ?? 'none'];
    case 'lost':
      return ['lost', out.timestamp, out.next === undefined ? 'none' : hex(out.next)];
    case 'empty':
      return ['empty'];
  }
}

const STATS_KEYS: readonly (keyof JitterBufferStats)[] = [
  'pushed',
  'played',
  'late',
  'duplicates',
  'lost',
  'concealed',
  'shrunk',
  'overflow',
  'resyncs',
  'targetDelayMs',
  'currentDelayMs',
  'buffered',
];

const statsView = (s: JitterBufferStats): unknown[] => STATS_KEYS.map((k) => s[k]);

const snapshotView = (s: ReceiverSnapshot): unknown[] => [s.ssrc ?? 'none', s.extendedHighestSeq, s.expected, s.received, s.cumulativeLost, s.jitter, s.jitterMs];

const blockView = (b: ReportBlock | undefined): unknown[] =>
  b === undefined ? ['none'] : [b.ssrc, b.fractionLost, b.cumulativeLost, b.extendedHighestSeq, b.jitter, b.lastSr, b.delaySinceLastSr];

// ---- side by side ----

/** What a run of the jitter buffers went through (the TypeScript side's view). */
interface JitterCoverage {
  results: Record<PushResult, number>;
  frames: number;
  lostWithNext: number;
  lostWithoutNext: number;
  empty: number;
  /** Frames of another SSRC than the last one pushed: the drain (an old stream's tail). */
  drained: number;
  seqWraps: number;
  tsWraps: number;
  resets: number;
  stats: JitterBufferStats;
}

function jitterCoverage(): JitterCoverage {
  return {
    results: { queued: 0, resync: 0, late: 0, duplicate: 0 },
    frames: 0,
    lostWithNext: 0,
    lostWithoutNext: 0,
    empty: 0,
    drained: 0,
    seqWraps: 0,
    tsWraps: 0,
    resets: 0,
    stats: { pushed: 0, played: 0, late: 0, duplicates: 0, lost: 0, concealed: 0, shrunk: 0, overflow: 0, resyncs: 0, targetDelayMs: 0, currentDelayMs: 0, buffered: 0 },
  };
}

/** The TypeScript buffer and the native one, fed the same; every step compared. */
class JitterPair {
  readonly ts: JitterBuffer;
  readonly native: NativeJitterBuffer;
  private step = 0;
  private lastSsrc: number | undefined;
  private lastFrame: { seq: number; ts: number } | undefined;

  constructor(
    options: JitterBufferOptions,
    private readonly label: string,
    readonly coverage: JitterCoverage = jitterCoverage(),
  ) {
    this.ts = new JitterBuffer(options);
    this.native = new NativeJitterBuffer(options);
    this.checkStats('new');
  }

  push(packet: JitterPacket, arrivalMs: number): PushResult {
    const where = this.where(`push seq ${packet.sequenceNumber} at ${arrivalMs}`);
    const a = this.ts.push(packet, arrivalMs);
    const b = this.native.push(packet, arrivalMs);
    check(where, a, b);
    this.checkStats(where);
    this.coverage.results[a]++;
    this.lastSsrc = packet.ssrc;
    return a;
  }

  pull(nowMs: number): JitterOutput {
    const where = this.where(`pull at ${nowMs}`);
    const a = this.ts.pull(nowMs);
    const b = this.native.pull(nowMs);
    check(where, outputView(a), outputView(b));
    this.checkStats(where);
    this.count(a);
    return a;
  }

  reset(): void {
    this.ts.reset();
    this.native.reset();
    this.checkStats(this.where('reset'));
    this.coverage.resets++;
  }

  /** Adds this pair's final stats into the coverage. */
  finish(): void {
    const s = this.ts.stats;
    expect(this.native.stats, this.label).toEqual(s);
    for (const k of STATS_KEYS) this.coverage.stats[k] += s[k];
  }

  private where(what: string): string {
    return `${this.label}, step ${this.step++} (${what})`;
  }

  private checkStats(where: string): void {
    check(`${where}: stats`, statsView(this.ts.stats), statsView(this.native.stats));
  }

  private count(out: JitterOutput): void {
    const c = this.coverage;
    if (out.kind === 'empty') c.empty++;
    else if (out.kind === 'lost') {
      if (out.next) c.lostWithNext++;
      else c.lostWithoutNext++;
    } else {
      c.frames++;
      if (out.ssrc !== this.lastSsrc) c.drained++;
      if (this.lastFrame?.seq === 0xffff && out.sequenceNumber === 0) c.seqWraps++;
      if (this.lastFrame && this.lastFrame.ts - out.timestamp > 0x8000_0000) c.tsWraps++;
      this.lastFrame = { seq: out.sequenceNumber, ts: out.timestamp };
    }
  }
}

interface RxCoverage {
  verdicts: Record<SeqVerdict, number>;
  blocks: number;
  fractionLost: number;
  negativeLoss: number;
  seqWraps: number;
  withLsr: number;
}

/** The TypeScript statistics and the native ones, fed the same; every step compared. */
class StatsPair {
  readonly ts: RtpReceiverStats;
  readonly native: NativeReceiverStats;
  private step = 0;

  constructor(
    options: ReceiverStatsOptions,
    private readonly label: string,
    readonly coverage: RxCoverage = { verdicts: { valid: 0, reordered: 0, probation: 0, 'bad-seq': 0, restart: 0 }, blocks: 0, fractionLost: 0, negativeLoss: 0, seqWraps: 0, withLsr: 0 },
  ) {
    this.ts = new RtpReceiverStats(options);
    this.native = new NativeReceiverStats(options);
    this.checkSnapshot('new');
  }

  update(ssrc: number, sequenceNumber: number, timestamp: number, arrivalMs: number): SeqVerdict {
    const where = this.where(`update seq ${sequenceNumber} at ${arrivalMs}`);
    const a = this.ts.update({ ssrc, sequenceNumber, timestamp }, arrivalMs);
    check(where, a, this.native.update({ ssrc, sequenceNumber, timestamp }, arrivalMs));
    this.checkSnapshot(where);
    this.coverage.verdicts[a]++;
    return a;
  }

  senderReport(seconds: number, fraction: number, arrivalMs: number): void {
    this.ts.onSenderReport(seconds, fraction, arrivalMs);
    this.native.onSenderReport(seconds, fraction, arrivalMs);
    this.checkSnapshot(this.where('sender report'));
  }

  reportBlock(nowMs: number): ReportBlock | undefined {
    const where = this.where(`report block at ${nowMs}`);
    const a = this.ts.reportBlock(nowMs);
    check(where, blockView(a), blockView(this.native.reportBlock(nowMs)));
    this.checkSnapshot(where);
    if (a) {
      const c = this.coverage;
      c.blocks++;
      if (a.fractionLost > 0) c.fractionLost++;
      if (a.cumulativeLost < 0) c.negativeLoss++;
      if (a.extendedHighestSeq > 0xffff) c.seqWraps++;
      if (a.lastSr !== 0) c.withLsr++;
    }
    return a;
  }

  private where(what: string): string {
    return `${this.label}, step ${this.step++} (${what})`;
  }

  private checkSnapshot(where: string): void {
    check(`${where}: snapshot`, snapshotView(this.ts.snapshot()), snapshotView(this.native.snapshot()));
  }
}

// ---- random streams ----

type JitterStep = { at: number; order: number } & ({ kind: 'push'; packet: JitterPacket } | { kind: 'pull' } | { kind: 'reset' });

interface JitterScenario {
  options: JitterBufferOptions;
  steps: JitterStep[];
}

/**
 * A call's inbound stream as the network delivers it, with pulls on an irregular playout clock.
 * Each packet's payload starts with its serial number, so a payload handed out for the wrong
 * packet cannot compare equal.
 */
function jitterScenario(seed: number, defaults: boolean): JitterScenario {
  const rand = prng(seed);
  const chance = (p: number) => rand() < p;
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

  const clockRate = defaults ? 8000 : pick([8000, 16000, 48000, 44100]);
  const frameMs = defaults ? 20 : pick([10, 20, 20, 30, 60]);
  const options: JitterBufferOptions = defaults
    ? { clockRate }
    : {
        clockRate,
        frameMs,
        minDelayMs: pick([0, 10, 12.5, 20, 40]),
        maxDelayMs: pick([60, 200, 333.3, 600]),
        initialDelayMs: pick([0, 30, 60, 120, 900]),
        historyPackets: pick([1, 2, 7, 23, 150, 300]),
        maxConcealFrames: int(0, 8),
        resyncSeqJump: pick([5, 20, 50, 300]),
        resyncTimeJumpMs: pick([300, 1000, 2000, 5000]),
        maxPackets: pick([1, 2, 5, 16, 50]),
      };
  const seqJump = options.resyncSeqJump ?? 50;
  const timeJump = options.resyncTimeJumpMs ?? 2000;
  const tsPerFrame = Math.round((clockRate * frameMs) / 1000);

  const steps: JitterStep[] = [];
  const add = (step: { at: number } & ({ kind: 'push'; packet: JitterPacket } | { kind: 'pull' } | { kind: 'reset' })) => steps.push({ ...step, order: rand() });

  let serial = 0;
  const payloadMode = pick(['fixed', 'random', 'tiny', 'max'] as const);
  const payloadFor = (): Uint8Array => {
    const length = payloadMode === 'fixed' ? 160 : payloadMode === 'tiny' ? int(0, 3) : payloadMode === 'max' ? pick([1279, 1280]) : int(4, 400);
    const bytes = new Uint8Array(length);
    const id = serial++;
    for (let i = 0; i < length; i++) bytes[i] = i < 4 ? (id >>> (8 * i)) & 0xff : (id * 7 + i) & 0xff;
    return bytes;
  };
  const ptMode = pick(['none', 'fixed', 'mixed'] as const);
  const payloadTypeFor = (): number | undefined => (ptMode === 'none' ? undefined : ptMode === 'fixed' ? 0 : pick([undefined, 0, 8, 101, 127]));

  // Sender: near the 16-bit and 32-bit wraps half the time.
  let ssrc = int(0, 0xffff_ffff);
  let seq = chance(0.5) ? 0xffff - int(0, 600) : int(0, 0xffff);
  let ts = chance(0.5) ? (0x1_0000_0000 - int(0, 300) * tsPerFrame - int(0, tsPerFrame)) % 0x1_0000_0000 : int(0, 0xffff_ffff);
  let send = int(0, 500) + rand();
  let path = 20 + rand() * 40;
  const lossRate = pick([0, 0.01, 0.05, 0.2]);
  const duplicateRate = pick([0, 0.01, 0.05]);
  const spreads = [2, 30, 80, 600];
  let spread = pick(spreads);
  const count = int(300, 1200);
  const emit = (packet: JitterPacket, at: number) => add({ kind: 'push', at, packet });

  for (let i = 0; i < count; i++) {
    if (chance(0.004)) {
      // A new source (another SSRC, unrelated numbering).
      ssrc = int(0, 0xffff_ffff);
      seq = int(0, 0xffff);
      ts = int(0, 0xffff_ffff);
    }
    if (chance(0.004)) seq = (seq + int(seqJump + 1, 3 * seqJump + 500)) & 0xffff; // forward jump
    if (chance(0.003)) ts = (ts + int(100_000, 2_000_000_000)) % 0x1_0000_0000; // spliced stream
    if (chance(0.003)) path += (chance(0.5) ? 1 : -1) * (timeJump + rand() * 3000); // timing jump
    if (chance(0.004)) {
      // The sender restarts lower: the first packet is a stray, its successor confirms it.
      seq = (seq - int(seqJump + 1, 20_000)) & 0xffff;
    }
    if (chance(0.004)) {
      // One stray far behind, never followed.
      const stray = (seq - int(seqJump + 1, 20_000)) & 0xffff;
      emit({ ssrc, sequenceNumber: stray, timestamp: (ts + int(-1000, 1000) * tsPerFrame + 0x1_0000_0000) % 0x1_0000_0000, payload: payloadFor() }, send + path + rand() * spread);
    }
    if (chance(0.01)) {
      // Silence suppression: timestamps leap, sequence numbers continue.
      const gap = int(3, 150);
      ts = (ts + gap * tsPerFrame) % 0x1_0000_0000;
      send += gap * frameMs;
    }
    if (chance(0.004)) spread = pick(spreads);

    const packet: JitterPacket = { ssrc, sequenceNumber: seq, timestamp: ts, payload: payloadFor(), payloadType: payloadTypeFor() };
    const arrival = send + path + rand() * spread;
    if (!chance(lossRate)) emit(packet, arrival);
    if (chance(duplicateRate)) emit({ ...packet }, arrival + rand() * 100);
    seq = (seq + 1) & 0xffff;
    ts = (ts + tsPerFrame) % 0x1_0000_0000;
    send += frameMs + (chance(0.1) ? rand() * 0.5 : 0);
  }

  // The playout clock: irregular ticks, now and then two at once, or none for a while (nobody
  // pulls: the buffer overflows), and now and then a reset.
  const end = send + 3000;
  const irregular = chance(0.5);
  for (let at = int(0, 300) + rand(); at < end; ) {
    if (chance(0.003)) at += int(300, 3000);
    add({ kind: 'pull', at });
    if (chance(0.02)) add({ kind: 'pull', at });
    if (chance(0.0005)) add({ kind: 'reset', at });
    at += irregular ? frameMs * (0.7 + rand() * 0.6) : frameMs;
  }
  steps.sort((a, b) => a.at - b.at || a.order - b.order);
  return { options, steps };
}

function runJitterScenario(seed: number, defaults: boolean, coverage: JitterCoverage): void {
  const { options, steps } = jitterScenario(seed, defaults);
  const pair = new JitterPair(options, `seed ${seed} (${JSON.stringify(options)})`, coverage);
  for (const step of steps) {
    if (step.kind === 'push') pair.push(step.packet, step.at);
    else if (step.kind === 'pull') pair.pull(step.at);
    else pair.reset();
  }
  pair.finish();
}

function seeds(from: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => from + i);
}

/** Every corner the random runs must have gone through at least once. */
function expectJitterCorners(c: JitterCoverage): void {
  expect(c.results.queued).toBeGreaterThan(0);
  expect(c.results.resync).toBeGreaterThan(0);
  expect(c.results.late).toBeGreaterThan(0);
  expect(c.results.duplicate).toBeGreaterThan(0);
  expect(c.frames).toBeGreaterThan(0);
  expect(c.lostWithNext).toBeGreaterThan(0);
  expect(c.lostWithoutNext).toBeGreaterThan(0);
  expect(c.empty).toBeGreaterThan(0);
  expect(c.drained).toBeGreaterThan(0);
  expect(c.seqWraps).toBeGreaterThan(0);
  expect(c.tsWraps).toBeGreaterThan(0);
  for (const k of ['late', 'duplicates', 'lost', 'concealed', 'shrunk', 'overflow', 'resyncs'] as const) expect(c.stats[k], k).toBeGreaterThan(0);
}

type RxStep = { at: number; order: number } & (
  | { kind: 'update'; ssrc: number; seq: number; ts: number }
  | { kind: 'sr'; seconds: number; fraction: number }
  | { kind: 'rb' }
);

function rxScenario(seed: number, defaults: boolean): { options: ReceiverStatsOptions; steps: RxStep[] } {
  const rand = prng(seed);
  const chance = (p: number) => rand() < p;
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

  const clockRate = defaults ? 8000 : pick([8000, 16000, 48000, 90000]);
  const options: ReceiverStatsOptions = defaults
    ? { clockRate }
    : { clockRate, minSequential: int(0, 4), maxDropout: pick([50, 3000, 30_000, 65_536]), maxMisorder: pick([0, 10, 100, 3000]) };
  const maxDropout = options.maxDropout ?? 3000;
  const tsPerFrame = clockRate / 50;

  const steps: RxStep[] = [];
  const add = (step: { at: number } & ({ kind: 'update'; ssrc: number; seq: number; ts: number } | { kind: 'sr'; seconds: number; fraction: number } | { kind: 'rb' })) =>
    steps.push({ ...step, order: rand() });

  let ssrc = int(0, 0xffff_ffff);
  let seq = chance(0.5) ? 0xffff - int(0, 300) : int(0, 0xffff);
  let ts = chance(0.5) ? (0x1_0000_0000 - int(0, 200) * tsPerFrame) % 0x1_0000_0000 : int(0, 0xffff_ffff);
  let send = rand() * 1000;
  const lossRate = pick([0, 0.02, 0.1]);
  const spread = pick([0, 5, 40, 200]);
  const count = int(200, 1000);
  const emit = (at: number) => add({ kind: 'update', at, ssrc, seq, ts });

  if (chance(0.3)) add({ kind: 'rb', at: send - 1 });
  for (let i = 0; i < count; i++) {
    if (chance(0.005)) {
      ssrc = int(0, 0xffff_ffff);
      seq = int(0, 0xffff);
    }
    if (chance(0.006)) seq = (seq + int(maxDropout, 0xffff)) & 0xffff; // a jump: bad-seq, then confirmed
    if (chance(0.005)) add({ kind: 'update', at: send + rand() * spread, ssrc, seq: int(0, 0xffff), ts: int(0, 0xffff_ffff) }); // a stray
    if (chance(0.01)) add({ kind: 'update', at: send + rand() * spread, ssrc, seq: (seq - int(1, 300)) & 0xffff, ts }); // old, reordered far
    if (chance(0.01)) ts = (ts + int(5, 200) * tsPerFrame) % 0x1_0000_0000; // silence suppression
    if (chance(0.01)) add({ kind: 'sr', at: send + rand() * 20, seconds: int(0, 0xffff_ffff), fraction: int(0, 0xffff_ffff) });
    if (chance(0.03)) add({ kind: 'rb', at: send + rand() * 20 });

    const arrival = send + rand() * spread;
    if (!chance(lossRate)) emit(arrival);
    if (chance(0.03)) emit(arrival + rand() * 50); // duplicate
    seq = (seq + 1) & 0xffff;
    ts = (ts + tsPerFrame) % 0x1_0000_0000;
    send += 20;
  }
  add({ kind: 'rb', at: send + 100 });
  steps.sort((a, b) => a.at - b.at || a.order - b.order);
  return { options, steps };
}

function runRxScenario(seed: number, defaults: boolean, coverage: RxCoverage): void {
  const { options, steps } = rxScenario(seed, defaults);
  const pair = new StatsPair(options, `seed ${seed} (${JSON.stringify(options)})`, coverage);
  for (const step of steps) {
    if (step.kind === 'update') pair.update(step.ssrc, step.seq, step.ts, step.at);
    else if (step.kind === 'sr') pair.senderReport(step.seconds, step.fraction, step.at);
    else pair.reportBlock(step.at);
  }
}

// ---- the tests ----

describe('native inbound module', () => {
  it('is built and has the inbound functions (CI always builds it)', () => {
    expect(loadNativeInbound()).toBeDefined();
  });

  it('tells its handles apart from anything else, and checks arguments', () => {
    const native = loadNativeInbound()!;
    const jb = new NativeJitterBuffer({ clockRate: 8000 });
    const rx = new NativeReceiverStats({ clockRate: 8000 });
    const bytes = new Uint8Array(1280);
    const info = new Float64Array(6);
    expect(() => native.jbPull(rx.handle, 0)).toThrow(TypeError);
    expect(() => native.rxUpdate(jb.handle, 1, 1, 1, 0)).toThrow(TypeError);
    expect(() => native.jbPull({}, 0)).toThrow(TypeError);
    const create = (out: Uint8Array, outInfo: Float64Array) => native.jbCreate(8000, 20, 20, 200, 60, 150, 5, 50, 2000, 50, 1280, out, outInfo);
    expect(create(bytes, info)).toBeTypeOf('object');
    expect(() => create(new Uint8Array(1279), info)).toThrow(RangeError);
    expect(() => create(bytes, new Float64Array(5))).toThrow(RangeError);
    expect(() => create(bytes, new Float32Array(6) as unknown as Float64Array)).toThrow(TypeError);
    expect(() => native.jbStats(jb.handle, new Float64Array(11))).toThrow(RangeError);
    expect(() => native.rxSnapshot(rx.handle, new Float64Array(7))).toThrow(RangeError);
    const packet = { ssrc: 1, sequenceNumber: 1, timestamp: 1, payload: new Uint8Array(1) };
    expect(() => jb.push({ ...packet, sequenceNumber: 65_536 }, 0)).toThrow(RangeError);
    expect(() => jb.push({ ...packet, sequenceNumber: 1.5 }, 0)).toThrow(RangeError);
    expect(() => jb.push({ ...packet, ssrc: -1 }, 0)).toThrow(RangeError);
    expect(() => jb.push({ ...packet, timestamp: 2 ** 32 }, 0)).toThrow(RangeError);
    expect(() => jb.push({ ...packet, payloadType: 128 }, 0)).toThrow(RangeError);
    expect(() => rx.update({ ssrc: 1, sequenceNumber: -1, timestamp: 0 }, 0)).toThrow(RangeError);
    expect(() => rx.onSenderReport(2 ** 32, 0, 0)).toThrow(RangeError);
    expect(() => new NativeJitterBuffer({ clockRate: 8000, historyPackets: 0 })).toThrow(RangeError);
    expect(() => new NativeJitterBuffer({ clockRate: 8000, minDelayMs: 100, maxDelayMs: 50 })).toThrow(RangeError);
    expect(() => new NativeJitterBuffer({ clockRate: 0 })).toThrow(RangeError);
    expect(() => new NativeReceiverStats({ clockRate: 8000, minSequential: -1 })).toThrow(RangeError);
    // A bad argument changed nothing.
    expect(jb.stats.pushed).toBe(0);
  });

  it('refuses a payload longer than maxPayload as late, and counts it', () => {
    const jb = new NativeJitterBuffer({ clockRate: 8000, maxPayload: 200 });
    const packet = (seq: number, length: number) => ({ ssrc: 7, sequenceNumber: seq, timestamp: seq * 160, payload: new Uint8Array(length).fill(seq) });
    expect(jb.push(packet(1, 200), 0)).toBe('queued');
    expect(jb.push(packet(2, 201), 20)).toBe('late');
    expect(jb.push(packet(3, 100_000), 40)).toBe('late');
    expect(jb.refused).toBe(2);
    expect(jb.stats).toMatchObject({ pushed: 3, late: 2, buffered: 1 });
    const out = jb.pull(1000);
    expect(out.kind === 'frame' && [out.sequenceNumber, out.payload.length, out.payload[0]]).toEqual([1, 200, 1]);
  });

  it('hands out payloads that outlive the next pull, with the payload type carried through', () => {
    const jb = new NativeJitterBuffer({ clockRate: 8000, initialDelayMs: 20 });
    const frames: JitterOutput[] = [];
    for (let i = 0; i < 5; i++) {
      jb.push({ ssrc: 1, sequenceNumber: i, timestamp: i * 160, payload: Uint8Array.of(i, i, i), payloadType: i === 2 ? undefined : 8 }, i * 20);
      frames.push(jb.pull(i * 20 + 20));
    }
    expect(frames.map((f) => (f.kind === 'frame' ? [...f.payload] : f.kind))).toEqual([0, 1, 2, 3, 4].map((i) => [i, i, i]));
    expect(frames.map((f) => f.kind === 'frame' && f.payloadType)).toEqual([8, 8, undefined, 8, 8]);
    // After the holds, 'empty': one shared object.
    const outs = Array.from({ length: 8 }, (_, i) => jb.pull(120 + i * 20));
    expect(outs.map((o) => o.kind)).toEqual(['lost', 'lost', 'lost', 'lost', 'lost', 'empty', 'empty', 'empty']);
    expect(outs[5]).toBe(outs[6]);
  });
});

describe('closing a native jitter buffer', () => {
  /** The process's virtual size, in bytes (/proc/self/status VmSize). */
  const virtualBytes = (): number => Number(/VmSize:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) * 1024;

  it('gives its memory back at once, keeps its last statistics, and then takes nothing', () => {
    const jbs = Array.from({ length: 100 }, () => new NativeJitterBuffer({ clockRate: 8000 }));
    for (const [i, jb] of jbs.entries()) {
      jb.push({ ssrc: 1, sequenceNumber: i, timestamp: 0, payload: new Uint8Array(160) }, 0);
      jb.push({ ssrc: 1, sequenceNumber: i + 1, timestamp: 160, payload: new Uint8Array(160) }, 20);
    }
    const before = virtualBytes();
    const stats = jbs[0]!.stats;
    for (const jb of jbs) jb.close();
    // Each buffer maps (2 × maxPackets + 1) × maxPayload bytes of slots (about 129 KB): 100 of them
    // go now, while every handle is still referenced.
    expect(before - virtualBytes()).toBeGreaterThan(100 * 100_000);
    const jb = jbs[0]!;
    expect(jb.stats).toEqual(stats);
    expect(jb.stats).toMatchObject({ pushed: 2, buffered: 2 });
    expect(jb.push({ ssrc: 1, sequenceNumber: 9, timestamp: 320, payload: new Uint8Array(160) }, 40)).toBe('late');
    expect(jb.pull(1000).kind).toBe('empty');
    jb.reset();
    jb.close();
    expect(jb.stats).toEqual(stats);
    // The module itself refuses a closed buffer (the adapter never asks it).
    const native = loadNativeInbound()!;
    expect(() => native.jbPull(jb.handle, 0)).toThrow(/closed/);
    expect(() => native.jbPush(jb.handle, 1, 1, 1, 0, new Uint8Array(1), 0)).toThrow(/closed/);
    expect(() => native.jbStats(jb.handle, new Float64Array(12))).toThrow(/closed/);
    expect(() => native.jbReset(jb.handle)).toThrow(/closed/);
    expect(() => native.jbClose(jb.handle)).not.toThrow();
  });
});

describe('NativeJitterBuffer matches JitterBuffer', () => {
  it('on random streams with the default options', () => {
    const coverage = jitterCoverage();
    for (const seed of seeds(1, 60)) runJitterScenario(seed, true, coverage);
    expectJitterCorners(coverage);
  });

  it('on random streams with other options (rates, ptimes, delays, history, limits)', () => {
    const coverage = jitterCoverage();
    for (const seed of seeds(1001, 140)) runJitterScenario(seed, false, coverage);
    expectJitterCorners(coverage);
    expect(coverage.resets).toBeGreaterThan(0);
  });

  const SSRC = 0x5eed;
  const packet = (seq: number, ts: number, ssrc = SSRC): JitterPacket => ({
    ssrc,
    sequenceNumber: seq & 0xffff,
    timestamp: ts % 0x1_0000_0000,
    payload: Uint8Array.of(seq & 0xff, (seq >> 8) & 0xff, ssrc & 0xff),
  });

  it('on a stray far behind, ignored, then a confirmed restart lower, whose old tail drains', () => {
    const pair = new JitterPair({ clockRate: 8000 }, 'stray');
    for (let i = 0; i < 30; i++) {
      pair.push(packet(1000 + i, 8000 + i * 160), 30 + i * 20);
      pair.pull(37 + i * 20);
    }
    // Ten more arrive in a burst nobody pulls yet: the tail the restart leaves to drain.
    for (let i = 30; i < 40; i++) pair.push(packet(1000 + i, 8000 + i * 160), 620 + i);
    expect(pair.push(packet(500, 9000), 670)).toBe('late');
    expect(pair.push(packet(1040, 8000 + 40 * 160), 671)).toBe('queued');
    expect(pair.push(packet(400, 9000), 672)).toBe('late');
    expect(pair.push(packet(401, 9160), 673)).toBe('resync');
    const seqs: number[] = [];
    for (let at = 680; at < 1500; at += 20) {
      const out = pair.pull(at);
      if (out.kind === 'frame') seqs.push(out.sequenceNumber);
      pair.push(packet(402 + (at - 680) / 20, 9320 + ((at - 680) / 20) * 160), at + 3);
    }
    // First the old stream's buffered tail (it had played up to 1026), then the new one.
    expect(seqs.slice(0, 14)).toEqual(Array.from({ length: 14 }, (_, i) => 1027 + i));
    expect(seqs.slice(14).every((seq) => seq > 401 && seq < 500)).toBe(true);
    pair.finish();
  });

  // (The drain never outgrows maxPackets: it is non-empty only until the new stream starts, and a
  // restart before that start adds no tail. So this is the case the cap would have been for.)
  it('on restarts in a row: the drain outlives a stream that never started', () => {
    const pair = new JitterPair({ clockRate: 8000, maxPackets: 5 }, 'drain');
    pair.push(packet(0, 0, 1), 0);
    pair.pull(200);
    for (let i = 1; i < 9; i++) pair.push(packet(i, i * 160, 1), 200 + i);
    expect(pair.ts.stats.buffered).toBe(5);
    for (let i = 0; i < 4; i++) pair.push(packet(100 + i, 50_000 + i * 160, 2), 300 + i);
    pair.pull(400); // the drain plays first: the second stream does not start
    pair.pull(420);
    for (let i = 0; i < 4; i++) pair.push(packet(200 + i, 90_000 + i * 160, 3), 500 + i);
    const played: number[] = [];
    for (let at = 520; at < 1000; at += 20) {
      const out = pair.pull(at);
      if (out.kind === 'frame') played.push(out.ssrc);
    }
    // Seq 1-3 overflowed, 4 and 5 were played, 6-8 are left; stream 2 is gone, stream 3 plays.
    expect(played.slice(0, 5)).toEqual([1, 1, 1, 3, 3]);
    pair.finish();
  });

  it('on a forward jump, a timing jump and a splice, each a resync', () => {
    const pair = new JitterPair({ clockRate: 8000 }, 'jumps');
    let at = 0;
    let seq = 65_500;
    let ts = 0xffff_ff00;
    const play = (n: number, delay = 40) => {
      for (let i = 0; i < n; i++, seq++, ts += 160, at += 20) {
        pair.push(packet(seq, ts), at + delay);
        pair.pull(at + delay + 7);
      }
    };
    play(60);
    seq += 51; // > resyncSeqJump
    play(40);
    play(40, 2100); // arrives > resyncTimeJumpMs later than its timestamp says
    ts += 123_456_789; // timestamps jump against the sequence
    play(40, 2100);
    expect(pair.ts.stats.resyncs).toBe(3);
    pair.finish();
  });

  it('on overflow while nobody pulls, then playout', () => {
    const pair = new JitterPair({ clockRate: 8000, maxPackets: 7 }, 'overflow');
    for (let i = 0; i < 40; i++) pair.push(packet(i, i * 160), i * 20);
    pair.pull(800);
    for (let i = 40; i < 80; i++) pair.push(packet(i, i * 160), i * 20);
    for (let at = 1600; at < 2200; at += 20) pair.pull(at);
    expect(pair.ts.stats.overflow).toBeGreaterThan(60);
    pair.finish();
  });

  it('on non-finite and signed-zero times', () => {
    const pair = new JitterPair({ clockRate: 8000, historyPackets: 12 }, 'odd times');
    pair.push(packet(0, 0), -0);
    pair.pull(-0);
    for (let i = 1; i < 40; i++) pair.push(packet(i, i * 160), i === 13 ? NaN : i === 17 ? Infinity : i === 23 ? -Infinity : i * 20 + 30);
    for (const at of [NaN, 100, Infinity, 200, -Infinity, 300, 400, 500, 600, 700, 800]) pair.pull(at);
    pair.reset();
    for (let i = 0; i < 30; i++) pair.push(packet(1000 + i, 40_000 + i * 160), NaN);
    for (let i = 0; i < 10; i++) pair.pull(1000 + i * 20);
    pair.finish();
  });
});

describe('NativeReceiverStats matches RtpReceiverStats', () => {
  function expectRxCorners(c: RxCoverage): void {
    for (const [verdict, n] of Object.entries(c.verdicts)) expect(n, verdict).toBeGreaterThan(0);
    expect(c.blocks).toBeGreaterThan(0);
    expect(c.fractionLost).toBeGreaterThan(0);
    expect(c.negativeLoss).toBeGreaterThan(0);
    expect(c.seqWraps).toBeGreaterThan(0);
    expect(c.withLsr).toBeGreaterThan(0);
  }

  it('on random streams with the default options', () => {
    const coverage: RxCoverage = { verdicts: { valid: 0, reordered: 0, probation: 0, 'bad-seq': 0, restart: 0 }, blocks: 0, fractionLost: 0, negativeLoss: 0, seqWraps: 0, withLsr: 0 };
    for (const seed of seeds(1, 60)) runRxScenario(seed, true, coverage);
    expectRxCorners(coverage);
  });

  it('on random streams with other options (rates, probation, dropout, misorder)', () => {
    const coverage: RxCoverage = { verdicts: { valid: 0, reordered: 0, probation: 0, 'bad-seq': 0, restart: 0 }, blocks: 0, fractionLost: 0, negativeLoss: 0, seqWraps: 0, withLsr: 0 };
    for (const seed of seeds(1001, 140)) runRxScenario(seed, false, coverage);
    expectRxCorners(coverage);
  });

  it('at the edges of the report block fields (24-bit loss clamp, 32-bit wraps, DLSR)', () => {
    // Every forward step within MAX_DROPOUT (and no probation): expected races past 2^24 and the
    // highest past 2^32.
    const pair = new StatsPair({ clockRate: 48_000, minSequential: 0, maxDropout: 65_536 }, 'edges');
    let seq = 0;
    for (let i = 0; i < 70_000; i++, seq = (seq + 65_000) & 0xffff) pair.update(9, seq, (i * 960) % 0x1_0000_0000, i * 20);
    expect(pair.reportBlock(1_400_000)!.cumulativeLost).toBe(0x7fffff);
    expect(pair.ts.snapshot().extendedHighestSeq).toBeGreaterThan(2 ** 32);
    // An SR 18 hours ago: DLSR passes 2^32 (wraps); one from the future: DLSR 0.
    pair.senderReport(0xffff_ffff, 0xffff_ffff, 1_000);
    pair.reportBlock(1_000 + 70_000_000);
    pair.senderReport(123, 456, 5_000_000);
    pair.reportBlock(4_999_999.99);
    // A jump in arrival time of 30 years: the jitter passes 2^32 (the RR field wraps).
    pair.update(9, seq, 0, 1e12);
    pair.reportBlock(1e12);
    // Non-finite arrival times: NaN jitter, as in TypeScript; the RR field reads 0.
    pair.update(9, (seq + 1) & 0xffff, 0, NaN);
    pair.reportBlock(NaN);
    pair.update(9, (seq + 2) & 0xffff, 0, Infinity);
    pair.reportBlock(Infinity);
  });
});
