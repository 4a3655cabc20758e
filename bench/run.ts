/**
 * `npm run bench [-- <name> [options]]`: runs the benchmarks, each in its own process with a hard
 * time limit. With no name, runs calls, calls-vad, setup and vad-micro in turn (about 7 minutes).
 * See bench/README.md for what each measures and bench/RESULTS.md for the current figures (docs/bench-history.md for every reading).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface Bench {
  file: string;
  args: string[];
  limitS: number;
  what: string;
}

const BENCHES: Record<string, Bench> = {
  calls: { file: 'calls.ts', args: [], limitS: 180, what: 'concurrent G.711 echo calls, engine in a child process: CPU, event-loop delay, frame timing, memory, loss' },
  'calls-vad': { file: 'calls.ts', args: ['--vad'], limitS: 180, what: 'the same with a Silero VAD stream fed every inbound frame of every call' },
  setup: { file: 'setup-rate.ts', args: [], limitS: 180, what: 'call setup rate (INVITE → 200 → ACK → 1 s media → BYE), latency and failures' },
  'vad-micro': { file: 'vad.ts', args: [], limitS: 180, what: 'in-process CPU per 20 ms frame of Silero VAD and RNNoise (no sockets)' },
  // The voice-session benchmarks (their own files; see each file's header for options). Not in the default
  // run; `voice` runs the three in turn.
  denoise: { file: 'denoise.ts', args: [], limitS: 600, what: '(voice session) CPU per frame of the denoiser backends and VAD' },
  'engine-cpu': { file: 'engine-cpu.ts', args: [], limitS: 600, what: '(voice session) CPU per call of 100 pipeline calls (engine, stand-ins and phones in 3 processes)' },
  'engine-latency': { file: 'engine-latency.ts', args: [], limitS: 600, what: '(voice session) engine-added latency per turn at 1 and 100 calls, and barge-in, over SIP/RTP' },
  srtp: { file: 'srtp.ts', args: [], limitS: 600, what: 'SRTP: µs per packet per suite (C and node:crypto), engine CPU per call plain vs SRTP in one run' },
  realtime: { file: 'realtime.ts', args: [], limitS: 600, what: 'realtime calls: first model audio delta → first RTP packet, CPU per call; μ-law pass-through vs PCM' },
  'cluster-edge': { file: 'cluster-edge.ts', args: [], limitS: 180, what: 'Kamailio → two nodes on shared PostgreSQL + Redis against one node direct, in one run: setup time, setup rate, calls held, as B/A' },
  tracing: { file: 'tracing-overhead.ts', args: [], limitS: 300, what: 'tracing hooks per call with tracing off (the default) against no hooks, and with tracing on for scale' },
};
const DEFAULT = ['calls', 'calls-vad', 'setup', 'vad-micro'];
/** Named groups: `npm run bench -- voice` is the voice-session figures in one command (about 9 minutes). */
const GROUPS: Record<string, string[]> = { voice: ['engine-latency', 'engine-cpu', 'denoise'] };

function usage(): void {
  console.log(`usage: npm run bench [-- <name> [options]]

  (no name)       runs ${DEFAULT.join(', ')} one after the other
${Object.entries(GROUPS)
  .map(([name, g]) => `  ${name.padEnd(14)}  runs ${g.join(', ')} one after the other`)
  .join('\n')}
${Object.entries(BENCHES)
  .map(([name, b]) => `  ${name.padEnd(14)}  ${b.what}`)
  .join('\n')}

options (passed to the benchmark):
  calls, calls-vad: --levels 25,50,100,150,200  --window 15  --sub 3  --settle 3  --ramp-cps 50  --no-probe  --json FILE  --cpu-prof DIR
  setup:            --rates 50,100,150  --duration 20  --hold 1000  --carriers 2  --all  --json FILE  --leak-check S  --cpu-prof DIR
  both:             --quiet-wait S (wait up to S s for the machine to be under 25 % busy first)
  vad-micro:        positional: [calls=150] [seconds=10]; --inline (Silero on the calling thread), --narrowband (8 kHz)
  engine-latency:   --levels 1,100  --turns 4  --turns-single 12  --barge 10  --ramp-cps 10  --llm-ms 0  --tts-ms 0  --json FILE  --cpu-prof DIR  --quiet-wait S
  engine-cpu:       --calls 100  --window 20  --settle 4  --phases pipeline,no-denoise,echo  --ramp-cps 10  --json FILE  --cpu-prof DIR  --quiet-wait S
  voice:            the options above go to engine-latency and engine-cpu alike (use --json only with one of them)
  cluster-edge:     --serial 50  --rate-calls 300  --in-flight 10  --held 50,100  --hold-s 4  --probes 20  --rounds 2  --warm-up 150  --json FILE
  denoise, realtime, srtp, tracing: see the header of bench/<name>.ts`);
}

function run(name: string, extra: string[]): Promise<number> {
  const b = BENCHES[name]!;
  const file = fileURLToPath(new URL(`./${b.file}`, import.meta.url));
  console.log(`\n=== ${name}: ${b.what}\n=== node --import tsx bench/${b.file} ${[...b.args, ...extra].join(' ')}`);
  // --quiet-wait S may add up to S seconds before the benchmark proper starts.
  const qi = extra.indexOf('--quiet-wait');
  const limitS = b.limitS + (qi >= 0 ? Math.min(600, Number(extra[qi + 1]) || 0) : 0);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file, ...b.args, ...extra], { stdio: 'inherit' });
    const term = setTimeout(() => {
      console.error(`=== ${name} exceeded ${limitS} s: stopping it`);
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
    }, limitS * 1000);
    const stop = () => child.kill('SIGTERM');
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    child.once('exit', (code, signal) => {
      clearTimeout(term);
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

const [name, ...extra] = process.argv.slice(2);
const exists = (n: string) => existsSync(fileURLToPath(new URL(`./${BENCHES[n]!.file}`, import.meta.url)));
if (name === '--help' || name === '-h' || name === 'help') {
  usage();
} else if (name !== undefined && GROUPS[name]) {
  let failed = 0;
  for (const n of GROUPS[name]!) if ((await run(n, n === 'denoise' ? [] : extra)) !== 0) failed++;
  process.exitCode = failed ? 1 : 0;
} else if (name === undefined) {
  let failed = 0;
  for (const n of DEFAULT) if ((await run(n, [])) !== 0) failed++;
  process.exitCode = failed ? 1 : 0;
} else if (BENCHES[name] && exists(name)) {
  process.exitCode = await run(name, extra);
} else {
  console.error(`unknown benchmark ${name}\n`);
  usage();
  process.exitCode = 2;
}
