/**
 * Resampler micro-benchmark: µs of CPU per 20 ms frame on the G.711 path (8 ↔ 16 kHz) and a
 * few other pairs, with `process()` (new array per frame) and, where the checkout has it,
 * `processShared()` (reused buffer). `--src DIR` loads src/audio/resample.ts from another
 * checkout (e.g. `git worktree add /tmp/before HEAD~1`) for a before/after on the same machine.
 *
 *   node --import tsx bench/resample.ts [--frames 20000] [--rounds 5] [--src DIR]
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

interface ResamplerLike {
  process(input: Int16Array): Int16Array;
  processShared?(input: Int16Array): Int16Array;
}
type ResamplerClass = new (from: number, to: number) => ResamplerLike;

const args = process.argv.slice(2);
const opt = (name: string, fallback: string): string => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1]! : fallback;
};
const frames = Number(opt('frames', '20000'));
const rounds = Number(opt('rounds', '5'));
const src = opt('src', resolve(import.meta.dirname, '..'));
const mod = (await import(pathToFileURL(resolve(src, 'src/audio/resample.ts')).href)) as { Resampler: ResamplerClass };

/** Speech-like test input: two tones plus a little noise, so no branch sees only zeros. */
function input(rate: number): Int16Array[] {
  const n = rate / 50;
  let seed = 1;
  return Array.from({ length: 50 }, (_, f) =>
    Int16Array.from({ length: n }, (_, i) => {
      const t = (f * n + i) / rate;
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return Math.round(6000 * Math.sin(2 * Math.PI * 440 * t) + 3000 * Math.sin(2 * Math.PI * 1700 * t) + ((seed >> 16) % 500));
    }),
  );
}

function measure(from: number, to: number, shared: boolean): number {
  const r = new mod.Resampler(from, to);
  const chunks = input(from);
  const run = (count: number): number => {
    let sink = 0;
    for (let i = 0; i < count; i++) {
      const chunk = chunks[i % chunks.length]!;
      const out = shared ? r.processShared!(chunk) : r.process(chunk);
      sink += out[0]!;
    }
    return sink;
  };
  run(2000); // warm-up: JIT and filter tables
  const best: number[] = [];
  for (let k = 0; k < rounds; k++) {
    const start = process.cpuUsage();
    run(frames);
    const used = process.cpuUsage(start);
    best.push(((used.user + used.system) / frames));
  }
  best.sort((a, b) => a - b);
  return best[Math.floor(best.length / 2)]!;
}

console.log(`# resampler µs CPU per 20 ms frame (median of ${rounds} rounds × ${frames} frames); source ${src}; node ${process.version}`);
console.log('| pair | process() | processShared() |');
console.log('|---|---|---|');
for (const [from, to] of [[8000, 16000], [16000, 8000], [16000, 48000], [48000, 16000], [24000, 16000]] as const) {
  const plain = measure(from, to, false);
  const probe = new mod.Resampler(from, to);
  const shared = probe.processShared ? measure(from, to, true).toFixed(2) : '–';
  console.log(`| ${from / 1000} → ${to / 1000} kHz | ${plain.toFixed(2)} | ${shared} |`);
}
