/**
 * CPU per call of the pipeline engine (issue 4 goal: under 0.6% of one core): a minute-long
 * scripted conversation (greeting, three questions, a backchannel, silences, re-engagement
 * rules running) through the real cascade — Silero VAD, RNNoise when enabled, turn-taking,
 * interruption policy, speaker pacing, transcript — on VirtualMedia and a manual clock, with the
 * in-process stand-in providers (src/replay/stand-ins.ts). Real time is not needed for a CPU
 * figure, so the call runs as fast as the CPU allows and the process CPU time it used is divided
 * by the call's length.
 *
 * Not included: the media stack (RTP, G.711, jitter buffer, pacing timers), which the `calls`
 * benchmark measures per call on real sockets; the two add up.
 *
 *   node --import tsx bench/engine-cpu.ts [--calls 3] [--json]
 */
import os from 'node:os';
import { Denoiser } from '../src/audio/denoise.ts';
import { runCall, say } from '../test/integration/cascade/harness.ts';

const args = process.argv.slice(2);
const calls = Number(args[args.indexOf('--calls') + 1] ?? 3) || 3;
const CALL_MS = 60_000;

const script = {
  items: [
    say('utt-opening-hours', 4_000),
    say('utt-book-table', 14_000),
    say('bc-mm-hmm', 21_000),
    say('utt-cancel', 30_000),
    say('utt-yes', 45_000),
  ],
  hangUpAtMs: CALL_MS,
};

async function measure(denoise: boolean): Promise<{ cpuPct: number; wallMs: number; turns: number }> {
  const denoiser = denoise ? await Denoiser.load() : undefined;
  // One warm-up call: ONNX and wasm compile, JIT.
  await runCall({ script, config: { enable_noise_cancellation: denoise }, deps: denoiser ? { denoiser } : {} });
  const cpu0 = process.cpuUsage();
  const wall0 = performance.now();
  let turns = 0;
  for (let i = 0; i < calls; i++) {
    const run = await runCall({ script, config: { enable_noise_cancellation: denoise }, deps: denoiser ? { denoiser } : {} });
    turns += run.result.transcript.filter((t) => t.kind === 'reply').length;
  }
  const cpu = process.cpuUsage(cpu0);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  return { cpuPct: (cpuMs / (calls * CALL_MS)) * 100, wallMs: performance.now() - wall0, turns };
}

const started = Date.now();
const without = await measure(false);
const withDenoise = await measure(true);
const out = {
  bench: 'engine-cpu',
  date: new Date().toISOString(),
  machine: { cpu: os.cpus()[0]?.model, cores: os.availableParallelism(), node: process.version },
  calls,
  call_s: CALL_MS / 1000,
  pipeline_vad_pct_of_core: round(without.cpuPct),
  pipeline_vad_denoiser_pct_of_core: round(withDenoise.cpuPct),
  denoiser_share_pct_of_core: round(withDenoise.cpuPct - without.cpuPct),
  replies_per_call: without.turns / calls,
  speedup_vs_real_time: round((calls * CALL_MS) / without.wallMs),
  goal_pct: 0.6,
  total_s: round((Date.now() - started) / 1000),
};
console.log(JSON.stringify(out, null, 2));

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
