/**
 * Resampler micro-benchmark: µs of CPU per 20 ms frame for the rate pairs the engine uses —
 * 24 ↔ 16 kHz (OpenAI speech and realtime audio: the 2:3 and 3:2 paths), 24 → 16 kHz telephone band
 * (OpenAI speech on a G.711 call), 8 ↔ 16 kHz (G.711, the half-band path), 48 → 16 and
 * 16 → 48 kHz — with `process()` (new array per frame) and, where
 * the checkout has it, `processShared()` (reused buffer). Each cell is the best of `--rounds`
 * rounds (median in brackets): other work on the machine only ever adds time.
 *
 * `--src DIR` loads src/audio/resample.ts from another checkout (or a directory holding a copy of
 * the old file at DIR/src/audio/resample.ts). `--compare DIR` loads a second one and alternates
 * rounds between the two in the same process, so a before/after shares the machine's noise:
 * cells then read "compare → src". `--pairs 24:16,16:24` picks pairs (rates in kHz; `24:16t` is the
 * telephone band, shown as "–" for a source without it).
 *
 *   node --import tsx bench/resample.ts [--frames 20000] [--rounds 5] [--src DIR] [--compare DIR] [--pairs LIST]
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

interface ResamplerLike {
  readonly delay: number;
  process(input: Int16Array): Int16Array;
  processShared?(input: Int16Array): Int16Array;
}
type Band = 'full' | 'telephone';
type ResamplerClass = new (from: number, to: number, options?: { band?: Band }) => ResamplerLike;

const args = process.argv.slice(2);
const opt = (name: string, fallback: string): string => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1]! : fallback;
};
const frames = Number(opt('frames', '20000'));
const rounds = Number(opt('rounds', '5'));
const src = opt('src', resolve(import.meta.dirname, '..'));
const compare = opt('compare', '');
const pairs = opt('pairs', '24:16,24:16t,16:24,8:16,16:8,48:16,16:48')
  .split(',')
  .map((p) => {
    const band: Band = p.endsWith('t') ? 'telephone' : 'full';
    const [from, to] = p.replace(/t$/, '').split(':').map((k) => Math.round(Number(k) * 1000)) as [number, number];
    return { from, to, band };
  });
const load = async (dir: string): Promise<ResamplerClass> =>
  ((await import(pathToFileURL(resolve(dir, 'src/audio/resample.ts')).href)) as { Resampler: ResamplerClass }).Resampler;
/** The sources measured: [compare, src] with --compare, else [src]. */
const classes = compare ? [await load(compare), await load(src)] : [await load(src)];

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

interface Timing {
  best: number;
  median: number;
}

/** µs per frame for each class, rounds alternating between them. */
function measure(from: number, to: number, band: Band, shared: boolean): Timing[] {
  const chunks = input(from);
  const runners = classes.map((Resampler) => {
    const r = new Resampler(from, to, { band });
    return (count: number): number => {
      let sink = 0;
      for (let i = 0; i < count; i++) {
        const chunk = chunks[i % chunks.length]!;
        const out = shared ? r.processShared!(chunk) : r.process(chunk);
        sink += out[0]!;
      }
      return sink;
    };
  });
  for (const run of runners) run(2000); // warm-up: JIT and filter tables
  const times: number[][] = runners.map(() => []);
  for (let k = 0; k < rounds; k++) {
    runners.forEach((run, c) => {
      const start = process.cpuUsage();
      run(frames);
      const used = process.cpuUsage(start);
      times[c]!.push((used.user + used.system) / frames);
    });
  }
  return times.map((t) => {
    t.sort((a, b) => a - b);
    return { best: t[0]!, median: t[Math.floor(t.length / 2)]! };
  });
}

const cell = (ms: Timing[]): string => ms.map((m) => `${m.best.toFixed(2)} (${m.median.toFixed(2)})`).join(' → ');

const sources = compare ? `${compare} → ${src}` : src;
console.log(`# resampler µs CPU per 20 ms frame, best (median) of ${rounds} rounds × ${frames} frames; source ${sources}; node ${process.version}`);
console.log('| pair | process() | processShared() |');
console.log('|---|---|---|');
for (const { from, to, band } of pairs) {
  const label = `${from / 1000} → ${to / 1000} kHz${band === 'telephone' ? ' telephone' : ''}`;
  // A source without the option takes the full band (its delay shows which filter it built).
  const hasBand = band === 'full' || classes.every((R) => new R(from, to, { band }).delay !== new R(from, to).delay);
  if (!hasBand) {
    console.log(`| ${label} | – | – |`);
    continue;
  }
  const plain = measure(from, to, band, false);
  const hasShared = classes.every((Resampler) => typeof new Resampler(from, to).processShared === 'function');
  const shared = hasShared ? cell(measure(from, to, band, true)) : '–';
  console.log(`| ${label} | ${cell(plain)} | ${shared} |`);
}
