/**
 * A caller's RTP stream made up for call-tape tests: G.711 packets of a tone with some arrival
 * jitter, an RFC 4733 key press, and the negotiated media the way sdp-negotiate gives it.
 */
import { digitToEvent, serializeDtmfPayload } from '../../src/media/dtmf.ts';
import { alaw, ulaw } from '../../src/media/codecs/g711.ts';
import { pcma } from '../../src/media/codecs/pcma.ts';
import { pcmu } from '../../src/media/codecs/pcmu.ts';
import type { RtpPacket } from '../../src/media/rtp-packet.ts';
import type { NegotiatedMedia } from '../../src/media/sdp-negotiate.ts';

export function g711Media(law: 'pcmu' | 'pcma' = 'pcmu'): NegotiatedMedia {
  const codec = law === 'pcmu' ? pcmu : pcma;
  return {
    remote: { address: '127.0.0.1', port: 30_000, rtcpPort: 30_001 },
    codec,
    payloadType: codec.payloadType,
    receiveCodecs: new Map([[codec.payloadType, codec]]),
    dtmfPayloadType: 101,
    dtmfClockRate: 8000,
    ptimeMs: 20,
    direction: 'sendrecv',
    remoteHold: false,
    mediaIndex: 0,
  };
}

export interface Arrival {
  atMs: number;
  packet: RtpPacket;
}

/** A deterministic 0..1 sequence (no Math.random in tests that compare runs). */
function jitter(n: number): number {
  const x = Math.sin(n * 12.9898) * 43758.5453;
  return x - Math.floor(x);
}

export class CallerStream {
  readonly arrivals: Arrival[] = [];
  private seq = 1000;
  private ts = 50_000;
  private n = 0;

  constructor(
    private readonly ssrc = 0x1234abcd,
    /** Arrival jitter, ms (0..this late). */
    private readonly jitterMs = 6,
  ) {}

  /** `packets` of 20 ms, tone at `hz` (0 = silence), sent from `startMs` on a 20 ms grid. */
  audio(startMs: number, packets: number, hz: number, law: 'pcmu' | 'pcma' = 'pcmu'): this {
    for (let i = 0; i < packets; i++) {
      const pcm = new Int16Array(160);
      for (let s = 0; s < 160; s++) pcm[s] = hz ? Math.round(8000 * Math.sin((2 * Math.PI * hz * (i * 160 + s)) / 8000)) : 0;
      const payload = (law === 'pcmu' ? ulaw : alaw).encode(pcm);
      this.push(startMs + i * 20, law === 'pcmu' ? 0 : 8, payload, i === 0);
      this.ts = (this.ts + 160) >>> 0;
    }
    return this;
  }

  /** 8 kHz PCM (a fixture) as 20 ms packets from `startMs`, padded to whole packets. */
  pcm(startMs: number, pcm: Int16Array, law: 'pcmu' | 'pcma' = 'pcmu'): this {
    const packets = Math.ceil(pcm.length / 160);
    for (let i = 0; i < packets; i++) {
      const frame = new Int16Array(160);
      frame.set(pcm.subarray(i * 160, i * 160 + 160));
      this.push(startMs + i * 20, law === 'pcmu' ? 0 : 8, (law === 'pcmu' ? ulaw : alaw).encode(frame), i === 0);
      this.ts = (this.ts + 160) >>> 0;
    }
    return this;
  }

  /** RFC 4733: updates every 20 ms, then three end packets; the audio timestamp moves past it. */
  key(startMs: number, digit: string, durationMs = 100): this {
    const event = digitToEvent(digit)!;
    const steps = Math.round(durationMs / 20);
    for (let i = 1; i <= steps; i++) this.push(startMs + (i - 1) * 20, 101, serializeDtmfPayload({ event, end: false, volume: 10, duration: i * 160 }), i === 1);
    for (let i = 0; i < 3; i++) this.push(startMs + (steps - 1) * 20 + 1 + i, 101, serializeDtmfPayload({ event, end: true, volume: 10, duration: steps * 160 }), false);
    this.ts = (this.ts + steps * 160) >>> 0;
    return this;
  }

  /** In arrival order. */
  sorted(): Arrival[] {
    return [...this.arrivals].sort((a, b) => a.atMs - b.atMs);
  }

  private push(sentMs: number, payloadType: number, payload: Uint8Array, marker: boolean): void {
    const atMs = Math.round((sentMs + jitter(this.n++) * this.jitterMs) * 100) / 100;
    this.arrivals.push({
      atMs,
      packet: { payloadType, sequenceNumber: this.seq, timestamp: this.ts, ssrc: this.ssrc, marker, csrcs: [], payload, paddingLength: 0 },
    });
    this.seq = (this.seq + 1) & 0xffff;
  }
}
