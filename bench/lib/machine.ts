/**
 * What the machine is and how busy it is: CPU model, cores, memory, node version, load average,
 * and CPU time of a process or of the whole machine read from /proc (Linux), so the figures can
 * say how much of the CPU went to the engine, to the load generator and to everything else.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

export interface MachineInfo {
  date: string;
  cores: number;
  cpuModel: string;
  memTotalGiB: number;
  node: string;
  kernel: string;
  loadavg: [number, number, number];
}

export function machineInfo(): MachineInfo {
  const cpus = os.cpus();
  return {
    date: new Date().toISOString(),
    cores: os.availableParallelism(),
    cpuModel: cpus[0]?.model ?? 'unknown',
    memTotalGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    kernel: `${os.type()} ${os.release()}`,
    loadavg: loadavg(),
  };
}

export function loadavg(): [number, number, number] {
  const [a = 0, b = 0, c = 0] = os.loadavg();
  return [round2(a), round2(b), round2(c)];
}

const round2 = (v: number) => Math.round(v * 100) / 100;

let clkTck: number | undefined;
function ticksPerSecond(): number {
  if (clkTck === undefined) {
    try {
      clkTck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clkTck = 100;
    }
  }
  return clkTck;
}

/** user+system CPU of a process (all its threads), in ms, from /proc/<pid>/stat. */
export function procCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name (which may contain spaces).
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(rest[11]);
    const stime = Number(rest[12]);
    return ((utime + stime) * 1000) / ticksPerSecond();
  } catch {
    return undefined;
  }
}

/** Resident set of a process in MiB, from /proc/<pid>/status. */
export function procRssMiB(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

export interface SystemCpuSample {
  busy: number;
  total: number;
}

/** Whole-machine CPU jiffies (all cores) from the first line of /proc/stat. */
export function systemCpu(): SystemCpuSample | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal guest guest_nice (guest is inside user)
    const idle = (v[3] ?? 0) + (v[4] ?? 0);
    const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: total - idle, total };
  } catch {
    return undefined;
  }
}

/** Share of the whole machine (all cores = 100 %) that was busy between two samples. */
export function systemBusyPct(a: SystemCpuSample | undefined, b: SystemCpuSample | undefined): number {
  if (!a || !b || b.total === a.total) return NaN;
  return ((b.busy - a.busy) / (b.total - a.total)) * 100;
}

export const cores = (): number => os.availableParallelism();

/**
 * Scheduler accounting of one thread (the main thread when `tid` = pid) from
 * /proc/<pid>/task/<tid>/schedstat: time on a CPU and time runnable but waiting for one. Waiting
 * time is the share of the event loop's delays that other work on the machine caused.
 */
export function threadSchedMs(pid: number, tid = pid): { runMs: number; waitMs: number } | undefined {
  try {
    const [run = 0, wait = 0] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
    return { runMs: run / 1e6, waitMs: wait / 1e6 };
  } catch {
    return undefined;
  }
}

/**
 * Waits (at most `maxS` seconds) until the machine is mostly idle — under `busyPct` % busy over
 * a 3 s sample — so other work on a shared box distorts the figures less. Returns the last
 * sample's busy %, whether or not it got there.
 */
export async function waitForQuiet(maxS: number, busyPct = 25): Promise<number> {
  const until = Date.now() + maxS * 1000;
  let busy = NaN;
  do {
    const a = systemCpu();
    await new Promise((r) => setTimeout(r, 3000));
    busy = systemBusyPct(a, systemCpu());
    if (busy < busyPct) return busy;
  } while (Date.now() < until);
  return busy;
}

/**
 * CPU of every thread of a process from /proc/<pid>/task/<tid>/stat, summed by thread name
 * (`node` is the event loop; V8 platform workers, libuv's pool, worker_threads and native
 * libraries' pools have names of their own), in ms. Names repeated by several threads add up.
 */
export function threadsCpuMs(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        // The engine names its helper threads (sb-rtp-io, sb-denoise, sb-silero: src/util/thread-priority.mjs);
        // Node names none of its own (V8's platform workers, libuv's pool).
        const name = tid === String(pid) ? 'main' : comm === 'node' ? 'other threads' : comm;
        const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const ms = ((Number(rest[11]) + Number(rest[12])) * 1000) / ticksPerSecond();
        out.set(name, (out.get(name) ?? 0) + ms);
      } catch {
        // thread gone
      }
    }
  } catch {
    // process gone
  }
  return out;
}
