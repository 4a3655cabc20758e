// The Silero VAD inference thread (see silero-backend.ts). Plain JavaScript on purpose: a worker
// is started by Node itself, outside tsx or vitest's transform, so it must not need one.
//
// Protocol:
//   workerData {modelPath, intraOpNumThreads, ctl, slab: {sab, capacity, gen}}
//     -> message {type: 'ready', inputNames} | {type: 'error', message} (and the thread ends)
//   then everything goes through the Int32 control block `ctl` (layout and meaning: CTL in
//   silero-backend.ts). The thread sleeps in Atomics.wait on SIGNAL; per batch the parent sets
//   WIDE, NARROW, GEN and REQ = id and signals; this thread runs it, stores STATUS (and the error
//   text), stores DONE = id and notifies DONE. FLAG asks it to stop (after the batch in hand) or
//   to crash (end with code 1 instead of finishing the batch in hand, or the next one if idle).
//   message {type: 'slab', sab, capacity, gen}: a grown slab, posted before the first batch in
//   it and read synchronously (receiveMessageOnPort) when that batch comes.
// The slab holds [input capacity×576][state capacity×256][probability capacity][next state
// capacity×256] float32s; the parent fills the first two, this thread writes the last two. A
// batch is WIDE 16 kHz windows then NARROW 8 kHz ones, one ONNX run per rate present (`sr` is
// one scalar per run), the second run's rows packed right after the first's in every region
// (BatchBuffers in silero-backend.ts).
// onnxruntime-node refuses tensors on shared memory, so the inputs are copied out first, into
// buffers (and tensors) reused from batch to batch.
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';
import { nameThisThread, niceThisThread } from '../../util/thread-priority.mjs';

// Silero v5's two rates (WIDEBAND and NARROWBAND in silero-backend.ts): row sizes and `sr`.
const WIDE_INPUT = 576;
const NARROW_INPUT = 288;
const STATE_UNITS = 128;
const STATE_PER_WINDOW = 2 * STATE_UNITS;
const SIGNAL = 0, REQ = 1, WIDE = 2, NARROW = 3, GEN = 4, FLAG = 5, DONE = 6, STATUS = 7, ERR_LEN = 8, ERR = 9, WORDS = 256;
const STOP = 1, CRASH = 2;

const message = (e) => (e instanceof Error ? e.message : String(e));

const ctl = new Int32Array(workerData.ctl);
let slab = workerData.slab;
/** Generation of the slab `shared` and `perRun` were built for (0: none yet). */
let preparedGen = 0;
/** The slab's four regions. */
let shared;
/** Per rate, per run size: the tensors over this thread's input copies. */
let perRun;
let input = new Float32Array(0);
let state = new Float32Array(0);
/** Per rate: its row size and `sr` tensor. */
let rates;

/** @type {ort.InferenceSession} */
let session;
try {
  session = await ort.InferenceSession.create(workerData.modelPath, {
    intraOpNumThreads: workerData.intraOpNumThreads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
} catch (e) {
  // Nothing keeps this thread alive after the reply: it ends.
  parentPort.postMessage({ type: 'error', message: message(e) });
}
if (session) {
  const sr = (rate) => new ort.Tensor('int64', BigInt64Array.from([BigInt(rate)]), []);
  rates = { wide: { input: WIDE_INPUT, sr: sr(16000) }, narrow: { input: NARROW_INPUT, sr: sr(8000) } };
  // Read before 'ready': the parent asks for the first batch only after it.
  const signalled = Atomics.load(ctl, SIGNAL);
  const handled = Atomics.load(ctl, REQ);
  parentPort.postMessage({ type: 'ready', inputNames: session.inputNames });
  // Behind the event loop that paces every call's packets (../../util/thread-priority.mjs).
  niceThisThread();
  nameThisThread('sb-silero');
  void serve(signalled, handled);
}

/** True when asked to stop; never returns when asked to crash. */
function stopping() {
  const flag = Atomics.load(ctl, FLAG);
  if (flag === CRASH) process.exit(1);
  return flag === STOP;
}

async function serve(signalled, handled) {
  for (;;) {
    if (stopping()) break;
    Atomics.wait(ctl, SIGNAL, signalled);
    signalled = Atomics.load(ctl, SIGNAL);
    if (stopping()) break;
    const id = Atomics.load(ctl, REQ);
    if (id === handled) continue;
    handled = id;
    let status = 0;
    try {
      await run(Atomics.load(ctl, WIDE), Atomics.load(ctl, NARROW), Atomics.load(ctl, GEN));
    } catch (e) {
      status = 1;
      const text = message(e);
      const n = Math.min(text.length, WORDS - ERR);
      for (let i = 0; i < n; i++) ctl[ERR + i] = text.charCodeAt(i);
      Atomics.store(ctl, ERR_LEN, n);
    }
    // A crash request that came during the run ends the thread with the batch unfinished.
    stopping();
    Atomics.store(ctl, STATUS, status);
    Atomics.store(ctl, DONE, id);
    Atomics.notify(ctl, DONE);
  }
  // Nothing else keeps the thread alive: it ends once the session is released.
  await session.release().catch(() => {});
}

function useSlab(gen) {
  // The parent posts a grown slab before storing the request that needs it.
  while (slab.gen !== gen) {
    const m = receiveMessageOnPort(parentPort)?.message;
    if (!m) throw new Error(`VAD worker has no slab generation ${gen}`);
    if (m.type === 'slab') slab = m;
  }
  const { sab, capacity: C } = slab;
  if (input.length < C * WIDE_INPUT) {
    input = new Float32Array(C * WIDE_INPUT);
    state = new Float32Array(C * STATE_PER_WINDOW);
  }
  shared = {
    input: new Float32Array(sab, 0, C * WIDE_INPUT),
    state: new Float32Array(sab, 4 * C * WIDE_INPUT, C * STATE_PER_WINDOW),
    probability: new Float32Array(sab, 4 * C * (WIDE_INPUT + STATE_PER_WINDOW), C),
    nextState: new Float32Array(sab, 4 * C * (WIDE_INPUT + STATE_PER_WINDOW + 1), C * STATE_PER_WINDOW),
  };
  perRun = { wide: new Map(), narrow: new Map() };
  preparedGen = gen;
}

/** The feeds of a run of B windows at `rate`, over this thread's copies (reused per size). */
function tensors(name, B) {
  const rate = rates[name];
  let t = perRun[name].get(B);
  if (!t) {
    const inputCopy = input.subarray(0, B * rate.input);
    const stateCopy = state.subarray(0, B * STATE_PER_WINDOW);
    t = {
      inputCopy,
      stateCopy,
      // ORT reads the tensors' memory during run(): refilling the copies is all a run needs.
      feeds: {
        input: new ort.Tensor('float32', inputCopy, [B, rate.input]),
        state: new ort.Tensor('float32', stateCopy, [2, B, STATE_UNITS]),
        sr: rate.sr,
      },
    };
    perRun[name].set(B, t);
  }
  return t;
}

async function run(wide, narrow, gen) {
  if (preparedGen !== gen) useSlab(gen);
  const n = wide + narrow;
  if (!(wide >= 0 && narrow >= 0 && n >= 1 && n <= slab.capacity)) {
    throw new Error(`bad VAD batch size ${n} (${wide} at 16 kHz, ${narrow} at 8 kHz; room for ${slab.capacity})`);
  }
  if (wide > 0) await runOne('wide', 0, wide);
  if (narrow > 0) await runOne('narrow', wide, narrow);
}

/** One ONNX run: the `count` windows at one rate that follow the batch's first `first`. */
async function runOne(name, first, count) {
  const t = tensors(name, count);
  const inputAt = first * WIDE_INPUT;
  const stateAt = first * STATE_PER_WINDOW;
  t.inputCopy.set(shared.input.subarray(inputAt, inputAt + t.inputCopy.length));
  t.stateCopy.set(shared.state.subarray(stateAt, stateAt + t.stateCopy.length));
  const out = await session.run(t.feeds);
  const probability = out['output']?.data;
  const next = out['stateN']?.data;
  if (!(probability instanceof Float32Array) || probability.length !== count || !(next instanceof Float32Array) || next.length !== count * STATE_PER_WINDOW) {
    throw new Error('unexpected Silero VAD outputs');
  }
  shared.probability.set(probability, first);
  shared.nextState.set(next, stateAt);
}
