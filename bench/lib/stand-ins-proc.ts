/**
 * Parent side of the provider stand-ins (stand-ins-child.ts): forks them in their own process,
 * talks to them over IPC, and makes sure they die with us (exit hook, IPC disconnect, and a
 * lifetime timer of their own).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { StandInRecord, StandInsOptions } from './stand-ins-child.ts';
import { procCpuMs } from './machine.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const CHILD = fileURLToPath(new URL('./stand-ins-child.ts', import.meta.url));

export interface StandIns {
  pid: number;
  openaiBaseUrl: string;
  openaiKey: string;
  deepgramUrl: string;
  deepgramKey: string;
  /** Every request report since the last call (drains). */
  records(): Promise<StandInRecord[]>;
  setReply(reply: string): Promise<void>;
  stats(): Promise<{ cpuUs: { user: number; system: number }; eldP99Ms: number; eldMaxMs: number; deepgramConnections: number; sttAudioMessages: number }>;
  procCpuMs(): number | undefined;
  close(): Promise<void>;
}

const live = new Set<ChildProcess>();
let hooked = false;

export async function spawnStandIns(o: Partial<StandInsOptions> = {}): Promise<StandIns> {
  if (!hooked) {
    hooked = true;
    process.on('exit', () => {
      for (const c of live) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    });
  }
  const opts: StandInsOptions = {
    llmDelayMs: 0,
    ttsDelayMs: 0,
    tokenMs: 0,
    transcript: 'What are your opening hours?',
    sttFinalMs: 0,
    reply: 'We are open from nine to five.',
    lifetimeMs: 600_000,
    ...o,
  };
  const child = fork(CHILD, [JSON.stringify(opts)], {
    cwd: REPO,
    execArgv: ['--import', 'tsx'],
    env: { PATH: process.env['PATH'], HOME: process.env['HOME'], NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'json',
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  const ready = await new Promise<{ pid: number; openaiBaseUrl: string; openaiKey: string; deepgramUrl: string; deepgramKey: string }>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('stand-ins did not start in time'));
    }, 30_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`stand-ins exited during start-up (code ${code})`));
    });
    child.on('message', function onReady(raw) {
      const msg = raw as { type?: string };
      if (msg.type !== 'ready') return;
      clearTimeout(timer);
      child.off('message', onReady);
      resolve(raw as never);
    });
  });
  let nextId = 1;
  const pending = new Map<number, (v: unknown) => void>();
  child.on('message', (raw) => {
    const msg = raw as { id?: number; result?: unknown };
    if (msg.id === undefined) return;
    pending.get(msg.id)?.(msg.result);
    pending.delete(msg.id);
  });
  const request = <T>(op: string, args: Record<string, unknown> = {}): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (child.exitCode !== null) return reject(new Error('stand-ins have exited'));
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`stand-ins request ${op} timed out`));
      }, 10_000);
      pending.set(id, (v) => {
        clearTimeout(timer);
        resolve(v as T);
      });
      child.send({ id, op, ...args });
    });
  return {
    ...ready,
    records: () => request<StandInRecord[]>('records'),
    setReply: (reply) => request<void>('reply', { reply }),
    stats: () => request('stats'),
    procCpuMs: () => procCpuMs(ready.pid),
    async close() {
      if (child.exitCode !== null) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.send({ id: 0, op: 'close' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await gone;
      clearTimeout(timer);
    },
  };
}
