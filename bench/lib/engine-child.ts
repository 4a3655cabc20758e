/**
 * The engine under test, in its own process: `startEngine(loadConfig())` exactly as `switchboard
 * serve` runs it (config from the environment the parent sets), plus a thin IPC side channel for
 * the benchmark. Spawned by engine-proc.ts with `node --import tsx`; never run by hand.
 *
 * What this file adds to the engine, and what it costs:
 * - accounts with API keys and a balance (the same repos calls as `switchboard accounts create`);
 * - `perf_hooks.monitorEventLoopDelay` (5 ms resolution, a native timer) for event-loop delay;
 * - optionally (`probe`), the engine's own outbound frame-interval error, measured where the
 *   PCMU RTP packets really leave, before the load generator's event loop can blur it: with RTP
 *   I/O in its thread (the default; not with SWITCHBOARD_RTP_THREAD=0) by that thread's send probe
 *   (src/media/rtp-io/send-probe.ts, read over its message channel); in-thread, by a wrapper on
 *   `dgram.Socket.prototype.send` (one WeakMap lookup, one `performance.now()` and a histogram
 *   bin per packet). Both apply the same rule;
 * - optionally (`turns`), lib/turn-probe.ts: per-turn timestamps of pipeline calls (decision,
 *   provider requests, first reply frame, first audible RTP packet) on the machine-wide clock;
 * - optionally (`vad`), a stand-in CallEngine for assistant calls: the diagnostics echo plus one
 *   Silero VAD stream per call fed every inbound frame (one at a time, read as the cascade's
 *   listener reads them; at 8 kHz on G.711 calls, as the cascade runs it). It is plugged in at the
 *   seam the session issue uses (`CallEnv.engine`).
 *
 * - on request (`heapSampleStart` / `heapSampleStop`), V8's sampling heap profiler, keeping the
 *   samples of objects the GC has since collected: where the event loop allocates.
 *
 * IPC requests are `{ id, op, ... }`, answered with `{ id, ok, result | error }`.
 */
import crypto from 'node:crypto';
import dgram from 'node:dgram';
import { rmSync, writeFileSync } from 'node:fs';
import { Session as InspectorSession } from 'node:inspector';
import os from 'node:os';
import path from 'node:path';
import { constants as perfConstants, monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';
import { loadConfig } from '../../src/config.ts';
import { startEngine, type Engine } from '../../src/main.ts';
import { sharedRtpIoThread } from '../../src/media/rtp-io/thread-io.ts';
import type { AudioFrame } from '../../src/audio/frame.ts';
import type { CallEngine, CallEnv } from '../../src/call/call-env.ts';
import { isNarrowbandCodec } from '../../src/media/codecs/codecs.ts';
import { readThrough } from '../../src/media/rtp-session-queue.ts';
import { dollarsToMicros } from '../../src/util/money.ts';
import { Histogram } from './stats.ts';
import { installTurnProbe } from './turn-probe.ts';

export interface ChildOptions {
  accounts: number;
  vad: boolean;
  probe: boolean;
  /** Per-turn timestamps of pipeline calls (lib/turn-probe.ts), read with the `turns` op. */
  turns?: boolean;
  /** Hard stop: the child exits on its own after this long whatever happens. */
  lifetimeMs: number;
}

export interface MediaTotals {
  calls: number;
  packetsSent: number;
  packetsReceived: number;
  lost: number;
  lateFrames: number;
  concealedFrames: number;
  droppedFrames: number;
  inboundQueueDropped: number;
  outboundFramesDropped: number;
  outboundSkippedSlots: number;
  outboundMaxLateMs: number;
  jitterBufferDelayMsMean: number;
  /** Calls whose audio packets the native drain takes (RtpSessionStats.inboundNative). */
  inboundNative: number;
}

export interface ChildStats {
  cpuUs: { user: number; system: number };
  hrMs: number;
  rssMiB: number;
  heapUsedMiB: number;
  externalMiB: number;
  eld: ReturnType<Histogram['summary']>;
  sendInterval: ReturnType<Histogram['summary']>;
  media: MediaTotals;
  vad: { runs: number; windows: number; errors: number; streams: number } | undefined;
  /** Garbage-collection pauses of the event-loop thread since the last reset (perf_hooks 'gc' entries). */
  gc: { scavenges: number; scavengeMs: ReturnType<Histogram['summary']>; majors: number; majorMs: ReturnType<Histogram['summary']> };
}

const opts = JSON.parse(process.argv[2] ?? '{}') as ChildOptions;
if (!process.send) throw new Error('engine-child must be spawned with an IPC channel');
const send = process.send.bind(process);

// Never outlive the parent or the run. A parent killed outright cannot clean up: the child removes
// its own throw-away data directory (only one engine-proc.ts made) on the way out.
process.on('disconnect', () => {
  const dir = process.env['SWITCHBOARD_DATA_DIR'];
  if (dir && path.basename(dir).startsWith('switchboard-bench-') && path.dirname(dir) === os.tmpdir()) {
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit(0);
});
setTimeout(() => process.exit(3), opts.lifetimeMs).unref();

const ELD_RESOLUTION_MS = 5;
const eld = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
const sendInterval = new Histogram(1000, 0.01);
// Every GC pause of this thread, split into scavenges (young generation) and the rest
// (mark-compact, incremental marking steps): the pauses behind the ELD and send-interval tails.
const gcMinor = new Histogram(1000, 0.01);
const gcMajor = new Histogram(1000, 0.01);
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = ((e as { detail?: { kind?: number } }).detail)?.kind;
    (kind === perfConstants.NODE_PERFORMANCE_GC_MINOR ? gcMinor : gcMajor).record(e.duration);
  }
}).observe({ entryTypes: ['gc'] });

const config = loadConfig();
/** The RTP I/O thread's probe, when RTP is sent from there (started with its first socket). */
const threadProbe = opts.probe && config.rtp.thread ? sharedRtpIoThread().sendProbe : undefined;
if (threadProbe) await threadProbe.start({ bytes: 172, payloadType: 0, ticksPerStep: 160, stepMs: 20 });
else if (opts.probe) installSendProbe(config.rtp.portMin, config.rtp.portMax);
// Before startEngine: the openai client picks up globalThis.fetch when it is constructed.
const turnProbe = opts.turns ? installTurnProbe(config.rtp.portMin, config.rtp.portMax) : undefined;

let vadStats: (() => { runs: number; windows: number }) | undefined;
let vadErrors = 0;
let vadStreams = 0;

const engine: Engine = await startEngine(config);
eld.enable();
// The engine's own model, shared by its calls (replaced below by the stand-in's with `vad`).
// (a SileroVad, typed as the factory calls see).
const engineVad = engine.calls.engineContext.vad as { stats?: { runs: number; windows: number } };
// The callers' VAD runs in the denoiser's worker where it can (src/audio/denoise-worker-vad.ts):
// its runs and windows count with the engine's own.
const engineDenoiser = engine.calls.engineContext.denoiser as { stats?: { vad?: { runs: number; windows: number } } } | undefined;
if (engineVad.stats) {
  vadStats = () => {
    const own = engineVad.stats!;
    const inWorker = engineDenoiser?.stats?.vad;
    return inWorker ? { runs: own.runs + inWorker.runs, windows: own.windows + inWorker.windows } : own;
  };
}
turnProbe?.attach(engine.sip.env as CallEnv);

const accounts: Array<{ id: number; key: string }> = [];
for (let i = 0; i < opts.accounts; i++) {
  const repos = engine.ctx.repos;
  const account = await repos.accounts.create(`bench ${i + 1}`);
  repos.ledger.adjust(account.id, dollarsToMicros(1000), 'bench top-up');
  accounts.push({ id: account.id, key: await repos.accounts.createKey(account.id) });
}

if (opts.vad) {
  const { SileroVad } = await import('../../src/audio/vad/silero.ts');
  const vad = await SileroVad.load();
  vadStats = () => vad.stats;
  // Warm-up so the first calls do not pay onnxruntime's lazy initialisation.
  const silence: AudioFrame = { samples: new Int16Array(320), sampleRate: 16_000 };
  for (const narrowband of [false, true]) {
    const warm = vad.createStream({ narrowband });
    for (let i = 0; i < 50; i++) await warm.push(silence);
  }
  const vadEcho: CallEngine = (session) =>
    new Promise<void>((resolve) => {
      // As the cascade does (isNarrowbandCodec): G.711 calls run Silero at 8 kHz.
      const stream = vad.createStream({ narrowband: isNarrowbandCodec(session.outbound.codec) });
      vadStreams++;
      const delay: AudioFrame[] = [];
      let over = false;
      const done = () => {
        if (over) return;
        over = true;
        pipe.stop();
        vadStreams--;
        resolve();
      };
      const heard = () => pipe.resume();
      const failed = () => {
        vadErrors++;
        pipe.resume();
      };
      // As the cascade's listener reads (src/call/cascade/listener.ts): one frame at a time, the
      // pipe paused until the VAD has answered for it.
      const pipe = readThrough(session.inbound, {
        item: (frame) => {
          if (session.state !== 'active') return done();
          pipe.pause();
          delay.push(frame);
          if (delay.length > 10) session.outbound.write(delay.shift()!);
          stream.pushThen(frame, heard, failed);
        },
        end: done,
      });
      pipe.resume();
    });
  // The seam the session issue plugs the AI pipeline into (inbound-calls.ts reads it per call).
  (engine.sip.env as CallEnv).engine = vadEcho;
}

send({ type: 'ready', httpUrl: engine.httpUrl, sipPort: engine.sip.port, pid: process.pid, accounts });

process.on('message', (raw) => {
  const msg = raw as { id: number; op: string; [k: string]: unknown };
  void handle(msg).then(
    (result) => send({ id: msg.id, ok: true, result }),
    (err: unknown) => send({ id: msg.id, ok: false, error: (err as Error).message }),
  );
});

async function handle(msg: { op: string; [k: string]: unknown }): Promise<unknown> {
  switch (msg.op) {
    case 'reset':
      eld.reset();
      sendInterval.reset();
      await threadProbe?.reset();
      gcMinor.reset();
      gcMajor.reset();
      return null;
    case 'stats':
      return stats(threadProbe ? ((await threadProbe.read()) ?? sendInterval.summary()) : sendInterval.summary());
    case 'turns':
      if (!turnProbe) throw new Error('engine started without the turn probe');
      return turnProbe.drain();
    case 'memory': {
      // Full GC first (node --expose-gc), so heapUsed counts live objects only.
      (globalThis as { gc?: () => void }).gc?.();
      const m = process.memoryUsage();
      return { rssMiB: m.rss / 2 ** 20, heapUsedMiB: m.heapUsed / 2 ** 20, externalMiB: (m.external + m.arrayBuffers) / 2 ** 20 };
    }
    case 'heapSampleStart':
      await inspectorPost('HeapProfiler.enable');
      // Objects already collected count too: the point is what the event loop allocates, not what stays.
      await inspectorPost('HeapProfiler.startSampling', { samplingInterval: Number(msg['interval'] ?? 8192), includeObjectsCollectedByMinorGC: true, includeObjectsCollectedByMajorGC: true });
      return null;
    case 'heapSampleStop': {
      const { profile } = (await inspectorPost('HeapProfiler.stopSampling')) as { profile: unknown };
      writeFileSync(String(msg['file']), JSON.stringify(profile));
      return null;
    }
    case 'assistant':
      return addAssistant(Number(msg['accountId']), Number(msg['phoneNumberId']));
    case 'close':
      await engine.close(0);
      setImmediate(() => process.exit(0));
      return null;
    default:
      throw new Error(`unknown op ${msg.op}`);
  }
}

let inspector: InspectorSession | undefined;
/** The engine's own inspector (sampling heap profile for `calls.ts --heap-prof`). */
function inspectorPost(method: string, params?: object): Promise<unknown> {
  if (!inspector) {
    inspector = new InspectorSession();
    inspector.connect();
  }
  const session = inspector;
  return new Promise((resolve, reject) => session.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result))));
}

function stats(sendIntervalSummary: ChildStats['sendInterval']): ChildStats {
  const mem = process.memoryUsage();
  // monitorEventLoopDelay records the whole interval between its timer's runs (so an idle loop
  // reads about the resolution); the delay is what exceeds the resolution. Nanoseconds → ms.
  const delay = (ns: number) => Math.max(0, ns / 1e6 - ELD_RESOLUTION_MS);
  const eldSummary = {
    count: eld.count,
    p50: delay(eld.percentile(50)),
    p90: delay(eld.percentile(90)),
    p99: delay(eld.percentile(99)),
    p999: delay(eld.percentile(99.9)),
    max: delay(eld.max),
    mean: delay(eld.mean),
  };
  const v = vadStats?.();
  return {
    cpuUs: process.cpuUsage(),
    hrMs: performance.now(),
    rssMiB: mem.rss / 2 ** 20,
    heapUsedMiB: mem.heapUsed / 2 ** 20,
    externalMiB: (mem.external + mem.arrayBuffers) / 2 ** 20,
    eld: eldSummary,
    sendInterval: sendIntervalSummary,
    media: mediaTotals(),
    vad: v ? { ...v, errors: vadErrors, streams: vadStreams } : undefined,
    gc: { scavenges: gcMinor.count, scavengeMs: gcMinor.summary(), majors: gcMajor.count, majorMs: gcMajor.summary() },
  };
}

function mediaTotals(): MediaTotals {
  const t: MediaTotals = {
    calls: 0,
    packetsSent: 0,
    packetsReceived: 0,
    lost: 0,
    lateFrames: 0,
    concealedFrames: 0,
    droppedFrames: 0,
    inboundQueueDropped: 0,
    outboundFramesDropped: 0,
    outboundSkippedSlots: 0,
    outboundMaxLateMs: 0,
    jitterBufferDelayMsMean: 0,
    inboundNative: 0,
  };
  let jb = 0;
  for (const session of engine.sip.registry.list()) {
    if (session.state !== 'active') continue;
    const s = session.stats();
    t.calls++;
    t.packetsSent += s.packetsSent;
    t.packetsReceived += s.packetsReceived;
    t.lost += s.lost;
    t.lateFrames += s.lateFrames;
    t.concealedFrames += s.concealedFrames;
    t.droppedFrames += s.droppedFrames;
    t.inboundQueueDropped += s.inboundQueueDropped;
    t.outboundFramesDropped += s.outboundFramesDropped;
    t.outboundSkippedSlots += s.outboundSkippedSlots;
    t.outboundMaxLateMs = Math.max(t.outboundMaxLateMs, s.outboundMaxLateMs);
    jb += s.jitterBufferDelayMs;
    if (s.inboundNative) t.inboundNative++;
  }
  t.jitterBufferDelayMsMean = t.calls ? jb / t.calls : 0;
  return t;
}

async function addAssistant(accountId: number, phoneNumberId: number): Promise<number> {
  const now = Date.now();
  const row = await engine.ctx.store.db
    .insertInto('assistants')
    .values({
      uuid: crypto.randomUUID(),
      account_id: accountId,
      name: 'bench vad echo',
      type: 'inbound',
      mode: 'pipeline',
      status: 'inactive',
      phone_number_id: phoneNumberId,
      folder_id: null,
      inbound_webhook_enabled: 0,
      config: JSON.stringify({ max_duration: 600 }),
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * Times every PCMU packet the engine hands to a socket of the RTP range: the interval to the
 * previous packet of the same socket against 20 ms × the RTP timestamp step (so a skipped slot
 * is not counted as jitter). Only 172-byte datagrams with version 2 and payload type 0 count.
 */
function installSendProbe(portMin: number, portMax: number): void {
  const proto = dgram.Socket.prototype as unknown as { send: (...args: unknown[]) => void };
  const original = proto.send;
  const last = new WeakMap<object, { t: number; ts: number } | null>();
  proto.send = function (this: dgram.Socket, ...args: unknown[]) {
    const buf = args[0];
    if (buf instanceof Uint8Array && buf.length === 172 && buf[0] === 0x80 && (buf[1]! & 0x7f) === 0) {
      let state = last.get(this);
      if (state === undefined) {
        let port = 0;
        try {
          port = this.address().port;
        } catch {
          // not bound
        }
        state = port >= portMin && port <= portMax ? { t: -1, ts: 0 } : null;
        last.set(this, state);
      }
      if (state) {
        const now = performance.now();
        const ts = ((buf[4]! << 24) | (buf[5]! << 16) | (buf[6]! << 8) | buf[7]!) >>> 0;
        if (state.t >= 0) {
          const steps = ((ts - state.ts) >>> 0) / 160;
          if (steps >= 1 && steps < 50) sendInterval.record(Math.abs(now - state.t - steps * 20));
        }
        state.t = now;
        state.ts = ts;
      }
    }
    return original.apply(this, args);
  };
}
