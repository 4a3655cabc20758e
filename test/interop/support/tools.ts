/**
 * Shared helpers for the interop tests: required binaries (missing ones FAIL, never skip), free
 * loopback ports, temp dirs, test tones and their detection, bounded waits.
 */
import { execFileSync } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { interleaveStereo, writeWav } from '../../../src/audio/wav.ts';

export const LOOPBACK = '127.0.0.1';

/** Throws (so the test fails) with an install hint when a peer binary or Perl module is missing. */
export function requireBinary(name: string, hint = 'it is listed in .ci/apt-packages; run .ci/run or apt-get install it'): string {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error(`interop peer "${name}" is not installed (${hint})`);
  }
}

export function requirePerlModule(module: string, pkg: string): void {
  requireBinary('perl');
  try {
    execFileSync('perl', [`-M${module}`, '-e', '1'], { stdio: 'ignore' });
  } catch {
    throw new Error(`Perl module ${module} is not installed (Debian package ${pkg}, listed in .ci/apt-packages)`);
  }
}

/** A port that was free on 127.0.0.1 for both UDP and TCP a moment ago (the peer binds it next). */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = net.createServer();
      server.once('error', reject);
      server.listen(0, LOOPBACK, () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
    });
    if (await udpFree(port)) return port;
  }
  throw new Error('no free loopback port found');
}

function udpFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = dgram.createSocket('udp4');
    socket.once('error', () => resolve(false));
    socket.bind(port, LOOPBACK, () => socket.close(() => resolve(true)));
  });
}

/**
 * A random block of `size` ports for a peer's RTP (baresip picks inside it and retries busy ones).
 * Blocks are spread over 20000-29999; the in-process engine's pool uses 30000-39999.
 */
export function rtpRange(size = 100): { min: number; max: number } {
  const blocks = Math.floor(10_000 / size);
  const min = 20_000 + Math.floor(Math.random() * blocks) * size;
  return { min, max: min + size - 1 };
}

export function engineRtpRange(size = 200): { minPort: number; maxPort: number } {
  const blocks = Math.floor(10_000 / size);
  const minPort = 30_000 + Math.floor(Math.random() * blocks) * size;
  return { minPort, maxPort: minPort + size - 1 };
}

export function tempDir(prefix: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), `switchboard-interop-${prefix}-`));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** A sine tone, 16-bit mono. */
export function tone(frequencyHz: number, seconds: number, sampleRate = 8000, amplitude = 8000): Int16Array {
  const out = new Int16Array(Math.round(seconds * sampleRate));
  for (let i = 0; i < out.length; i++) out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * frequencyHz * i) / sampleRate));
  return out;
}

/** A tone as a 16-bit WAV; with 2 channels both carry it (baresip runs Opus in stereo). */
export function toneWav(frequencyHz: number, seconds: number, sampleRate = 8000, channels: 1 | 2 = 1): Buffer {
  const mono = tone(frequencyHz, seconds, sampleRate);
  return writeWav({ sampleRate, channels, samples: channels === 1 ? mono : interleaveStereo(mono, mono) });
}

/** Goertzel power of one frequency, normalised so a full-block sine of amplitude A gives about A²/4. */
function goertzel(samples: Int16Array, from: number, length: number, frequencyHz: number, sampleRate: number): number {
  const coeff = 2 * Math.cos((2 * Math.PI * frequencyHz) / sampleRate);
  let s1 = 0;
  let s2 = 0;
  for (let i = from; i < from + length; i++) {
    const s0 = samples[i]! + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  return (s1 * s1 + s2 * s2 - coeff * s1 * s2) / (length * length);
}

export interface ToneReport {
  /** 20 ms blocks analysed. */
  blocks: number;
  /** Blocks whose energy is mostly (> 60%) the expected tone and not near-silent. */
  toneBlocks: number;
  /** Milliseconds of the tone found. */
  toneMs: number;
  /** Overall RMS (0..32767). */
  rms: number;
}

/** How much of `samples` is the tone `frequencyHz`: block by block, tone power against total power. */
export function findTone(samples: Int16Array, frequencyHz: number, sampleRate: number): ToneReport {
  const block = Math.round(sampleRate / 50);
  let blocks = 0;
  let toneBlocks = 0;
  let total = 0;
  for (let at = 0; at + block <= samples.length; at += block) {
    blocks++;
    let energy = 0;
    for (let i = at; i < at + block; i++) energy += samples[i]! * samples[i]!;
    total += energy;
    const meanSquare = energy / block;
    if (meanSquare < 200 * 200) continue; // near silence
    // A sine of amplitude A has mean square A²/2 and Goertzel power about A²/4.
    const ratio = (2 * goertzel(samples, at, block, frequencyHz, sampleRate)) / meanSquare;
    if (ratio > 0.6) toneBlocks++;
  }
  return { blocks, toneBlocks, toneMs: toneBlocks * 20, rms: Math.sqrt(total / Math.max(1, samples.length)) };
}

/**
 * The right audio flowed: at least `minMs` of the tone, and the tone is at least `minShare` of
 * the blocks analysed. Lenient on amounts (a starved CI box drops and delays frames), strict on
 * content: any other frequency, noise or silence scores 0.
 */
export function heardTone(report: ToneReport, minMs = 400, minShare = 0.4): boolean {
  return report.toneMs >= minMs && report.toneBlocks >= minShare * report.blocks;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Resolves when `cond` holds; rejects with `what` after `timeoutMs`. */
export async function waitFor(cond: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

/** Races a promise against a timeout with a clear message. */
export function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Waits (bounded) for UDP `port` on 127.0.0.1 to be free, then fails with `why`: another run of
 * the suite on the same machine may hold a fixed port for a few seconds.
 */
export async function freePortCheck(port: number, why: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await udpFree(port))) {
    if (Date.now() > deadline) throw new Error(`UDP ${LOOPBACK}:${port} is still in use after ${timeoutMs} ms: ${why}`);
    await sleep(250);
  }
}

/**
 * Per-test teardown that works for concurrent tests: register with the test context's
 * onTestFinished; what was pushed is undone in reverse order (peers before our UA), errors ignored.
 */
export function teardown(onTestFinished: (fn: () => Promise<void>) => void): { push(fn: () => Promise<void>): void } {
  const stack: Array<() => Promise<void>> = [];
  onTestFinished(async () => {
    for (const undo of stack.splice(0).reverse()) await undo().catch(() => undefined);
  });
  return { push: (fn) => void stack.push(fn) };
}
