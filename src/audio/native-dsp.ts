/**
 * Switchboard's DSP kernels in C (native/dsp, the optional package `switchboard-dsp`, built by
 * node-gyp at install; x86-64 only, it uses SSE2). Today one: the spectral denoiser's hop
 * (./denoise-spectral-core.ts SpectralCore) and the FFTs it runs (./fft.ts), at about a quarter
 * of the TypeScript core's time per frame (bench/denoise.ts). A kernel is a port of its
 * TypeScript, operation for operation: tables and constants are handed over from TypeScript, no
 * libm function is evaluated in C, and sums run in the same order, so the output is the same, bit
 * for bit (test/unit/denoise/native-core.test.ts). What it saves is CPU (docs/bench-history.md,
 * 2026-11-27 16:46).
 * (The resampler's hot loops were ported too and measured: V8 runs them within 3–30 % of C, most
 * of a frame's cost being around the loop, so they stay TypeScript.)
 *
 * Optional like native/rtp-udp: where the module was not built, or `useNativeDsp(false)` (the
 * composition root's SWITCHBOARD_DSP_NATIVE=0) turned it off, the TypeScript runs.
 */
import { createRequire } from 'node:module';

/** The module's functions. Its objects are opaque handles, freed when collected. */
export interface NativeDsp {
  /** A denoiser band (sizes, tables, scratch); arguments as the spectral core makes them. */
  createBand(params: Float64Array, window: Float64Array, lsa: Float64Array, rev: Uint32Array, stages: Float64Array, split: Float64Array): object;
  /** One denoiser stream's state, on a band (which it keeps alive). */
  createCore(band: object): object;
  /** Denoise `input` (whole hops) into `out` (as long); throws a RangeError otherwise. */
  process(core: object, input: Int16Array, out: Int16Array): void;
}

let loaded: NativeDsp | null | undefined;
let enabled = true;

/**
 * Whether code that has a C kernel runs it by default (true; the module must also be built). Set
 * once at start-up, before streams are made: a stream keeps what it started with. Per thread (a
 * worker has its own copy: the denoiser's worker gets the choice as an option).
 */
export function useNativeDsp(on: boolean): void {
  enabled = on;
}

/** The module (loaded once per thread) when built and enabled; otherwise undefined. */
export function nativeDsp(): NativeDsp | undefined {
  if (!enabled) return undefined;
  if (loaded === undefined) {
    try {
      loaded = createRequire(import.meta.url)('switchboard-dsp') as NativeDsp;
    } catch {
      // The TypeScript does the same, at more CPU.
      loaded = null;
    }
  }
  return loaded ?? undefined;
}
