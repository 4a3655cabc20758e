/**
 * Inside the denoiser worker thread (started by ./denoise-worker.ts through
 * ./denoise-worker-entry.mjs): every call's denoiser state, keyed by the stream id the parent
 * gave it, and the loop that runs one batch per message. The same backend classes as in-thread
 * (./denoise-spectral.ts, ./denoise.ts) do the work, so the output is the same, sample for sample.
 *
 * Protocol (one batch at a time):
 *   {type: 'init', backend, spectral?, vad?} -> {type: 'ready', name, delayMs, narrowbandDelayMs, vad, vadError?}
 *                                              | {type: 'error', message}
 *   {type: 'run', id, count, closes, sab?}   -> {type: 'result', id, vad?} | {type: 'error', id, message}
 *   {type: 'crash-next', how}                (tests: die while holding the next batch)
 * The slab (`sab`, sent when it changes) is ./denoise-slab.ts: a header per frame, then the
 * frames' samples back to back. Each frame is denoised in place; status 0 = done, 1 = failed (the
 * parent falls back for that frame only). A stream id seen for the first time gets fresh state,
 * in the mode its flags give (FLAG_NARROWBAND); the flags also give the rate of its samples in
 * the slab (16 kHz, narrowband 8 kHz), which the frame handed to the backend's stream carries, as
 * the in-thread caller's would. An ENTRY_SILENT frame has no samples in the slab and is not
 * denoised. With `vad` at init, the worker also runs the VAD of FLAG_VAD streams on their
 * denoised frames (./denoise-worker-vad.ts) and `result` carries its counters; a VAD that fails
 * to load leaves the denoiser working (`ready` says `vad: false` and why). `closes` lists ids
 * whose state is freed after the batch's frames are done.
 */
import { parentPort } from 'node:worker_threads';
import { SAMPLE_RATE } from './frame.ts';
import { NARROWBAND_RATE, SpectralDenoiser, type SpectralDenoiserOptions } from './denoise-spectral.ts';
import { Denoiser, type DenoiserBackend, type DenoiserBackendName, type DenoiserStream } from './denoise.ts';
import { ENTRY_SILENT, FLAG_NARROWBAND, H_COUNT, H_FLAGS, H_ID, H_STATUS, HEADER_INTS, Slab, STATUS_FAILED, STATUS_OK } from './denoise-slab.ts';
import { WorkerVad, type WorkerVadStats } from './denoise-worker-vad.ts';
import { nameThisThread, niceThisThread } from '../util/thread-priority.mjs';

export type ToWorker =
  | { type: 'init'; backend: DenoiserBackendName; spectral?: SpectralDenoiserOptions; vad?: { modelPath?: string } }
  | { type: 'run'; id: number; count: number; closes: number[]; sab?: SharedArrayBuffer; entries?: number; samples?: number }
  | { type: 'crash-next'; how: 'exit' | 'throw' };

export type FromWorker =
  | { type: 'ready'; name: DenoiserBackendName; delayMs: number; narrowbandDelayMs: number; vad: boolean; vadError?: string }
  | { type: 'result'; id: number; vad?: WorkerVadStats }
  | { type: 'error'; id?: number; message: string };

const port = parentPort;
if (!port) throw new Error('denoise-worker-thread.ts runs inside a worker thread');
// Behind the event loop that paces every call's packets (../util/thread-priority.mjs).
niceThisThread();
nameThisThread('sb-denoise');

let backend: DenoiserBackend | undefined;
const streams = new Map<number, DenoiserStream>();
let vad: WorkerVad | undefined;
let slab: Slab | undefined;
/** Where each frame's samples start in the slab (grown with it). */
let offsets = new Int32Array(64);
let crashNext: 'exit' | 'throw' | undefined;

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));
const post = (m: FromWorker): void => port.postMessage(m);

async function init(m: Extract<ToWorker, { type: 'init' }>): Promise<void> {
  try {
    backend = m.backend === 'rnnoise' ? await Denoiser.load() : await SpectralDenoiser.load(m.spectral);
    let vadError: string | undefined;
    if (m.vad) vad = await WorkerVad.load(m.vad.modelPath).catch((e: unknown) => void (vadError = message(e)));
    const ready: FromWorker = { type: 'ready', name: backend.name, delayMs: backend.delayMs, narrowbandDelayMs: backend.delayMsFor({ narrowband: true }), vad: vad !== undefined };
    post(vadError === undefined ? ready : { ...ready, vadError });
  } catch (e) {
    post({ type: 'error', message: message(e) });
  }
}

async function run(m: Extract<ToWorker, { type: 'run' }>): Promise<void> {
  if (m.sab) slab = Slab.attach(m.sab, m.entries!, m.samples!);
  if (!backend || !slab) {
    post({ type: 'error', id: m.id, message: 'denoiser worker is not initialised' });
    return;
  }
  if (crashNext) {
    const how = crashNext;
    crashNext = undefined;
    if (how === 'exit') process.exit(1);
    // Uncaught, as a bug in the maths would be: the thread dies with an 'error' event.
    setImmediate(() => {
      throw new Error('denoiser worker crash (test)');
    });
    return;
  }
  const { header, samples } = slab;
  if (offsets.length < m.count) offsets = new Int32Array(Math.max(m.count, offsets.length * 2));
  let at = 0;
  for (let i = 0; i < m.count; i++) {
    const h = i * HEADER_INTS;
    const id = header[h + H_ID]!;
    const length = header[h + H_COUNT]!;
    const flags = header[h + H_FLAGS]!;
    if (flags & ENTRY_SILENT) {
      header[h + H_STATUS] = STATUS_OK;
      continue;
    }
    offsets[i] = at;
    const view = samples.subarray(at, at + length);
    at += length;
    const narrowband = (flags & FLAG_NARROWBAND) !== 0;
    try {
      let stream = streams.get(id);
      if (!stream) streams.set(id, (stream = backend.createStream({ narrowband })));
      // The parent checked the frame's rate against the stream's; the samples carry no rate of
      // their own here. In place where the stream can (the spectral one): no frame allocated.
      if (stream.processInPlace) stream.processInPlace(view);
      else view.set(stream.process({ samples: view, sampleRate: narrowband ? NARROWBAND_RATE : SAMPLE_RATE }).samples);
      header[h + H_STATUS] = STATUS_OK;
    } catch {
      header[h + H_STATUS] = STATUS_FAILED;
    }
  }
  if (vad) {
    const running = vad.run(slab, m.count, offsets);
    if (running) await running;
  }
  for (const id of m.closes) {
    streams.get(id)?.close();
    streams.delete(id);
    vad?.close(id);
  }
  post(vad ? { type: 'result', id: m.id, vad: vad.stats } : { type: 'result', id: m.id });
}

port.on('message', (m: ToWorker) => {
  if (m.type === 'init') void init(m);
  else if (m.type === 'run') {
    run(m).catch((e: unknown) => post({ type: 'error', id: m.id, message: message(e) }));
  }
  else if (m.type === 'crash-next') crashNext = m.how;
});
