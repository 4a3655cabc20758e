/**
 * The test phone's media leg: raw UDP, PCMU (PT 0) and telephone-event (PT 101) only.
 * Deliberately independent of src/media/rtp-session.ts so the engine's media stack is checked
 * against a second, much simpler implementation. Impairments (loss, reordering) are applied on
 * send, so the engine's jitter buffer and concealment face them.
 */
import dgram from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { ulaw } from '../../src/media/codecs/g711.ts';
import { digitToEvent, parseDtmfPayload, serializeDtmfPayload, eventToDigit } from '../../src/media/dtmf.ts';
import { looksLikeRtcp, parseRtp, serializeRtp } from '../../src/media/rtp-packet.ts';
import { addressType, parseSdp } from '../../src/media/sdp.ts';
import { newMasterKey, parseCryptoAttribute, writeCryptoAttribute } from '../../src/media/srtp/sdes.ts';
import { SrtpSession, type MasterKey } from '../../src/media/srtp/srtp-session.ts';
import { suiteByName, type SrtpSuiteName } from '../../src/media/srtp/suites.ts';

export const PHONE_RATE = 8000;
const SAMPLES = 160; // 20 ms at 8 kHz

export interface Impairments {
  /** Probability that a packet is dropped. */
  loss?: number;
  /** Probability that a packet is held back and sent after the next one. */
  reorder?: number;
}

export class PhoneRtp {
  readonly socket: dgram.Socket;
  /** Everything heard, decoded to 8 kHz PCM in arrival order. */
  readonly heard: number[] = [];
  readonly dtmfHeard: string[] = [];
  packetsReceived = 0;
  packetsSent = 0;
  direction: 'sendrecv' | 'sendonly' | 'inactive' = 'sendrecv';
  impairments: Impairments = {};
  private remote: { address: string; port: number } | undefined;
  private seq = randomBytes(2).readUInt16BE(0);
  private ts = randomBytes(4).readUInt32BE(0);
  private readonly ssrc = randomBytes(4).readUInt32BE(0);
  private timer: NodeJS.Timeout | undefined;
  private source: (() => Int16Array | undefined) | undefined;
  private held: Uint8Array | undefined;
  private lastDtmfTs = -1;
  private version = 1;
  /** SDES-SRTP, when secure() was called: our key in the SDP, theirs from setRemote(). */
  private security: { suite: SrtpSuiteName; profile: string; tag: number; key: MasterKey } | undefined;
  private srtp: SrtpSession | undefined;
  /** Datagrams that failed SRTP checks here (they must not be heard). */
  srtpRefused = 0;
  /** The last SRTP datagrams we sent, as sent (for replay and tampering tests). */
  readonly sentDatagrams: Buffer[] = [];
  /** One datagram the engine sent, as it came off the wire (before unprotect). */
  firstWireDatagram: Buffer | undefined;
  /** The same datagram after unprotect. */
  firstPlainDatagram: Buffer | undefined;

  private constructor(
    socket: dgram.Socket,
    readonly host: string,
    /** The address our SDP names (c=): `host` unless, as behind NAT, media leaves from elsewhere. */
    readonly advertised: string,
  ) {
    this.socket = socket;
    socket.on('message', (msg) => this.onPacket(msg));
  }

  static async open(host: string, advertised = host): Promise<PhoneRtp> {
    const socket = dgram.createSocket(host.includes(':') ? 'udp6' : 'udp4');
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.bind(0, host, resolve));
    return new PhoneRtp(socket, host, advertised);
  }

  get port(): number {
    return this.socket.address().port;
  }

  /** Offer and answer telephone-event (off: a trunk that sends keys in INFO or in the audio). */
  telephoneEvent = true;
  /** Offer (or answer) SDES-SRTP with `suite` on `profile` from now on, with a fresh key of ours. */
  secure(suite: SrtpSuiteName, profile = 'RTP/SAVP', tag = 1): void {
    this.security = { suite, profile, tag, key: newMasterKey(suiteByName(suite)!) };
  }

  /** Whether the far end's SDP gave us its key (the call is SRTP). */
  get secured(): boolean {
    return this.srtp !== undefined;
  }

  /** Sends bytes as they are (a replayed or tampered datagram). */
  sendDatagram(bytes: Uint8Array): void {
    if (this.remote) this.socket.send(bytes, this.remote.port, this.remote.address);
  }

  /** Our SDP (offer or answer; both list exactly what we support). */
  sdp(direction: PhoneRtp['direction'] = this.direction): string {
    this.direction = direction;
    const attr = direction === 'sendrecv' ? 'a=sendrecv' : direction === 'sendonly' ? 'a=sendonly' : 'a=inactive';
    return [
      'v=0',
      `o=phone 4242 ${this.version++} IN ${addressType(this.advertised)} ${this.advertised}`,
      's=test phone',
      `c=IN ${addressType(this.advertised)} ${this.advertised}`,
      't=0 0',
      `m=audio ${this.port} ${this.security?.profile ?? 'RTP/AVP'} 0${this.telephoneEvent ? ' 101' : ''}`,
      ...(this.security
        ? [`a=crypto:${writeCryptoAttribute({ tag: this.security.tag, suite: suiteByName(this.security.suite)!, master: this.security.key })}`]
        : []),
      'a=rtpmap:0 PCMU/8000',
      ...(this.telephoneEvent ? ['a=rtpmap:101 telephone-event/8000', 'a=fmtp:101 0-16'] : []),
      'a=ptime:20',
      attr,
      '',
    ].join('\r\n');
  }

  /** Where our RTP goes (the far end's SDP address and port), once known. */
  get remoteTarget(): { address: string; port: number } | undefined {
    return this.remote ? { ...this.remote } : undefined;
  }

  /** Takes the far end's SDP: where to send. */
  setRemote(sdp: string): void {
    const m = parseSdp(sdp).media.find((x) => x.type === 'audio');
    if (!m?.address) throw new Error('no audio in remote SDP');
    this.remote = { address: m.address, port: m.port };
    if (!this.security) return;
    const theirs = m.cryptos.map(parseCryptoAttribute).find((c) => c.ok && c.crypto.suite.name === this.security!.suite);
    if (theirs?.ok) this.srtp ??= new SrtpSession(theirs.crypto.suite, this.security.key, theirs.crypto.master);
  }

  /** Sends 20 ms frames from `source` until it returns undefined (then silence). */
  play(source: () => Int16Array | undefined): void {
    this.source = source;
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), 20);
  }

  playTone(hz: number, ms: number, amplitude = 8000): void {
    let n = 0;
    const total = (ms / 1000) * PHONE_RATE;
    this.play(() => {
      if (n >= total) return undefined;
      const out = new Int16Array(SAMPLES);
      for (let i = 0; i < SAMPLES; i++, n++) out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * n) / PHONE_RATE));
      return out;
    });
  }

  /** RFC 4733: three packets for the start and body, three end packets (redundancy as carriers do). */
  async sendDtmf(digit: string, durationMs = 100): Promise<void> {
    const event = digitToEvent(digit);
    if (event === undefined || !this.remote) throw new Error(`cannot send DTMF ${digit}`);
    const start = this.ts;
    const steps = Math.max(1, Math.round(durationMs / 20));
    for (let i = 1; i <= steps; i++) {
      this.sendRaw(101, start, serializeDtmfPayload({ event, end: false, volume: 10, duration: i * SAMPLES }), i === 1);
      await sleep(20);
    }
    for (let i = 0; i < 3; i++) this.sendRaw(101, start, serializeDtmfPayload({ event, end: true, volume: 10, duration: steps * SAMPLES }), false);
    this.ts = (this.ts + steps * SAMPLES) >>> 0;
  }

  private tick(): void {
    if (!this.remote || this.direction === 'inactive') return;
    const pcm = this.source?.() ?? new Int16Array(SAMPLES);
    this.sendRaw(0, this.ts, ulaw.encode(pcm), false);
    this.ts = (this.ts + SAMPLES) >>> 0;
  }

  private sendRaw(pt: number, timestamp: number, payload: Uint8Array, marker: boolean): void {
    const remote = this.remote;
    if (!remote) return;
    let bytes: Uint8Array = serializeRtp({ payloadType: pt, sequenceNumber: this.seq, timestamp, ssrc: this.ssrc, marker, payload });
    if (this.srtp) {
      const room = Buffer.alloc(bytes.length + 32);
      room.set(bytes);
      const secured = room.subarray(0, this.srtp.protectRtp(room, bytes.length));
      this.sentDatagrams.push(secured);
      if (this.sentDatagrams.length > 200) this.sentDatagrams.shift();
      bytes = secured;
    }
    this.seq = (this.seq + 1) & 0xffff;
    this.packetsSent++;
    const { loss = 0, reorder = 0 } = this.impairments;
    if (pt === 0 && Math.random() < loss) return;
    if (pt === 0 && !this.held && Math.random() < reorder) {
      this.held = bytes;
      return;
    }
    this.socket.send(bytes, remote.port, remote.address);
    if (this.held) {
      this.socket.send(this.held, remote.port, remote.address);
      this.held = undefined;
    }
  }

  private onPacket(msg: Buffer): void {
    if (this.srtp) {
      if (looksLikeRtcp(msg)) return;
      this.firstWireDatagram ??= Buffer.from(msg);
      const n = this.srtp.unprotectRtp(msg, msg.length);
      if (n < 0) {
        this.srtpRefused++;
        return;
      }
      msg = msg.subarray(0, n);
      this.firstPlainDatagram ??= Buffer.from(msg);
    }
    const parsed = parseRtp(msg);
    if (!parsed.ok) return; // RTCP and junk
    const p = parsed.packet;
    this.packetsReceived++;
    if (p.payloadType === 0) {
      for (const s of ulaw.decode(p.payload)) this.heard.push(s);
    } else if (p.payloadType === 101) {
      const ev = parseDtmfPayload(p.payload);
      if (ev?.end && p.timestamp !== this.lastDtmfTs) {
        this.lastDtmfTs = p.timestamp;
        const d = eventToDigit(ev.event);
        if (d) this.dtmfHeard.push(d);
      }
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private closed = false;

  /** Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stop();
    this.socket.removeAllListeners('message');
    this.socket.close();
  }
}

/** Relative power of `hz` in `pcm` (Goertzel), 0..1 of the total: near 1 for a clean tone. */
export function toneRatio(pcm: ArrayLike<number>, hz: number, rate = PHONE_RATE): number {
  const k = 2 * Math.cos((2 * Math.PI * hz) / rate);
  let s1 = 0;
  let s2 = 0;
  let energy = 0;
  for (let i = 0; i < pcm.length; i++) {
    const x = pcm[i]!;
    const s = x + k * s1 - s2;
    s2 = s1;
    s1 = s;
    energy += x * x;
  }
  if (energy === 0) return 0;
  const power = s1 * s1 + s2 * s2 - k * s1 * s2;
  return (2 * power) / (pcm.length * energy);
}

/**
 * Share of 20 ms frames in `pcm` that carry a clean `hz` tone. Judged per frame because jitter
 * buffer resyncs and concealment shift the phase between frames, which a single long Goertzel
 * window would count against the tone. Pick `hz` a multiple of 50 so it sits on a frame's bin.
 */
export function toneShare(pcm: ArrayLike<number>, hz: number, minRms = 1000): number {
  let frames = 0;
  let tone = 0;
  for (let i = 0; i + 160 <= pcm.length; i += 160) {
    const frame = Array.prototype.slice.call(pcm, i, i + 160) as number[];
    frames++;
    if (rmsOf(frame) >= minRms && toneRatio(frame, hz) > 0.8) tone++;
  }
  return frames === 0 ? 0 : tone / frames;
}

export function rmsOf(pcm: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < pcm.length; i++) sum += pcm[i]! * pcm[i]!;
  return pcm.length === 0 ? 0 : Math.sqrt(sum / pcm.length);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
