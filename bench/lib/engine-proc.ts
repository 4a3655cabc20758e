/**
 * Parent side of the engine under test: forks engine-child.ts with `node --import tsx` on free
 * loopback ports and a throw-away data directory, talks to it over IPC with timeouts, and makes
 * sure it dies with us (exit, SIGINT, SIGTERM, uncaught errors) and never outlives its lifetime.
 */
import { fork, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildOptions, ChildStats } from './engine-child.ts';
import { procCpuMs, procRssMiB } from './machine.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const CHILD = fileURLToPath(new URL('./engine-child.ts', import.meta.url));

export interface EngineProcOptions {
  accounts: number;
  vad?: boolean;
  probe?: boolean;
  /** Per-turn timestamps of pipeline calls (lib/turn-probe.ts). */
  turns?: boolean;
  /** More environment for the engine (provider URLs and keys). */
  env?: Record<string, string>;
  rtpPortMin?: number;
  rtpPortMax?: number;
  lifetimeMs?: number;
  logLevel?: string;
  startTimeoutMs?: number;
  /** Write a V8 CPU profile of the engine (whole run) into this directory. */
  cpuProfDir?: string;
}

export interface EngineProc {
  pid: number;
  httpUrl: string;
  sipPort: number;
  accounts: Array<{ id: number; key: string }>;
  request<T = unknown>(op: string, args?: Record<string, unknown>, timeoutMs?: number): Promise<T>;
  stats(): Promise<ChildStats>;
  /** Memory after a full GC. */
  memory(): Promise<{ rssMiB: number; heapUsedMiB: number; externalMiB: number }>;
  /** CPU of the whole process (every thread) from /proc, ms. */
  procCpuMs(): number | undefined;
  procRssMiB(): number | undefined;
  close(): Promise<void>;
}

const live = new Set<ChildProcess>();
const dataDirs = new Set<string>();
let hooked = false;

function hookCleanup(): void {
  if (hooked) return;
  hooked = true;
  const killAll = () => {
    for (const child of live) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', killAll);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      killAll();
      process.exit(130);
    });
  }
  process.on('uncaughtException', (err) => {
    console.error(err);
    killAll();
    process.exit(1);
  });
  process.on('unhandledRejection', (err) => {
    console.error(err);
    killAll();
    process.exit(1);
  });
}

/** A port free for TCP and UDP on 127.0.0.1 (SIP listens on both). */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = net.createServer();
      srv.once('error', reject);
      srv.listen(0, '127.0.0.1', () => {
        const p = (srv.address() as net.AddressInfo).port;
        srv.close(() => resolve(p));
      });
    });
    const udpOk = await new Promise<boolean>((resolve) => {
      const s = dgram.createSocket('udp4');
      s.once('error', () => resolve(false));
      s.bind(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (udpOk) return port;
  }
  throw new Error('no free port');
}

export async function spawnEngine(o: EngineProcOptions): Promise<EngineProc> {
  hookCleanup();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'switchboard-bench-'));
  dataDirs.add(dataDir);
  const [httpPort, sipPort] = [await freePort(), await freePort()];
  const childOpts: ChildOptions = {
    accounts: o.accounts,
    vad: o.vad ?? false,
    probe: o.probe ?? true,
    turns: o.turns ?? false,
    lifetimeMs: o.lifetimeMs ?? 300_000,
  };
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'],
    HOME: process.env['HOME'],
    NODE_ENV: 'production',
    SWITCHBOARD_DATA_DIR: dataDir,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(httpPort),
    SIP_HOST: '127.0.0.1',
    SIP_PORT: String(sipPort),
    SIP_PUBLIC_HOST: '127.0.0.1',
    RTP_PORT_MIN: String(o.rtpPortMin ?? 40_000),
    RTP_PORT_MAX: String(o.rtpPortMax ?? 41_999),
    LOG_LEVEL: o.logLevel ?? 'warn',
    // The benches drive a few carriers at up to 150 new calls a second to measure the engine's
    // capacity, far past the default per-trunk rate limit (10/s): lift it (unless set for the run).
    SWITCHBOARD_MAX_CALL_RATE_PER_TRUNK: '0',
    // The engine's own switches set for the run (SWITCHBOARD_RTP_THREAD=0, ...) reach it too.
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('SWITCHBOARD_') && k !== 'SWITCHBOARD_DATA_DIR')),
    ...o.env,
  };
  const child = fork(CHILD, [JSON.stringify(childOpts)], {
    cwd: REPO,
    execArgv: ['--import', 'tsx', '--expose-gc', ...(process.env['BENCH_ENGINE_NODE_FLAGS'] ?? '').split(' ').filter(Boolean), ...(o.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${o.cpuProfDir}`] : [])],
    env,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'json',
  });
  live.add(child);
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  let exited = false;
  child.once('exit', (code, signal) => {
    exited = true;
    live.delete(child);
    rmSync(dataDir, { recursive: true, force: true });
    dataDirs.delete(dataDir);
    for (const p of pending.values()) {
      clearTimeout(p.timer);
      p.reject(new Error(`engine exited (code ${code}, signal ${signal})`));
    }
    pending.clear();
  });

  const ready = await new Promise<{ httpUrl: string; sipPort: number; pid: number; accounts: Array<{ id: number; key: string }> }>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('engine did not start in time'));
    }, o.startTimeoutMs ?? 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`engine exited during start-up (code ${code})`));
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
  child.on('message', (raw) => {
    const msg = raw as { id?: number; ok?: boolean; result?: unknown; error?: string };
    if (msg.id === undefined) return;
    const p = pending.get(msg.id);
    if (!p) return;
    pending.delete(msg.id);
    clearTimeout(p.timer);
    if (msg.ok) p.resolve(msg.result);
    else p.reject(new Error(msg.error ?? 'engine request failed'));
  });

  const request = <T>(op: string, args: Record<string, unknown> = {}, timeoutMs = 10_000): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (exited) return reject(new Error('engine has exited'));
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`engine request ${op} timed out`));
      }, timeoutMs);
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      child.send({ id, op, ...args });
    });

  return {
    pid: ready.pid,
    httpUrl: ready.httpUrl,
    sipPort: ready.sipPort,
    accounts: ready.accounts,
    request,
    stats: () => request<ChildStats>('stats'),
    memory: () => request('memory'),
    procCpuMs: () => procCpuMs(ready.pid),
    procRssMiB: () => procRssMiB(ready.pid),
    async close() {
      if (exited) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      await request('close', {}, 15_000).catch(() => undefined);
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await gone;
      clearTimeout(timer);
    },
  };
}

/** One text scrape of the engine's GET /metrics. */
export async function scrapeMetrics(httpUrl: string): Promise<Map<string, number>> {
  const res = await fetch(`${httpUrl}/metrics`, { signal: AbortSignal.timeout(5_000) });
  const text = await res.text();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (m) out.set(m[1]! + (m[2] ?? ''), Number(m[3]));
  }
  return out;
}
