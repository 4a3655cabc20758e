/** Tiny `--name value` / `--flag` argument reader shared by the benchmarks. */
export function parseArgs(argv: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    const eq = a.indexOf('=');
    if (eq > 0) out.set(a.slice(2, eq), a.slice(eq + 1));
    else if (argv[i + 1] !== undefined && !argv[i + 1]!.startsWith('--')) out.set(a.slice(2), argv[++i]!);
    else out.set(a.slice(2), 'true');
  }
  return out;
}

export function num(args: Map<string, string>, name: string, def: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = args.get(name);
  if (raw === undefined) return def;
  const v = Number(raw);
  if (!Number.isFinite(v) || v < min || v > max) throw new Error(`--${name} must be a number in [${min}, ${max}]`);
  return v;
}

export function list(args: Map<string, string>, name: string, def: number[], max: number): number[] {
  const raw = args.get(name);
  if (raw === undefined) return def;
  const v = raw.split(',').map(Number);
  if (v.some((x) => !Number.isInteger(x) || x < 1 || x > max)) throw new Error(`--${name} takes integers 1..${max}, comma-separated`);
  return v;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Exits (which kills the engine child through engine-proc's exit hook) if the run overstays. */
export function watchdog(ms: number, what: string): NodeJS.Timeout {
  const t = setTimeout(() => {
    console.error(`${what}: still running after ${Math.round(ms / 1000)} s, giving up`);
    process.exit(2);
  }, ms);
  t.unref();
  return t;
}
