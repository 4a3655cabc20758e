/**
 * CPU cost per 20 ms frame of the caller-side audio stages: Silero VAD and the RNNoise denoiser.
 * Run: node --import tsx bench/vad.ts [calls=150] [seconds=10] [--inline] [--narrowband]
 *
 * Reports process CPU time (user+system, every thread), not wall time, so figures are not inflated
 * when the machine is busy with something else, and the main thread's active time (event-loop
 * utilization): Silero runs in a worker thread by default (`--inline` runs it on the main thread
 * as before), and the main thread is the one that paces RTP. The target is 150 concurrent calls
 * on 2 cores, i.e. 150 × 50 frames per second.
 *
 * `--narrowband` opens every VAD stream as a G.711 call's (`createStream({ narrowband: true })`:
 * the same 16 kHz frames, decimated to 8 kHz and run through Silero's 8 kHz mode), and the bare
 * ORT floor runs 8 kHz windows; the frames are the same in both modes, so two runs, with and
 * without the flag, differ only in the model's rate.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import { splitPcm, SAMPLE_RATE, type AudioFrame } from '../src/audio/frame.ts';
import { readWav } from '../src/audio/wav.ts';
import { DEFAULT_SILERO_MODEL_PATH, SileroVad } from '../src/audio/vad/silero.ts';
import { InlineBackend } from '../src/audio/vad/silero-inline.ts';
import { Denoiser } from '../src/audio/denoise.ts';

const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const calls = Number(positional[0] ?? 150);
const seconds = Number(positional[1] ?? 10);
const thread = process.argv.includes('--inline') ? 'inline' : 'worker';
const narrowband = process.argv.includes('--narrowband');
const rate = narrowband ? 'narrowband (8 kHz model)' : 'wideband (16 kHz model)';
const FRAMES_PER_SECOND = 50;

// Speech and noise alternate so the model sees realistic input rather than zeros.
const fixture = (name: string): Int16Array =>
  readWav(readFileSync(fileURLToPath(new URL(`../fixtures/audio/${name}.wav`, import.meta.url)))).samples;
const frames: AudioFrame[] = ['utt-address', 'noise-street', 'utt-phone-number', 'noise-babble']
  .flatMap((n) => splitPcm(fixture(n)))
  .map((samples) => ({ samples, sampleRate: SAMPLE_RATE }));

interface Measure {
  cpuMsPerFrame: number;
  mainMsPerFrame: number;
  wallMsPerFrame: number;
}

async function measure(totalFrames: number, body: () => Promise<void>): Promise<Measure> {
  const cpu0 = process.cpuUsage();
  const elu0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  await body();
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const elu = performance.eventLoopUtilization(elu0);
  return { cpuMsPerFrame: (cpu.user + cpu.system) / 1000 / totalFrames, mainMsPerFrame: elu.active / totalFrames, wallMsPerFrame: wall / totalFrames };
}

function report(label: string, m: Measure): void {
  const coresAt150 = (m.cpuMsPerFrame * FRAMES_PER_SECOND * 150) / 1000;
  const callsPerCore = Math.floor(1000 / (m.cpuMsPerFrame * FRAMES_PER_SECOND));
  console.log(
    `${label.padEnd(46)} ${m.cpuMsPerFrame.toFixed(4)} ms CPU/frame (main thread ${m.mainMsPerFrame.toFixed(4)}, wall ${m.wallMsPerFrame.toFixed(4)})` +
      `  ${((m.cpuMsPerFrame / 20) * 100).toFixed(2)}% of a core per call` +
      `  150 calls = ${coresAt150.toFixed(2)} cores  ≈${callsPerCore} calls/core`,
  );
}

const vad = await SileroVad.load({ thread });
const denoiser = await Denoiser.load();
const framesPerCall = seconds * FRAMES_PER_SECOND;

// Warm-up: first runs pay for lazy initialisation inside onnxruntime and the wasm JIT.
{
  const s = vad.createStream({ narrowband });
  for (const f of frames.slice(0, 200)) await s.push(f);
  const d = denoiser.createStream();
  for (const f of frames.slice(0, 200)) d.process(f);
  d.close();
}

console.log(`node ${process.version}, onnxruntime-node ${ort.env.versions.common}, ${calls} calls × ${seconds} s of audio, VAD thread: ${thread}, ${rate}`);

{
  const s = vad.createStream({ narrowband });
  report('VAD, 1 call', await measure(framesPerCall, async () => {
    for (let i = 0; i < framesPerCall; i++) await s.push(frames[i % frames.length]!);
  }));
}
// Live calls' packets arrive spread over the 20 ms tick, so how many land in one event-loop turn
// (and share one batched run) depends on load: measure all-in-one-turn, 10 turns and 1 per turn.
for (const groups of [1, 10, calls]) {
  const streams = Array.from({ length: calls }, () => vad.createStream({ narrowband }));
  const size = Math.ceil(calls / groups);
  const before = vad.stats;
  const m = await measure(framesPerCall * calls, async () => {
    for (let i = 0; i < framesPerCall; i++) {
      for (let g = 0; g < calls; g += size) {
        // Each call starts at a different point of the audio, as live calls would.
        await Promise.all(streams.slice(g, g + size).map((s, k) => s.push(frames[(i + (g + k) * 37) % frames.length]!)));
      }
    }
  });
  const batch = (vad.stats.windows - before.windows) / (vad.stats.runs - before.runs);
  report(`VAD, ${calls} calls, ${groups === 1 ? 'all in one turn' : `${groups} turns/tick`} (batch ${batch.toFixed(1)})`, m);
}
{
  const d = denoiser.createStream();
  report('RNNoise denoise, 1 call', await measure(framesPerCall, async () => {
    for (let i = 0; i < framesPerCall; i++) d.process(frames[i % frames.length]!);
  }));
  d.close();
}
{
  // The floor: bare batched runs on a full [B, 576] batch ([B, 288] at 8 kHz), on this thread,
  // without the streams' bookkeeping or the hop to the worker.
  const B = calls;
  const [wide, narrow] = narrowband ? [0, B] : [B, 0];
  const inline = await InlineBackend.load({ modelPath: DEFAULT_SILERO_MODEL_PATH, intraOpNumThreads: 1 });
  const { input } = inline.buffers(B);
  for (let i = 0; i < input.length; i++) input[i] = Math.random() * 0.2 - 0.1;
  const runs = Math.max(20, Math.round((framesPerCall * 320) / 512 / 4));
  await inline.run(wide, narrow);
  // A batched run covers one 32 ms window for each of B calls = 1.6 frames each.
  report(`VAD bare ORT run, batch ${B} (floor)`, await measure((runs * B * 512) / 320, async () => {
    for (let i = 0; i < runs; i++) await inline.run(wide, narrow);
  }));
  await inline.close();
}
await vad.close();
