/**
 * A small RTP endpoint for tests and benchmarks: the far end of a call's media. It sends PCM (or
 * a WAV) as paced RTP with a chosen codec (with injected loss and reordering when asked), sends
 * RFC 4733 DTMF, and records every RTP and RTCP packet it receives with its arrival time, so a
 * test can check sequence numbers, timestamps, pacing and decoded audio at the far side.
 *
 * It deliberately reuses the engine's codecs and packet code: what is under test is the session
 * (pacing, jitter, filtering, DTMF plumbing), and those cores have their own unit tests.
 */
import { randomInt } from 'node:crypto';
import dgram from 'node:dgram';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { SAMPLE_RATE, concatPcm, splitPcm, type AudioFrame } from '../../src/audio/frame.ts';
import { resample } from '../../src/audio/resample.ts';
import { readWav, toMono } from '../../src/audio/wav.ts';
import type { Codec } from '../../src/media/codecs/codec.ts';
import { InboundTranscoder, OutboundTranscoder } from '../../src/media/codecs/transcode.ts';
import { planDtmf } from '../../src/media/dtmf.ts';
import { parseRtcp, type RtcpPacket } from '../../src/media/rtcp.ts';
import { parseRtp, serializeRtp, seqDelta } from '../../src/media/rtp-packet.ts';
import type { NegotiatedMedia } from '../../src/media/sdp-negotiate.ts';
import type { MediaDirection } from '../../src/media/sdp.ts';

export interface ReceivedRtp {
  payloadType: number;
  sequenceNumber: number;
  timestamp: number;
  ssrc: number;
  marker: boolean;
  payload: Uint8Array;
  arrivalMs: number;
}

export interface Target {
  address: string;
  port: number;
  rtcpPort?: number;
}

export interface SendOptions {
  codec: Codec;
  payloadType?: number;
  ptimeMs?: number;
  /** Packet indexes (0-based, in send order) never sent: loss. Their seq/timestamp are used up. */
  drop?: ReadonlySet<number>;
  /** Packet indexes i sent after packet i + 1: reordering. */
  swapWithNext?: ReadonlySet<number>;
  signal?: AbortSignal;
}

export class RtpPeer {
  readonly received: ReceivedRtp[] = [];
  readonly rtcpReceived: Array<{ packets: RtcpPacket[]; arrivalMs: number }> = [];
  ssrc = randomInt(1, 0xffff_ffff);
  private seq = randomInt(0, 0xffff);
  private ts = randomInt(0, 0xffff_ffff);
  private target: Target | undefined;

  private constructor(
    readonly rtp: dgram.Socket,
    readonly rtcp: dgram.Socket,
    readonly address: string,
  ) {
    rtp.on('message', (msg) => {
      const parsed = parseRtp(msg);
      if (parsed.ok) this.received.push({ ...parsed.packet, arrivalMs: performance.now() });
    });
    rtcp.on('message', (msg) => {
      const parsed = parseRtcp(msg);
      if (parsed.ok) this.rtcpReceived.push({ packets: parsed.packets, arrivalMs: performance.now() });
    });
  }

  /** Binds RTP and RTCP sockets on ephemeral ports. */
  static async open(address = '127.0.0.1'): Promise<RtpPeer> {
    const bind = async (): Promise<dgram.Socket> => {
      const s = dgram.createSocket('udp4');
      s.on('error', () => undefined);
      s.bind(0, address);
      await once(s, 'listening');
      return s;
    };
    return new RtpPeer(await bind(), await bind(), address);
  }

  get rtpPort(): number {
    return this.rtp.address().port;
  }

  get rtcpPort(): number {
    return this.rtcp.address().port;
  }

  connect(target: Target): void {
    this.target = target;
  }

  /** What the session should be started with to talk to this peer, as an SDP exchange would say. */
  media(codec: Codec, options: { payloadType?: number; ptimeMs?: number; dtmf?: number | false; direction?: MediaDirection; remoteHold?: boolean } = {}): NegotiatedMedia {
    const pt = options.payloadType ?? codec.payloadType;
    const dtmf = options.dtmf === false ? undefined : (options.dtmf ?? 101);
    return {
      remote: { address: this.address, port: this.rtpPort, rtcpPort: this.rtcpPort },
      codec,
      payloadType: pt,
      receiveCodecs: new Map([[pt, codec]]),
      ...(dtmf !== undefined ? { dtmfPayloadType: dtmf, dtmfClockRate: 8000 } : {}),
      ptimeMs: options.ptimeMs ?? 20,
      direction: options.direction ?? 'sendrecv',
      remoteHold: options.remoteHold ?? false,
      mediaIndex: 0,
    };
  }

  sendRaw(bytes: Uint8Array, to: Target | undefined = this.target): void {
    if (!to) throw new Error('RtpPeer: connect() first');
    this.rtp.send(bytes, to.port, to.address);
  }

  sendRtcp(bytes: Uint8Array): void {
    const to = this.target;
    if (!to) throw new Error('RtpPeer: connect() first');
    this.rtcp.send(bytes, to.rtcpPort ?? to.port + 1, to.address);
  }

  /** Sends one packet with the next sequence number; the timestamp is the caller's. */
  sendPacket(payloadType: number, timestamp: number, payload: Uint8Array, marker = false): void {
    this.sendRaw(serializeRtp({ payloadType, sequenceNumber: this.seq, timestamp, ssrc: this.ssrc, marker, payload }));
    this.seq = (this.seq + 1) & 0xffff;
  }

  /** 16 kHz PCM out as paced RTP, one packet per ptime on absolute deadlines. */
  async sendPcm(pcm: Int16Array, options: SendOptions): Promise<number> {
    const ptimeMs = options.ptimeMs ?? 20;
    const pt = options.payloadType ?? options.codec.payloadType;
    const encoder = new OutboundTranscoder(options.codec, ptimeMs);
    const payloads: Buffer[] = [];
    for (const samples of splitPcm(pcm)) payloads.push(...encoder.encode({ samples, sampleRate: SAMPLE_RATE }));
    const tail = encoder.flush();
    if (tail) payloads.push(tail);
    encoder.close();
    const packets = payloads.map((payload, i) => {
      const packet = { seq: this.seq, ts: this.ts, payload, marker: i === 0 };
      this.seq = (this.seq + 1) & 0xffff;
      this.ts = (this.ts + encoder.ticksPerPacket) >>> 0;
      return packet;
    });
    const start = performance.now();
    let held: (typeof packets)[number] | undefined;
    for (let i = 0; i < packets.length; i++) {
      if (options.signal?.aborted) break;
      const wait = start + i * ptimeMs - performance.now();
      if (wait > 0) await sleep(wait);
      const p = packets[i]!;
      const send = (q: typeof p): void =>
        this.sendRaw(serializeRtp({ payloadType: pt, sequenceNumber: q.seq, timestamp: q.ts, ssrc: this.ssrc, marker: q.marker, payload: q.payload }));
      if (options.drop?.has(i)) continue;
      if (options.swapWithNext?.has(i)) {
        held = p;
        continue;
      }
      send(p);
      if (held) send(held);
      held = undefined;
    }
    // Time moves on for the stream while nothing is sent (as a real sender's clock would).
    this.ts = (this.ts + encoder.ticksPerPacket) >>> 0;
    return packets.length;
  }

  async sendWav(path: string, options: SendOptions): Promise<number> {
    const wav = readWav(await readFile(path));
    return this.sendPcm(resample(toMono(wav), wav.sampleRate, SAMPLE_RATE), options);
  }

  /** One RFC 4733 key press, paced like audio; resolves after the last end packet. */
  async sendDtmf(digit: string, options: { payloadType?: number; durationMs?: number; ptimeMs?: number } = {}): Promise<void> {
    const ptimeMs = options.ptimeMs ?? 20;
    const steps = planDtmf(digit, { durationMs: options.durationMs ?? 100, intervalMs: ptimeMs });
    const timestamp = this.ts;
    const start = performance.now();
    for (const step of steps) {
      const wait = start + step.offsetMs - performance.now();
      if (wait > 0) await sleep(wait);
      this.sendPacket(options.payloadType ?? 101, timestamp, step.payload, step.marker);
    }
    this.ts = (this.ts + Math.round(((steps.length + 1) * ptimeMs * 8000) / 1000)) >>> 0;
  }

  /** Received packets of one payload type, in sequence order (what a jitter buffer would play). */
  packets(payloadType?: number, since = -Infinity): ReceivedRtp[] {
    const list = this.received.filter((p) => (payloadType === undefined || p.payloadType === payloadType) && p.arrivalMs >= since);
    const first = list[0];
    if (!first) return [];
    return [...list].sort((a, b) => seqDelta(first.sequenceNumber, a.sequenceNumber) - seqDelta(first.sequenceNumber, b.sequenceNumber));
  }

  /** Decodes what arrived with `payloadType` to 16 kHz PCM. */
  decode(codec: Codec, payloadType = codec.payloadType, since = -Infinity): Int16Array {
    const decoder = new InboundTranscoder(codec);
    const frames: AudioFrame[] = [];
    for (const p of this.packets(payloadType, since)) frames.push(...decoder.decode(p.payload));
    decoder.close();
    return concatPcm(frames.map((f) => f.samples));
  }

  async close(): Promise<void> {
    await Promise.all([closeSocket(this.rtp), closeSocket(this.rtcp)]);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A sine at `freqHz`, `ms` long, 16 kHz, peak `amplitude` of full scale. */
export function sine(freqHz: number, ms: number, amplitude = 0.3, sampleRate = SAMPLE_RATE): Int16Array {
  const n = Math.round((sampleRate * ms) / 1000);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.round(amplitude * 32767 * Math.sin((2 * Math.PI * freqHz * i) / sampleRate));
  return out;
}

/** Frequency of a steady tone from its zero crossings; good to a few Hz on 100+ ms of tone. */
export function dominantFrequency(pcm: Int16Array, sampleRate = SAMPLE_RATE): number {
  let crossings = 0;
  let first = -1;
  let last = -1;
  for (let i = 1; i < pcm.length; i++) {
    if (pcm[i - 1]! < 0 && pcm[i]! >= 0) {
      if (first < 0) first = i;
      last = i;
      crossings++;
    }
  }
  return crossings < 2 ? 0 : ((crossings - 1) * sampleRate) / (last - first);
}

function closeSocket(socket: dgram.Socket): Promise<void> {
  return new Promise((resolve) => {
    try {
      socket.close(() => resolve());
    } catch {
      resolve();
    }
  });
}
