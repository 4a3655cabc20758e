/**
 * The engine's unit of audio: 20 ms of 16 kHz mono signed 16-bit PCM. Everything between the
 * codec edge and the provider edge moves these, so the shape stays deliberately minimal.
 */
export const SAMPLE_RATE = 16_000;
export const FRAME_MS = 20;
export const FRAME_SAMPLES = (SAMPLE_RATE * FRAME_MS) / 1000; // 320

export interface AudioFrame {
  /** Owned by the frame: producers never reuse or mutate it after handing it on. */
  readonly samples: Int16Array;
  readonly sampleRate: number;
}

/** Slab size for frame samples; arrays above an eighth of it get their own buffer. */
const SLAB_BYTES = 64 * 1024;
let slab = new ArrayBuffer(SLAB_BYTES);
let slabUsed = 0;

/**
 * A copy of `src` for a frame to own. Frames take their samples from shared 64 KiB slabs (a view
 * each) rather than an ArrayBuffer each: at 50 frames a second per call, an ArrayBuffer per frame
 * left the young-generation GC thousands of array-buffer extensions to sweep per scavenge, the
 * longest part of the pauses that delay every call's packets. A slab stays alive while any frame
 * on it does (a frame kept for long holds at most 64 KiB). The view never shares bytes with another
 * frame, but its `buffer` is the slab: code reading it must honour `byteOffset`/`byteLength`
 * (everything in src/ does) and must never transfer it to another thread.
 */
export function copySamples(src: Int16Array): Int16Array {
  const out = zeroSamples(src.length);
  out.set(src);
  return out;
}

/** `length` zero samples for a frame to own, from the same slabs as copySamples. */
export function zeroSamples(length: number): Int16Array {
  const bytes = length * 2;
  if (bytes > SLAB_BYTES / 8) return new Int16Array(length);
  if (slabUsed + bytes > SLAB_BYTES) {
    slab = new ArrayBuffer(SLAB_BYTES);
    slabUsed = 0;
  }
  // A slab's bytes are written once, by the view they are handed to: the rest are still zero.
  const out = new Int16Array(slab, slabUsed, length);
  // 8-byte steps keep every view aligned for any typed array over the same slab.
  slabUsed += (bytes + 7) & ~7;
  return out;
}

/** Samples in one frame of `frameMs` at `sampleRate`. */
export function samplesPerFrame(sampleRate: number, frameMs = FRAME_MS): number {
  return Math.round((sampleRate * frameMs) / 1000);
}

export function silenceFrame(sampleRate = SAMPLE_RATE, frameMs = FRAME_MS): AudioFrame {
  return { samples: zeroSamples(samplesPerFrame(sampleRate, frameMs)), sampleRate };
}

/** Root mean square, normalised to full scale (0..1). */
export function rms(samples: Int16Array): number {
  if (samples.length === 0) return 0;
  let sum = 0;
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i]!;
    sum += s * s;
  }
  return Math.sqrt(sum / samples.length) / 32768;
}

/** Level in dBFS (a full-scale square wave is 0 dBFS); digital silence is -Infinity. */
export function rmsDbfs(samples: Int16Array): number {
  const r = rms(samples);
  return r === 0 ? -Infinity : 20 * Math.log10(r);
}

export function concatPcm(parts: readonly Int16Array[]): Int16Array {
  let total = 0;
  for (const p of parts) total += p.length;
  const out = new Int16Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Cut PCM into whole frames. A trailing partial frame is zero-padded when `pad` is true and
 * dropped otherwise (use a FrameChunker when more audio will follow).
 */
export function splitPcm(pcm: Int16Array, frameSamples = FRAME_SAMPLES, pad = true): Int16Array[] {
  const out: Int16Array[] = [];
  let at = 0;
  for (; at + frameSamples <= pcm.length; at += frameSamples) out.push(pcm.slice(at, at + frameSamples));
  if (pad && at < pcm.length) {
    const last = new Int16Array(frameSamples);
    last.set(pcm.subarray(at));
    out.push(last);
  }
  return out;
}

/**
 * Turns PCM chunks of any length (TTS output, decoded packets, resampler output) into exact
 * frames. The remainder is kept across pushes, so chunk boundaries never produce short frames.
 */
export class FrameChunker {
  private readonly pendingBuf: Int16Array;
  private fill = 0;

  constructor(
    readonly frameSamples = FRAME_SAMPLES,
    readonly sampleRate = SAMPLE_RATE,
  ) {
    this.pendingBuf = new Int16Array(frameSamples);
  }

  /** Samples held back waiting for a full frame. */
  get pending(): number {
    return this.fill;
  }

  push(pcm: Int16Array): AudioFrame[] {
    const out: AudioFrame[] = [];
    this.pushInto(pcm, out);
    return out;
  }

  /**
   * As push(), appending the frames to `out` (returns how many): a per-packet caller with a queue
   * of its own then builds no array per call. Each frame's samples are a fresh copy, as always.
   */
  pushInto(pcm: Int16Array, out: AudioFrame[]): number {
    const before = out.length;
    let at = 0;
    if (this.fill > 0) {
      const take = Math.min(this.frameSamples - this.fill, pcm.length);
      this.pendingBuf.set(pcm.subarray(0, take), this.fill);
      this.fill += take;
      at = take;
      if (this.fill < this.frameSamples) return 0;
      out.push({ samples: copySamples(this.pendingBuf), sampleRate: this.sampleRate });
      this.fill = 0;
    }
    for (; at + this.frameSamples <= pcm.length; at += this.frameSamples) {
      out.push({ samples: copySamples(pcm.subarray(at, at + this.frameSamples)), sampleRate: this.sampleRate });
    }
    if (at < pcm.length) {
      this.pendingBuf.set(pcm.subarray(at), 0);
      this.fill = pcm.length - at;
    }
    return out.length - before;
  }

  /** Emit what is held back as a zero-padded frame (end of an utterance), or nothing. */
  flush(): AudioFrame | undefined {
    if (this.fill === 0) return undefined;
    const samples = new Int16Array(this.frameSamples);
    samples.set(this.pendingBuf.subarray(0, this.fill));
    this.fill = 0;
    return { samples, sampleRate: this.sampleRate };
  }

  /** Drop what is held back (barge-in: the rest of the utterance is no longer wanted). */
  reset(): void {
    this.fill = 0;
  }
}

/** Stream adapter over FrameChunker; the final partial frame is zero-padded. */
export async function* toFrames(
  chunks: AsyncIterable<Int16Array>,
  frameSamples = FRAME_SAMPLES,
  sampleRate = SAMPLE_RATE,
): AsyncIterable<AudioFrame> {
  const chunker = new FrameChunker(frameSamples, sampleRate);
  for await (const chunk of chunks) yield* chunker.push(chunk);
  const last = chunker.flush();
  if (last) yield last;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Little-endian PCM16 bytes → samples. Copies, because a Buffer's byteOffset is often odd
 * (pooled slices) and an Int16Array view would throw or alias memory the caller reuses. On a
 * little-endian host the bytes already are the samples: one byte copy (streamed TTS audio comes
 * through here, where reading sample by sample was 1 % of the event loop at 100 calls).
 */
export function pcmFromBytes(bytes: Uint8Array): Int16Array {
  const n = bytes.length >> 1;
  const out = new Int16Array(n);
  if (LITTLE_ENDIAN) {
    new Uint8Array(out.buffer, 0, n * 2).set(bytes.subarray(0, n * 2));
    return out;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, n * 2);
  for (let i = 0; i < n; i++) out[i] = view.getInt16(i * 2, true);
  return out;
}

/** Samples → little-endian PCM16 bytes (a copy, so the frame stays owned by its producer). */
export function pcmToBytes(samples: Int16Array): Buffer {
  const out = Buffer.allocUnsafe(samples.length * 2);
  if (LITTLE_ENDIAN) {
    // The samples' own bytes are already little-endian PCM16: one copy.
    out.set(new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength));
  } else {
    for (let i = 0; i < samples.length; i++) out.writeInt16LE(samples[i]!, i * 2);
  }
  return out;
}
