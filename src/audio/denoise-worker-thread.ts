/**
 * Inside the denoiser worker thread (started by ./denoise-worker.ts through
 * ./denoise-worker-entry.mjs): every call's denoiser state, keyed by the stream id the parent
 * gave it, and the loop that runs one batch per message. The same backend classes as in-thread
 * (./denoise-spectral.ts, ./denoise.ts) do the work, so the output is the same, sample for sample.
 *
 * Protocol (one batch at a time):
 *   {type: 'init', backend, spectral?}   -> {type: 'ready', name, delayMs, narrowbandDelayMs}
 *                                           | {type: 'error', message}
 *   {type: 'run', id, count, closes, sab?} -> {type: 'result', id} | {type: 'error', id, message}
 *   {type: 'crash-next', how}             (tests: die while holding the next batch)
 * The slab (`sab`, sent when it changes) is described in ./denoise-worker.ts: a header of
 * [stream id, samples, status, flags] per frame, then the frames' samples back to back. Each
 * frame is denoised in place; status 0 = done, 1 = failed (the parent falls back for that frame
 * only). A stream id seen for the first time gets fresh state, in the mode its flags give
 * (FLAG_NARROWBAND); the flags also give the rate of its samples in the slab (16 kHz, narrowband
 * 8 kHz), which the frame handed to the backend's stream carries, as the in-thread caller's
 * would. `closes` lists ids whose state is freed after the batch's frames are done.
 */
import { parentPort } from 'node:worker_threads';
import { SAMPLE_RATE } from './frame.ts';
import { NARROWBAND_RATE, SpectralDenoiser, type SpectralDenoiserOptions } from './denoise-spectral.ts';
import { Denoiser, type DenoiserBackend, type DenoiserBackendName, type DenoiserStream } from './denoise.ts';
import { FLAG_NARROWBAND, HEADER_INTS, Slab, STATUS_FAILED, STATUS_OK } from './denoise-slab.ts';
import { nameThisThread, niceThisThread } from '../util/thread-priority.mjs';

export type ToWorker =
  | { type: 'init'; backend: DenoiserBackendName; spectral?: SpectralDenoiserOptions }
  | { type: 'run'; id: number; count: number; closes: number[]; sab?: SharedArrayBuffer; entries?: number; samples?: number }
  | { type: 'crash-next'; how: 'exit' | 'throw' };

export type FromWorker =
  | { type: 'ready'; name: DenoiserBackendName; delayMs: number; narrowbandDelayMs: number }
  | { type: 'result'; id: number }
  | { type: 'error'; id?: number; message: string };

const port = parentPort;
if (!port) throw new Error('denoise-worker-thread.ts runs inside a worker thread');
// Behind the event loop that paces every call's packets (../util/thread-priority.mjs).
niceThisThread();
nameThisThread('sb-denoise');

let backend: DenoiserBackend | undefined;
const streams = new Map<number, DenoiserStream>();
let slab: Slab | undefined;
let crashNext: 'exit' | 'throw' | undefined;

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));
const post = (m: FromWorker): void => port.postMessage(m);

async function init(m: Extract<ToWorker, { type: 'init' }>): Promise<void> {
  try {
    backend = m.backend === 'rnnoise' ? await Denoiser.load() : await SpectralDenoiser.load(m.spectral);
    post({ type: 'ready', name: backend.name, delayMs: backend.delayMs, narrowbandDelayMs: backend.delayMsFor({ narrowband: true }) });
  } catch (e) {
    post({ type: 'error', message: message(e) });
  }
}

function run(m: Extract<ToWorker, { type: 'run' }>): void {
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
  let at = 0;
  for (let i = 0; i < m.count; i++) {
    const h = i * HEADER_INTS;
    const id = header[h]!;
    const length = header[h + 1]!;
    const flags = header[h + 3]!;
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
      header[h + 2] = STATUS_OK;
    } catch {
      header[h + 2] = STATUS_FAILED;
    }
  }
  for (const id of m.closes) {
    streams.get(id)?.close();
    streams.delete(id);
  }
  post({ type: 'result', id: m.id });
}

port.on('message', (m: ToWorker) => {
  if (m.type === 'init') void init(m);
  else if (m.type === 'run') run(m);
  else if (m.type === 'crash-next') crashNext = m.how;
});
