/**
 * The heavy, shared parts every AI call uses, loaded once per engine (ARCHITECTURE.md §5) and
 * turned into the one EngineContext the call layer hands to `startEngine`. Nothing here reads the
 * environment: the speech providers get the parsed Config, the agent comes from the chat side
 * (one Agent per process, shared by chats and calls).
 */
import type { Logger } from 'pino';
import type client from 'prom-client';
import { AmbientLibrary } from '../../audio/ambient.ts';
import { loadEngineDenoiser } from '../../audio/denoise.ts';
import { FliteTts, DEFAULT_FLITE_VOICE } from '../../audio/tts-flite.ts';
import { SileroVad } from '../../audio/vad/silero.ts';
import type { BusyPacing } from '../../util/batch-pacer.ts';
import type { Catalog } from '../../catalog/catalog.ts';
import type { Config } from '../../config.ts';
import { SpeechProviders } from '../../providers/registry.ts';
import { FliteTtsProvider } from '../../providers/tts/flite-tts.ts';
import type { Clock } from '../../util/clock.ts';
import { createCascadeMetrics } from '../cascade/index.ts';
import type { ProviderMetrics } from '../../telemetry/provider-metrics.ts';
import type { EngineContext } from '../engine.ts';

export interface EnginePartsInput {
  config: Pick<Config, 'openai' | 'deepgram' | 'dataDir' | 'dspNative' | 'denoiserBusyBatchMs'>;
  clock: Clock;
  logger: Logger;
  catalog: EngineContext['catalog'] & Catalog;
  agent: EngineContext['agent'];
  /** The /metrics registry of the API: per-turn latency histograms are served there. */
  metricsRegistry: client.Registry;
  /** Speech providers' requests and first-byte latency (absent: not measured). */
  providerMetrics?: ProviderMetrics;
}

export interface EngineParts {
  ctx: EngineContext;
  /** The offline engine (fallback voice, apologies); shared with the flite catalog voices. */
  flite: FliteTts;
  /** Releases the ONNX session, the denoiser's and the Flite worker. Idempotent. */
  close(): Promise<void>;
}

/**
 * Least time between two batches handed to the denoiser's worker thread, ms
 * (src/util/batch-pacer.ts): one batch per frame period, so with many calls the frames of the
 * media clock's passes share one hand-over instead of one each (four passes per frame then, a
 * quarter of the batches' fixed cost on both threads: docs/bench-history.md, 2026-11-26 17:20; two now).
 * The price is at most this much on when a frame's denoised audio reaches STT and the VAD, so
 * on an endpointing decision that waits 200–1200 ms of silence anyway; nothing the caller hears.
 */
export const DENOISER_BATCH_INTERVAL_MS = 20;

/**
 * A busy engine's denoiser batches (src/util/batch-pacer.ts BusyPacing): from 1,250 frames a
 * second (about 25 callers talking at once) until under 950, batches start at most every
 * `SWITCHBOARD_DENOISER_BUSY_BATCH_MS` (40 by default; 20 or less: never busy). Half the
 * denoiser's batches, whose fixed cost (the hand-over both ways, the worker's wake-up) is much of
 * what it costs, with every frame still denoised: the cascade's listener keeps a few frames of a
 * call in flight (LISTENER_FRAMES_IN_FLIGHT), so a batch takes all that came since the last. At
 * 100 calls 1.6–4.3 % less CPU per call, with as many replies (paired runs, docs/bench-history.md,
 * 2026-11-27 20:03), at up to 20 ms more on when denoised audio and the VAD's answers come, against
 * turn ends that wait 200–1200 ms of silence. Under that load the CPU is what limits the calls a
 * machine takes; a quieter engine keeps the 20 ms.
 */
export function denoiserBusyPacing(busyBatchMs: number): BusyPacing | undefined {
  if (busyBatchMs <= DENOISER_BATCH_INTERVAL_MS) return undefined;
  return { intervalMs: busyBatchMs, enterPerSecond: 1250, exitPerSecond: 950 };
}

/**
 * Least time between two Silero batches, ms. With the denoiser on (the default) the VAD's
 * windows already come once per denoiser batch, every 20 ms, and this changes nothing. Without
 * it (`enable_noise_cancellation: false`) every media-clock pass (5 ms apart then) made a batch
 * of its own: about 195 runs a second of 4 windows at 100 calls, where a run's fixed cost (the hand-over
 * both ways, ONNX Runtime's per-run work, the wake-ups) is worth several windows. At 10 ms: about
 * 100 runs of 8 windows, 6–7 % less CPU per call (paired runs, docs/bench-history.md, 2026-11-27 13:43), at
 * up to 10 ms on a VAD answer, half what the denoiser's pacing adds. The results of a batch come
 * back as one burst of those calls' turn-taking work; since RTP leaves from its own thread, that
 * no longer moves packets (150 VAD calls: send-interval error p99 1.4 ms, as without).
 */
export const VAD_BATCH_INTERVAL_MS = 10;

export async function loadEngineParts(input: EnginePartsInput): Promise<EngineParts> {
  const log = input.logger.child({ part: 'engine' });
  // The spectral suppressor by default: RNNoise costs 8-9x the CPU (docs/bench-history.md), and in its
  // own worker thread, off the thread that paces every call's RTP; started first, so the worker
  // boots (~0.3 s) while the VAD and Flite load. A failure costs noise cancellation, not calls:
  // the cascade runs without a denoiser when none is given.
  // Its hops in native/dsp's C core when built (SWITCHBOARD_DSP_NATIVE=0: TypeScript); the
  // denoiser's worker thread has its own copy of useNativeDsp's switch, hence the option.
  const busy = denoiserBusyPacing(input.config.denoiserBusyBatchMs);
  const denoiserLoad = loadEngineDenoiser({
    batchIntervalMs: DENOISER_BATCH_INTERVAL_MS,
    ...(busy ? { busy } : {}),
    spectral: { native: input.config.dspNative },
    // The callers' VAD runs in the denoiser's worker too, on the frames it denoises: no second
    // hand-over per frame. `vad` below stays for the rest: calls without noise cancellation, a
    // worker lost or starting, realtime calls, voicemail detection.
    vad: {},
  }).catch((err: unknown) => {
    log.warn({ err: (err as Error).message }, 'denoiser unavailable: calls run without noise cancellation');
    return undefined;
  });
  const vad = await SileroVad.load({ batchIntervalMs: VAD_BATCH_INTERVAL_MS });
  const flite = await FliteTts.load();
  // Compiling the 21 MB wasm takes about a second in its worker: start now so the first call's
  // apology or flite voice is not the one that waits, but never hold start-up for it.
  flite.warmUp().catch((err: unknown) => log.warn({ err: (err as Error).message }, 'flite warm-up failed'));
  const denoiser = await denoiserLoad;
  if (denoiser?.vadError) log.warn({ err: denoiser.vadError }, "the denoiser's worker could not load the VAD: the callers' VAD runs on its own thread");
  const fliteOnce = (): Promise<FliteTts> => Promise.resolve(flite);
  const speech = new SpeechProviders({
    config: input.config,
    flite: fliteOnce,
    clock: input.clock,
    ...(input.providerMetrics ? { metrics: input.providerMetrics } : {}),
  });
  const ctx: EngineContext = {
    clock: input.clock,
    logger: log,
    catalog: input.catalog,
    speech,
    agent: input.agent,
    vad,
    ...(denoiser ? { denoiser } : {}),
    ambient: new AmbientLibrary(),
    dataDir: input.config.dataDir,
    metrics: createCascadeMetrics(input.metricsRegistry),
    fallbackVoice: { provider: new FliteTtsProvider(fliteOnce, input.clock), voice: DEFAULT_FLITE_VOICE },
  };
  let closing: Promise<void> | undefined;
  return {
    ctx,
    flite,
    close() {
      closing ??= Promise.allSettled([vad.close(), flite.close(), denoiser?.close()]).then(() => undefined);
      return closing;
    },
  };
}
