/**
 * What the tracing hooks cost a call when tracing is off (no OTEL_EXPORTER_OTLP_ENDPOINT, the
 * default), against the same work with no hooks at all; and, for scale, what they cost with
 * tracing on (a real SDK tracer, batch processor and AsyncLocalStorage context; spans counted and
 * dropped instead of exported).
 *
 * One "call" runs every hook a pipeline call with three turns, a tool call and a webhook runs
 * through, with the work behind each hook reduced to a resolved promise so that the hooks are
 * all that is measured: the call span and call-trace lookups, twelve timeline events, three
 * turns run through `inTurn`, six outgoing HTTP requests (`injectTraceHeaders` on their headers),
 * two WebSocket handshakes (`traceHeaders`), a fallback fetch (`withTraceHeaders`), one tool call
 * and one webhook delivery. Provider decorators are not in the loop: with tracing off they
 * return the provider itself (src/telemetry/provider-spans.ts), so they cost nothing per call.
 *
 *   node --import tsx bench/tracing-overhead.ts [--calls 20000] [--rounds 7] [--json FILE]
 */
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { context, propagation, trace } from '@opentelemetry/api';
import type { TimelineEvent } from '../src/call/cascade/timeline.ts';
import { currentCallTrace, startCallTrace, type TurnTracer } from '../src/telemetry/call-trace.ts';
import { AsyncLocalContextManager } from '../src/telemetry/context-manager.ts';
import { injectTraceHeaders, setTracer, traceHeaders, withTraceHeaders } from '../src/telemetry/spans.ts';
import { traceTool, traceWebhook } from '../src/telemetry/tools.ts';
import { machineInfo } from './lib/machine.ts';
import { num, parseArgs } from './lib/cli.ts';

const args = parseArgs(process.argv.slice(2));
const calls = num(args, 'calls', 20_000, 100, 1_000_000);
const rounds = num(args, 'rounds', 7, 1, 50);

const EVENTS: TimelineEvent[] = [
  { type: 'answer', atMs: 0 },
  { type: 'turn-start', atMs: 1, turn: 1, kind: 'greeting' },
  { type: 'assistant-audio-start', atMs: 300, turn: 1, kind: 'greeting' },
  { type: 'assistant-audio-stop', atMs: 2000, turn: 1, kind: 'greeting', interrupted: false },
  { type: 'vad-speech-start', atMs: 2500, detectedAtMs: 2600 },
  { type: 'vad-speech-end', atMs: 4000, detectedAtMs: 4100 },
  { type: 'stt-final', atMs: 4150, text: 'hello' },
  { type: 'end-of-turn', atMs: 4300, waitedMs: 300, reason: 'silence' as never, transcript: 'hello', taken: true },
  { type: 'turn-start', atMs: 4300, turn: 2, kind: 'reply' },
  { type: 'assistant-audio-start', atMs: 4900, turn: 2, kind: 'reply' },
  { type: 'assistant-audio-stop', atMs: 7000, turn: 2, kind: 'reply', interrupted: false },
  { type: 'hang-up', atMs: 9000, reason: 'caller-hangup' },
];

const work = (): Promise<void> => Promise.resolve();
const toolRun = (): Promise<Record<string, unknown>> => Promise.resolve({ ok: true });

/** One call through every hook, as the engine's seams call them. */
async function hookedCall(): Promise<void> {
  const t = startCallTrace({ uuid: 'c0ffee', direction: 'inbound', mode: 'pipeline', trunk: '1', assistantId: 1 });
  const body = async (): Promise<void> => {
    const tracer: TurnTracer | undefined = currentCallTrace();
    for (const e of EVENTS) tracer?.event(e);
    for (let turn = 1; turn <= 3; turn++) await (tracer ? tracer.inTurn(turn, work) : work());
    for (let i = 0; i < 6; i++) {
      const headers: Record<string, string> = { 'content-type': 'application/json', authorization: 'Bearer x' };
      injectTraceHeaders(headers);
    }
    traceHeaders();
    traceHeaders();
    withTraceHeaders({ method: 'POST' });
    await traceTool('lookup_order', toolRun);
    await traceWebhook({ outboxId: 1, attempt: 1, url: 'https://hooks.example/x' }, work);
    currentCallTrace()?.end({ endCause: 'remote-hangup' });
  };
  await (t ? t.run(body) : body());
}

/** The same call with no hooks: the work alone. */
async function bareCall(): Promise<void> {
  for (let turn = 1; turn <= 3; turn++) await work();
  for (let i = 0; i < 6; i++) {
    const headers: Record<string, string> = { 'content-type': 'application/json', authorization: 'Bearer x' };
    void headers;
  }
  await toolRun();
  await work();
}

async function nsPerCall(fn: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) {
    await fn();
    // Calls are spread in time: the batch processor's timer gets its turn, as in the engine.
    if (i % 100 === 99) await new Promise((r) => setImmediate(r));
  }
  return ((performance.now() - t0) * 1e6) / calls;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function measure(): Promise<{ bare: number[]; hooked: number[] }> {
  const bare: number[] = [];
  const hooked: number[] = [];
  await nsPerCall(bareCall);
  await nsPerCall(hookedCall);
  for (let r = 0; r < rounds; r++) {
    bare.push(await nsPerCall(bareCall));
    hooked.push(await nsPerCall(hookedCall));
  }
  return { bare, hooked };
}

const off = await measure();

// Tracing on, for scale: the SDK's tracer (every span sampled), its batch processor, and an
// exporter that counts the spans and drops them (the OTLP encoding and the POST are left out).
const sdk = await import('@opentelemetry/sdk-trace-base');
const { W3CTraceContextPropagator } = await import('@opentelemetry/core');
let exported = 0;
const exporter: import('@opentelemetry/sdk-trace-base').SpanExporter = {
  export(spans, done) {
    exported += spans.length;
    done({ code: 0 });
  },
  shutdown: () => Promise.resolve(),
};
const provider = new sdk.BasicTracerProvider({ spanProcessors: [new sdk.BatchSpanProcessor(exporter, { maxQueueSize: 100_000, maxExportBatchSize: 4096, scheduledDelayMillis: 100 })] });
context.setGlobalContextManager(new AsyncLocalContextManager());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
trace.setGlobalTracerProvider(provider);
setTracer(provider.getTracer('bench'));
const on = await measure();
setTracer(undefined);
await provider.shutdown();
const spansPerCall = exported / (calls * (rounds + 1));

const m = machineInfo();
const result = {
  machine: m,
  calls,
  rounds,
  offNsPerCall: { bare: median(off.bare), hooked: median(off.hooked), rounds: off },
  onNsPerCall: { bare: median(on.bare), hooked: median(on.hooked), spansPerCall },
};
const offExtra = median(off.hooked) - median(off.bare);
const onExtra = median(on.hooked) - median(on.bare);
console.log(`tracing-overhead: ${calls} calls × ${rounds} rounds, ${m.cpuModel}, ${m.cores} cores, node ${m.node}, load ${m.loadavg.join(' ')}`);
console.log(`off: bare ${median(off.bare).toFixed(0)} ns/call, with hooks ${median(off.hooked).toFixed(0)} ns/call → hooks ${offExtra.toFixed(0)} ns per call`);
console.log(`on:  bare ${median(on.bare).toFixed(0)} ns/call, with hooks ${median(on.hooked).toFixed(0)} ns/call → hooks ${onExtra.toFixed(0)} ns per call (${spansPerCall.toFixed(1)} spans)`);
if (args.has('json')) writeFileSync(String(args.get('json')), JSON.stringify(result, null, 2));
