/**
 * Silero inference on the calling thread (see silero-backend.ts for the contract and why the
 * default runs it in a worker instead): for tools, benchmarks and comparisons.
 */
import * as ort from 'onnxruntime-node';
import {
  grownCapacity,
  INITIAL_CAPACITY,
  NARROWBAND,
  sessionOptions,
  STATE_PER_WINDOW,
  STATE_UNITS,
  WIDEBAND,
  type BackendOptions,
  type BatchBuffers,
  type InferenceBackend,
  type SileroRate,
} from './silero-backend.ts';

/** Why a batch of `wide` + `narrow` windows cannot run in buffers of `capacity`, if it cannot. */
function badBatch(wide: number, narrow: number, capacity: number): string | undefined {
  const n = wide + narrow;
  if (Number.isInteger(wide) && Number.isInteger(narrow) && wide >= 0 && narrow >= 0 && n >= 1 && n <= capacity) return undefined;
  return `bad VAD batch size ${n} (${wide} at 16 kHz, ${narrow} at 8 kHz; room for ${capacity})`;
}

/** `sr`: one scalar per run. */
const srTensor = (sampleRate: number): ort.Tensor => new ort.Tensor('int64', BigInt64Array.from([BigInt(sampleRate)]), []);

export class InlineBackend implements InferenceBackend {
  private readonly sr16 = srTensor(WIDEBAND.sampleRate);
  private readonly sr8 = srTensor(NARROWBAND.sampleRate);
  private bufs = inlineBuffers(INITIAL_CAPACITY);

  private constructor(private readonly session: ort.InferenceSession) {}

  static async load(o: BackendOptions): Promise<InlineBackend> {
    return new InlineBackend(await ort.InferenceSession.create(o.modelPath, sessionOptions(o.intraOpNumThreads)));
  }

  get inputNames(): readonly string[] {
    return this.session.inputNames;
  }

  buffers(windows: number): BatchBuffers {
    if (windows > this.bufs.probability.length) this.bufs = inlineBuffers(grownCapacity(this.bufs.probability.length, windows));
    return this.bufs;
  }

  async run(wide: number, narrow: number): Promise<void> {
    const bad = badBatch(wide, narrow, this.bufs.probability.length);
    if (bad) throw new RangeError(bad);
    if (wide > 0) await this.runOne(WIDEBAND, this.sr16, 0, wide);
    if (narrow > 0) await this.runOne(NARROWBAND, this.sr8, wide, narrow);
  }

  /** One ONNX run: the `count` windows at one rate that follow the batch's first `first`. */
  private async runOne(rate: SileroRate, sr: ort.Tensor, first: number, count: number): Promise<void> {
    const b = this.bufs;
    const inputAt = first * WIDEBAND.input;
    const stateAt = first * STATE_PER_WINDOW;
    const out = await this.session.run({
      input: new ort.Tensor('float32', b.input.subarray(inputAt, inputAt + count * rate.input), [count, rate.input]),
      state: new ort.Tensor('float32', b.state.subarray(stateAt, stateAt + count * STATE_PER_WINDOW), [2, count, STATE_UNITS]),
      sr,
    });
    const probability = out['output']?.data;
    const next = out['stateN']?.data;
    if (!(probability instanceof Float32Array) || probability.length !== count || !(next instanceof Float32Array) || next.length !== count * STATE_PER_WINDOW) {
      throw new Error('unexpected Silero VAD outputs');
    }
    b.probability.set(probability, first);
    b.nextState.set(next, stateAt);
  }

  close(): Promise<void> {
    return this.session.release();
  }
}

function inlineBuffers(capacity: number): BatchBuffers {
  return {
    input: new Float32Array(capacity * WIDEBAND.input),
    state: new Float32Array(capacity * STATE_PER_WINDOW),
    probability: new Float32Array(capacity),
    nextState: new Float32Array(capacity * STATE_PER_WINDOW),
  };
}
