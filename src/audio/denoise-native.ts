/**
 * The spectral denoiser's C core (native/denoise, the optional package `switchboard-denoise`,
 * built by node-gyp at install): SpectralCore's hop (./denoise-spectral-core.ts) and the FFTs it
 * runs (./fft.ts), ported operation for operation. Its tables and constants are handed over from
 * TypeScript and it evaluates no libm function, so it returns the same samples, bit for bit
 * (test/unit/audio/denoise-native.test.ts); what it saves is CPU: about a third of the
 * TypeScript core's time per hop (bench/denoise.ts, bench/RESULTS.md session 15).
 *
 * Optional like native/rtp-udp: when the module was not built, or SWITCHBOARD_DENOISE_NATIVE=0
 * asks for the TypeScript core (SpectralDenoiserOptions.native), streams run the TypeScript.
 */
import { createRequire } from 'node:module';

/** The module's functions. Its objects are opaque handles, freed when collected. */
export interface NativeSpectral {
  /** A band (sizes, tables, scratch); arguments as nativeBandArgs() makes them. */
  createBand(params: Float64Array, window: Float64Array, lsa: Float64Array, rev: Uint32Array, stages: Float64Array, split: Float64Array): object;
  /** One stream's state, on a band (which it keeps alive). */
  createCore(band: object): object;
  /** Denoise `input` (whole hops) into `out` (as long); throws a RangeError otherwise. */
  process(core: object, input: Int16Array, out: Int16Array): void;
}

let loaded: NativeSpectral | null | undefined;

/** The module (loaded once per thread); undefined when it was not built. */
export function loadNativeSpectral(): NativeSpectral | undefined {
  if (loaded === undefined) {
    try {
      loaded = createRequire(import.meta.url)('switchboard-denoise') as NativeSpectral;
    } catch {
      // The TypeScript core does the same, at more CPU.
      loaded = null;
    }
  }
  return loaded ?? undefined;
}
