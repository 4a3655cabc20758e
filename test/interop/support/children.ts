/**
 * Child processes started by the interop harnesses: spawned in their own process group, killed
 * (group-wide, by pid) on stop and, as a last resort, when the test worker exits.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

const live = new Set<ChildProcess>();
let hooked = false;

function hook(): void {
  if (hooked) return;
  hooked = true;
  process.once('exit', () => {
    for (const child of live) killGroup(child, 'SIGKILL');
  });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

export interface Child {
  process: ChildProcess;
  /** stdout and stderr interleaved, for failure messages. */
  readonly output: string;
  /** Resolves once the process has exited and its output has been read to the end. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** True once `exited` has resolved. */
  readonly done: boolean;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

export function startChild(command: string, args: string[], options: SpawnOptions & { onLine?: (line: string, stream: 'stdout' | 'stderr') => void } = {}): Child {
  hook();
  const { onLine, ...spawnOptions } = options;
  const proc = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true, ...spawnOptions });
  live.add(proc);
  let output = '';
  // 'close', not 'exit': it comes after the last stdout/stderr data, so no output is missed.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.once('close', (code, signal) => {
      live.delete(proc);
      resolve({ code, signal });
    });
    proc.once('error', (err) => {
      output += `\n[spawn error] ${err.message}\n`;
      live.delete(proc);
      resolve({ code: -1, signal: null });
    });
  });
  for (const stream of ['stdout', 'stderr'] as const) {
    let pending = '';
    proc[stream]?.setEncoding('utf8');
    proc[stream]?.on('data', (chunk: string) => {
      output += chunk;
      if (output.length > 200_000) output = output.slice(-100_000);
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) onLine?.(line.replace(/\r$/, ''), stream);
    });
  }
  let done = false;
  void exited.then(() => {
    done = true;
  });
  return {
    process: proc,
    get output() {
      return output;
    },
    get done() {
      return done;
    },
    exited,
    async stop(graceMs = 2000) {
      if (!live.has(proc)) return;
      killGroup(proc, 'SIGTERM');
      const timer = setTimeout(() => killGroup(proc, 'SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
