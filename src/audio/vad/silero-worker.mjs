// The Silero VAD inference thread (see silero-backend.ts). Plain JavaScript on purpose: a worker
// is started by Node itself, outside tsx or vitest's transform, so it must not need one.
//
// Protocol:
//   workerData {modelPath, intraOpNumThreads, sampleRate, ctl, slab: {sab, capacity, gen}}
//     -> message {type: 'ready', inputNames} | {type: 'error', message} (and the thread ends)
//   then everything goes through the Int32 control block `ctl` (layout and meaning: CTL in
//   silero-backend.ts). The thread sleeps in Atomics.wait on SIGNAL; per batch the parent sets
//   BATCH, GEN and REQ = id and signals; this thread runs it, stores STATUS (and the error text),
//   stores DONE = id and notifies DONE. FLAG asks it to stop (after the batch in hand) or to
//   crash (end with code 1 instead of finishing the batch in hand, or the next one if idle).
//   message {type: 'slab', sab, capacity, gen}: a grown slab, posted before the first batch in
//   it and read synchronously (receiveMessageOnPort) when that batch comes.
// The slab holds [input capacity×576][state capacity×256][probability capacity][next state
// capacity×256] float32s; the parent fills the first two, this thread writes the last two.
// onnxruntime-node refuses tensors on shared memory, so the inputs are copied out first, into
// buffers (and tensors) reused from batch to batch.
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';

const WINDOW_INPUT = 576;
const STATE_UNITS = 128;
const STATE_PER_WINDOW = 2 * STATE_UNITS;
const SIGNAL = 0, REQ = 1, BATCH = 2, GEN = 3, FLAG = 4, DONE = 5, STATUS = 6, ERR_LEN = 7, ERR = 8, WORDS = 256;
const STOP = 1, CRASH = 2;

const message = (e) => (e instanceof Error ? e.message : String(e));

const ctl = new Int32Array(workerData.ctl);
let slab = workerData.slab;
/** Generation of the slab `perBatch` was built for (0: none yet). */
let preparedGen = 0;
/** Per batch size: the tensors over this thread's input copies and the slab's views. */
let perBatch = new Map();
let input = new Float32Array(0);
let state = new Float32Array(0);
/** @type {ort.Tensor} */
let sr;

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
  sr = new ort.Tensor('int64', BigInt64Array.from([BigInt(workerData.sampleRate)]), []);
  // Read before 'ready': the parent asks for the first batch only after it.
  const signalled = Atomics.load(ctl, SIGNAL);
  const handled = Atomics.load(ctl, REQ);
  parentPort.postMessage({ type: 'ready', inputNames: session.inputNames });
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
      await run(Atomics.load(ctl, BATCH), Atomics.load(ctl, GEN));
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
  if (input.length < slab.capacity * WINDOW_INPUT) {
    input = new Float32Array(slab.capacity * WINDOW_INPUT);
    state = new Float32Array(slab.capacity * STATE_PER_WINDOW);
  }
  perBatch = new Map();
  preparedGen = gen;
}

function tensors(B) {
  let t = perBatch.get(B);
  if (!t) {
    const { sab, capacity: C } = slab;
    const f32 = (offset, length) => new Float32Array(sab, 4 * offset, length);
    const inputCopy = input.subarray(0, B * WINDOW_INPUT);
    const stateCopy = state.subarray(0, B * STATE_PER_WINDOW);
    t = {
      inputShared: f32(0, B * WINDOW_INPUT),
      stateShared: f32(C * WINDOW_INPUT, B * STATE_PER_WINDOW),
      probabilityShared: f32(C * (WINDOW_INPUT + STATE_PER_WINDOW), B),
      nextStateShared: f32(C * (WINDOW_INPUT + STATE_PER_WINDOW + 1), B * STATE_PER_WINDOW),
      inputCopy,
      stateCopy,
      // ORT reads the tensors' memory during run(): refilling the copies is all a batch needs.
      feeds: {
        input: new ort.Tensor('float32', inputCopy, [B, WINDOW_INPUT]),
        state: new ort.Tensor('float32', stateCopy, [2, B, STATE_UNITS]),
        sr,
      },
    };
    perBatch.set(B, t);
  }
  return t;
}

async function run(B, gen) {
  if (preparedGen !== gen) useSlab(gen);
  if (!(B >= 1 && B <= slab.capacity)) throw new Error(`bad VAD batch size ${B}`);
  const t = tensors(B);
  t.inputCopy.set(t.inputShared);
  t.stateCopy.set(t.stateShared);
  const out = await session.run(t.feeds);
  const probability = out['output']?.data;
  const next = out['stateN']?.data;
  if (!(probability instanceof Float32Array) || probability.length !== B || !(next instanceof Float32Array) || next.length !== B * STATE_PER_WINDOW) {
    throw new Error('unexpected Silero VAD outputs');
  }
  t.probabilityShared.set(probability);
  t.nextStateShared.set(next);
}
