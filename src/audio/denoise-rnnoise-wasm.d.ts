// Types for the parts of @echogarden/rnnoise-wasm (an Emscripten build of xiph/rnnoise) that
// denoise.ts uses; the package ships no declarations.
declare module '@echogarden/rnnoise-wasm' {
  export interface RNNoiseModule {
    /** Replaced when the wasm memory grows: read it again after any call that may allocate. */
    readonly HEAPF32: Float32Array;
    _malloc(bytes: number): number;
    _free(ptr: number): void;
    _rnnoise_get_frame_size(): number;
    /** Argument: a custom model pointer, 0 for the built-in model. Returns a DenoiseState*. */
    _rnnoise_create(model: number): number;
    _rnnoise_destroy(state: number): void;
    /** Denoises one frame (in and out may differ); returns RNNoise's own voice probability. */
    _rnnoise_process_frame(state: number, out: number, input: number): number;
  }
  const createRNNoise: (moduleArg?: Record<string, unknown>) => Promise<RNNoiseModule>;
  export default createRNNoise;
}
