// The Silero VAD inference thread (see silero-backend.ts). Plain JavaScript on purpose: a worker
// is started by Node itself, outside tsx or vitest's transform, so it must not need one.
//
// Protocol (one batch at a time):
//   {type: 'init', modelPath, intraOpNumThreads, sampleRate}
//       -> {type: 'ready', inputNames} | {type: 'error', message}
//   {type: 'run', id, batch, capacity, sab?}   (sab: a new shared slab, sent when it changes)
//       -> {type: 'result', id} | {type: 'error', id, message}
// The slab holds [input capacity×576][state capacity×256][probability capacity][next state
// capacity×256] float32s; the parent fills the first two, this thread writes the last two.
// onnxruntime-node refuses tensors on shared memory, so the inputs are copied out first.
import { parentPort } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';

const WINDOW_INPUT = 576;
const STATE_PER_WINDOW = 256;

/** @type {ort.InferenceSession | undefined} */
let session;
/** @type {ort.Tensor | undefined} */
let sr;
/** @type {SharedArrayBuffer | undefined} */
let sab;

const message = (e) => (e instanceof Error ? e.message : String(e));

parentPort.on('message', async (msg) => {
  if (msg.type === 'init') {
    try {
      session = await ort.InferenceSession.create(msg.modelPath, {
        intraOpNumThreads: msg.intraOpNumThreads,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        graphOptimizationLevel: 'all',
      });
      sr = new ort.Tensor('int64', BigInt64Array.from([BigInt(msg.sampleRate)]), []);
      parentPort.postMessage({ type: 'ready', inputNames: session.inputNames });
    } catch (e) {
      parentPort.postMessage({ type: 'error', message: message(e) });
    }
    return;
  }
  if (msg.type !== 'run') return;
  try {
    if (msg.sab) sab = msg.sab;
    if (!session || !sr || !sab) throw new Error('VAD worker is not initialised');
    const { batch: B, capacity: C } = msg;
    const view = (offset, length) => new Float32Array(sab, 4 * offset, length);
    const out = await session.run({
      input: new ort.Tensor('float32', view(0, B * WINDOW_INPUT).slice(), [B, WINDOW_INPUT]),
      state: new ort.Tensor('float32', view(C * WINDOW_INPUT, B * STATE_PER_WINDOW).slice(), [2, B, STATE_PER_WINDOW / 2]),
      sr,
    });
    const probability = out['output']?.data;
    const next = out['stateN']?.data;
    if (!(probability instanceof Float32Array) || probability.length !== B || !(next instanceof Float32Array) || next.length !== B * STATE_PER_WINDOW) {
      throw new Error('unexpected Silero VAD outputs');
    }
    view(C * (WINDOW_INPUT + STATE_PER_WINDOW), B).set(probability);
    view(C * (WINDOW_INPUT + STATE_PER_WINDOW + 1), B * STATE_PER_WINDOW).set(next);
    parentPort.postMessage({ type: 'result', id: msg.id });
  } catch (e) {
    parentPort.postMessage({ type: 'error', id: msg.id, message: message(e) });
  }
});
