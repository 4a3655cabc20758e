/**
 * Realtime calls (multimodal): engine-added latency from the model's first audio delta
 * to the first RTP packet of it, and CPU per call, in μ-law pass-through and in 24 kHz PCM mode.
 *
 * This process is the engine: per call a real RtpSession (UDP on 127.0.0.1, PCMU 20 ms, the
 * shared media clock) and `runRealtime` (src/call/realtime) with the OpenAI realtime provider
 * over a WebSocket. The model and the callers are in a child process (realtime-model.ts: the
 * realtime stand-in with tone audio, and one raw PCMU phone per call that says a short burst
 * every cycle, which the stand-in's server VAD answers), so their CPU is not counted here. SIP
 * signalling is left out: it costs once per call, not per second of it (see `setup`).
 *
 * Latency, measured inside this process: from the moment the `ws` socket emits the first
 * `response.output_audio.delta` message of a response (before the provider has parsed it) to
 * the `socket.send` of the call's first audible RTP packet after it (a probe on
 * `WebSocket.prototype.emit` and `dgram.Socket.prototype.send`, as engine-child.ts does for
 * send timing). In pass-through the first packet of a talkspurt leaves at once (see
 * rtp-session-outbound.ts); in PCM mode it waits for its 20 ms slot, which is most of the figure.
 *
 * CPU: `process.cpuUsage()` of this process over the window ÷ (calls × window): % of one core
 * per call. It includes the probes (a Map lookup and a clock read per message and per packet).
 *
 * The PCM mode is the same call with a provider that does not offer μ-law (`audioFormatFor`
 * falls back to 24 kHz PCM): caller frames decoded, resampled 16 → 24 kHz and base64'd; model
 * audio resampled 24 → 16 kHz, then encoded to μ-law per packet.
 *
 * "waiting %" is the share of the window this process's event-loop thread was runnable but had
 * no CPU (schedstat): other work on the machine. Latency and packet rates are only meaningful
 * where it is small.
 *
 *   node --import tsx bench/realtime.ts [--levels 1,50] [--modes pcmu,pcm] [--window 40]
 *       [--warmup 6] [--cycle 1500] [--quiet-wait S] [--json FILE]
 */
import { fork, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { runRealtime, type RealtimeAssistant } from '../src/call/realtime/index.ts';
import type { CallMedia } from '../src/call/engine.ts';
import { pcmu } from '../src/media/codecs/pcmu.ts';
import { PortPool } from '../src/media/port-pool.ts';
import { RtpSession } from '../src/media/rtp-session.ts';
import type { NegotiatedMedia } from '../src/media/sdp-negotiate.ts';
import { OpenAiRealtime } from '../src/providers/realtime/openai-realtime.ts';
import type { RealtimeProvider } from '../src/providers/realtime/realtime.ts';
import { systemClock } from '../src/util/clock.ts';
import { list, num, parseArgs, sleep, watchdog } from './lib/cli.ts';
import { loadavg, machineInfo, threadSchedMs, waitForQuiet } from './lib/machine.ts';
import { fmt, Histogram, type HistSummary } from './lib/stats.ts';
import type { ModelChildOptions } from './realtime-model.ts';

type Mode = 'pcmu' | 'pcm';

const args = parseArgs(process.argv.slice(2));
const levels = list(args, 'levels', [1, 50], 200);
const modes = (args.get('modes') ?? 'pcmu,pcm').split(',') as Mode[];
if (modes.some((m) => m !== 'pcmu' && m !== 'pcm')) throw new Error('--modes takes pcmu and/or pcm');
const windowS = num(args, 'window', 40, 5, 600);
const warmupS = num(args, 'warmup', 6, 1, 60);
const cycleMs = num(args, 'cycle', 1500, 600, 20_000);
const portBase = num(args, 'port-base', 36_000, 1024, 60_000);
const jsonOut = args.get('json');
const quietWaitS = num(args, 'quiet-wait', 0, 0, 600);
watchdog((modes.length * levels.length * (windowS + warmupS + 30) + 60) * 1000, 'bench/realtime');

const HOST = '127.0.0.1';
const ASSISTANT: RealtimeAssistant = {
  id: 1,
  accountId: 1,
  mode: 'multimodal',
  config: { system_prompt: 'You are the front desk of a restaurant.', initial_message: 'Hello, how can I help?', max_duration: 3600 },
};

// ---- the far side (child process) ----

const childOpts: ModelChildOptions = { cycleMs, burstMs: 300, answer: 'Sure, one moment.', deltaIntervalMs: 20, lifetimeMs: 1_200_000 };
const child: ChildProcess = fork(fileURLToPath(new URL('./realtime-model.ts', import.meta.url)), [JSON.stringify(childOpts)], {
  execArgv: ['--import', 'tsx'],
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
process.on('exit', () => child.kill('SIGKILL'));
const pending = new Map<number, (m: { ok: boolean; result?: unknown; error?: string }) => void>();
let reqId = 0;
child.on('message', (raw) => {
  const m = raw as { id: number; ok: boolean; result?: unknown; error?: string };
  pending.get(m.id)?.(m);
  pending.delete(m.id);
});
function request<T>(op: string, body: Record<string, unknown> = {}): Promise<T> {
  const id = ++reqId;
  return new Promise<T>((resolve, reject) => {
    pending.set(id, (m) => (m.ok ? resolve(m.result as T) : reject(new Error(m.error))));
    child.send({ id, op, ...body });
  });
}
const model = await new Promise<{ baseUrl: string; apiKey: string }>((resolve) => pending.set(0, (m) => resolve(m.result as { baseUrl: string; apiKey: string })));

// ---- latency probes ----

interface Probe {
  /** A response was created; its first audio delta starts the clock. */
  armed: boolean;
  /** performance.now() of that delta, until the first audible packet. */
  deltaAt: number | undefined;
}
const latency = new Histogram(1000, 0.01);
const wsCall = new WeakMap<object, Probe>();
const byPhonePort = new Map<number, Probe>();
let connecting: Probe | undefined;

type Fn = (...a: unknown[]) => unknown;
const proto = WebSocket.prototype as unknown as { on: Fn; emit: Fn };
const wsOn = proto.on;
proto.on = function (this: object, event: unknown, ...rest: unknown[]) {
  // The provider registers its message listener synchronously inside connect().
  if (event === 'message' && connecting) wsCall.set(this, connecting);
  return wsOn.call(this, event, ...rest);
};
const wsEmit = proto.emit;
proto.emit = function (this: object, event: unknown, ...rest: unknown[]) {
  if (event === 'message') {
    const probe = wsCall.get(this);
    const data = rest[0];
    if (probe && Buffer.isBuffer(data)) {
      // The stand-in writes event_id then type: the type is within the first 100 bytes.
      const head = data.subarray(0, 100).toString('latin1');
      if (head.includes('"response.created"')) {
        probe.armed = true;
        probe.deltaAt = undefined;
      } else if (probe.armed && head.includes('output_audio.delta')) {
        probe.armed = false;
        probe.deltaAt = performance.now();
      }
    }
  }
  return wsEmit.call(this, event, ...rest);
};
const udpSend = dgram.Socket.prototype.send as unknown as Fn;
(dgram.Socket.prototype as unknown as { send: Fn }).send = function (this: dgram.Socket, msg: unknown, ...rest: unknown[]) {
  const probe = typeof rest[0] === 'number' ? byPhonePort.get(rest[0]) : undefined;
  if (probe?.deltaAt !== undefined && msg instanceof Uint8Array && msg.length > 12 && (msg[1]! & 0x7f) === 0) {
    // Audible: anything but μ-law silence (0xFF) in the payload.
    for (let i = 12; i < msg.length; i++) {
      if (msg[i] !== 0xff) {
        latency.record(performance.now() - probe.deltaAt);
        probe.deltaAt = undefined;
        break;
      }
    }
  }
  return udpSend.call(this, msg, ...rest);
};

// ---- calls ----

const pool = new PortPool({ host: HOST, minPort: portBase, maxPort: portBase + 999 });
const inner = new OpenAiRealtime({ pingIntervalMs: 0, connectTimeoutMs: 10_000 });

function providerFor(mode: Mode, probe: Probe): RealtimeProvider {
  return {
    label: inner.label,
    // Without μ-law on offer the engine runs the call on 24 kHz PCM.
    capabilities: mode === 'pcmu' ? inner.capabilities : { ...inner.capabilities, audioFormats: ['pcm24k'] },
    connect(opts) {
      connecting = probe;
      try {
        return inner.connect(opts);
      } finally {
        connecting = undefined;
      }
    },
  };
}

function negotiated(port: number): NegotiatedMedia {
  return {
    remote: { address: HOST, port, rtcpPort: port + 1 },
    codec: pcmu,
    payloadType: 0,
    receiveCodecs: new Map([[0, pcmu]]),
    dtmfPayloadType: 101,
    dtmfClockRate: 8000,
    ptimeMs: 20,
    direction: 'sendrecv',
    remoteHold: false,
    mediaIndex: 0,
  };
}

interface Call {
  session: RtpSession;
  stop(): Promise<void>;
  format(): string | undefined;
}

let nextCall = 0;
async function startCall(mode: Mode, of: number): Promise<Call> {
  const id = ++nextCall;
  const session = new RtpSession({ pool, host: HOST, publicAddress: HOST, rtpTimeoutMs: 0 });
  const local = await session.allocate();
  const { port } = await request<{ port: number }>('phone', { call: id, port: local.rtpPort, of });
  session.start(negotiated(port));
  const probe: Probe = { armed: false, deltaAt: undefined };
  byPhonePort.set(port, probe);
  const media: CallMedia = {
    inbound: session.inbound,
    outbound: session.outbound,
    sendDtmf: (d) => session.sendDtmf(d),
    on: (e, fn) => session.on(e, fn),
    off: (e, fn) => session.off(e, fn),
    close: () => session.close(),
  };
  const ctl = new AbortController();
  let format: string | undefined;
  const provider = providerFor(mode, probe);
  const run = runRealtime(
    media,
    {
      clock: systemClock,
      provider: {
        ...provider,
        connect: async (opts) => {
          format = opts.session.inputFormat;
          return provider.connect(opts);
        },
      },
      model: 'gpt-realtime',
      apiKey: model.apiKey,
      baseUrl: model.baseUrl,
      modelVoice: 'marin',
    },
    ASSISTANT,
    undefined,
    ctl.signal,
  ).catch((err: unknown) => console.error(`call ${id}: ${(err as Error).message}`));
  return {
    session,
    format: () => format,
    async stop() {
      ctl.abort(new Error('bench over'));
      await session.close();
      await run;
      byPhonePort.delete(port);
      await request('hangup', { call: id });
    },
  };
}

interface Phase {
  mode: Mode;
  calls: number;
  format: string | undefined;
  windowS: number;
  latencyMs: HistSummary;
  cpuPctOfCorePerCall: number;
  processCpuPct: number;
  eventLoopDelayP99Ms: number;
  /** Share of the window the event-loop thread was runnable but had no CPU (other processes). */
  mainThreadWaitingPct: number;
  packetsSentPerCallPerS: number;
  modelResponses: number;
  modelErrors: number;
  loadavgBefore: [number, number, number];
  loadavgAfter: [number, number, number];
}

async function phase(mode: Mode, n: number): Promise<Phase> {
  const loadBefore = loadavg();
  const calls: Call[] = [];
  for (let i = 0; i < n; i++) {
    calls.push(await startCall(mode, n));
    if (i % 10 === 9) await sleep(100);
  }
  await sleep(warmupS * 1000);
  latency.reset();
  const eld = monitorEventLoopDelay({ resolution: 5 });
  eld.enable();
  const before = await request<{ responses: number; errors: number }>('stats');
  const sent0 = calls.reduce((s, c) => s + c.session.stats().packetsSent, 0);
  const cpu0 = process.cpuUsage();
  const sched0 = threadSchedMs(process.pid);
  const t0 = performance.now();
  await sleep(windowS * 1000);
  const cpu = process.cpuUsage(cpu0);
  const wallMs = performance.now() - t0;
  const sched1 = threadSchedMs(process.pid);
  const sent1 = calls.reduce((s, c) => s + c.session.stats().packetsSent, 0);
  eld.disable();
  const after = await request<{ responses: number; errors: number }>('stats');
  const lat = latency.summary();
  const format = calls[0]?.format();
  await Promise.all(calls.map((c) => c.stop()));
  const cpuMs = (cpu.user + cpu.system) / 1000;
  return {
    mode,
    calls: n,
    format,
    windowS: Math.round(wallMs / 100) / 10,
    latencyMs: lat,
    cpuPctOfCorePerCall: (cpuMs / wallMs / n) * 100,
    processCpuPct: (cpuMs / wallMs) * 100,
    eventLoopDelayP99Ms: Math.max(0, eld.percentile(99) / 1e6 - 5),
    mainThreadWaitingPct: sched0 && sched1 ? ((sched1.waitMs - sched0.waitMs) / wallMs) * 100 : NaN,
    packetsSentPerCallPerS: (sent1 - sent0) / n / (wallMs / 1000),
    modelResponses: after.responses - before.responses,
    modelErrors: after.errors - before.errors,
    loadavgBefore: loadBefore,
    loadavgAfter: loadavg(),
  };
}

if (quietWaitS > 0) console.log(`machine ${fmt(await waitForQuiet(quietWaitS), 0)} % busy before the run`);
const machine = machineInfo();
console.log(`bench/realtime: ${machine.cpuModel}, ${machine.cores} cores, ${machine.node}, load ${machine.loadavg.join(' ')}`);
console.log('mode   calls  format  latency n   p50 ms  p90 ms  p99 ms  max ms   %core/call  ELD p99  waiting %  pkts/s/call  load before → after');
const results: Phase[] = [];
for (const n of levels) {
  for (const mode of modes) {
    const r = await phase(mode, n);
    results.push(r);
    const l = r.latencyMs;
    console.log(
      `${mode.padEnd(6)} ${String(n).padStart(5)}  ${String(r.format).padEnd(6)}  ${String(l.count).padStart(9)}  ${fmt(l.p50).padStart(6)}  ${fmt(l.p90).padStart(6)}  ${fmt(l.p99).padStart(6)}  ${fmt(l.max).padStart(6)}   ${fmt(r.cpuPctOfCorePerCall, 3).padStart(10)}  ${fmt(r.eventLoopDelayP99Ms, 1).padStart(7)}  ${fmt(r.mainThreadWaitingPct, 1).padStart(9)}  ${fmt(r.packetsSentPerCallPerS, 1).padStart(11)}  ${r.loadavgBefore.join(' ')} → ${r.loadavgAfter.join(' ')}`,
    );
    await sleep(1000);
  }
}
const out = { bench: 'realtime', machine, options: { levels, modes, windowS, warmupS, cycleMs, answer: childOpts.answer }, results };
if (jsonOut) writeFileSync(jsonOut, JSON.stringify(out, null, 2));
child.kill('SIGTERM');
process.exit(0);
