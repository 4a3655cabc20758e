/**
 * The load generator's phones: SIP through our UserAgent (the test phone's signalling stack, with
 * the RFC 3261 default timers a carrier would use), media through a lean PCMU leg per call.
 *
 * Why not test/support/test-phone-rtp.ts as is: it decodes and keeps every sample heard (8000
 * numbers per second per call, unbounded) and runs a setInterval per call. At 200 calls that
 * would make the load generator, not the engine, the bottleneck. The legs here send pre-encoded
 * speech on one shared deadline clock (calls spread over four 5 ms phases, as traffic from a
 * trunk is), and on receive only read the RTP header and timestamp the arrival.
 *
 * Receive-side measurements per window (between `startWindow()` and `endWindow()`):
 * - frame-interval error: |arrival gap − 20 ms × RTP timestamp step| between consecutive packets;
 * - grid error: per call, arrival − RTP-timestamp time, minus that call's smallest such offset
 *   in the window (how late each packet is against an ideal 20 ms grid);
 * - loss: packets expected from the sequence numbers vs received.
 * Both include this process's own event-loop delay, which is measured and reported alongside.
 */
import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { readWav } from '../../src/audio/wav.ts';
import { resample } from '../../src/audio/resample.ts';
import { ulaw } from '../../src/media/codecs/g711.ts';
import { parseSdp } from '../../src/media/sdp.ts';
import { newMasterKey, parseCryptoAttribute, writeCryptoAttribute } from '../../src/media/srtp/sdes.ts';
import { srtpCipherFactory } from '../../src/media/srtp/srtp-media.ts';
import { SrtpSession, type MasterKey } from '../../src/media/srtp/srtp-session.ts';
import { suiteByName, type SrtpSuiteName } from '../../src/media/srtp/suites.ts';
import type { Dialog } from '../../src/sip/dialog.ts';
import { InviteFailedError } from '../../src/sip/user-agent-outgoing-invite.ts';
import { UserAgent } from '../../src/sip/user-agent.ts';
import { Histogram } from './stats.ts';

const FRAME_MS = 20;
const PHASES = 4;

/** 20 ms PCMU payloads of looped speech and noise fixtures (8 kHz), encoded once. */
function loadPayloads(): Buffer[] {
  const names = ['utt-address', 'noise-street', 'utt-phone-number', 'silence-roomtone', 'utt-opening-hours'];
  const out: Buffer[] = [];
  for (const name of names) {
    const wav = readWav(readFileSync(fileURLToPath(new URL(`../../fixtures/audio/${name}.wav`, import.meta.url))));
    const pcm8 = resample(wav.samples, wav.sampleRate, 8000);
    for (let i = 0; i + 160 <= pcm8.length; i += 160) out.push(ulaw.encode(pcm8.subarray(i, i + 160)));
  }
  return out;
}

export class ReceiveWindow {
  readonly interval = new Histogram(1000, 0.01);
  readonly grid = new Histogram(10_000, 0.01);
  expected = 0;
  received = 0;
  audible = 0;
}

export class MediaLeg {
  remote: { address: string; port: number } | undefined;
  active = false;
  phase = 0;
  sent = 0;
  received = 0;
  /** Packets received whose payload is not PCMU digital silence (our own speech echoed back). */
  audible = 0;
  /** Replaces the looped fixtures with a script of its own (lib/conversation.ts). */
  source: (() => Buffer) | undefined;
  /** Every PCMU payload received (after the 12-byte header), as it arrives. */
  onAudio: ((payload: Buffer) => void) | undefined;
  private seq = (Math.random() * 0xffff) | 0;
  private ts = (Math.random() * 0xffffffff) >>> 0;
  private readonly ssrc = (Math.random() * 0xffffffff) >>> 0;
  private cursor: number;
  /** SDES-SRTP on this leg (secure() before the INVITE): our key, then the session once answered. */
  private security: { suite: SrtpSuiteName; key: MasterKey } | undefined;
  private srtp: SrtpSession | undefined;
  /** Inbound datagrams that failed SRTP checks. */
  srtpRefused = 0;
  // receive state
  private lastArrival = -1;
  private lastTs = 0;
  private firstExt = -1;
  private maxExt = -1;
  private cycles = 0;
  private lastSeq = -1;
  private tsBase = -1;
  private tsUnwrapHigh = 0;
  private tsPrevRaw = 0;
  private windowOffsets: number[] | undefined;
  private windowStartExt = -1;
  private windowStartReceived = 0;

  private constructor(
    readonly socket: dgram.Socket,
    readonly host: string,
    private readonly gen: LoadGen,
  ) {
    this.cursor = (Math.random() * gen.payloads.length) | 0;
    socket.on('message', (msg) => this.onPacket(msg, performance.now()));
  }

  static async open(host: string, gen: LoadGen): Promise<MediaLeg> {
    const socket = dgram.createSocket('udp4');
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.bind(0, host, resolve));
    return new MediaLeg(socket, host, gen);
  }

  get port(): number {
    return this.socket.address().port;
  }

  /** Offer SDES-SRTP (RTP/SAVP) with `suite`; call before sdp(). */
  secure(suite: SrtpSuiteName): void {
    this.security = { suite, key: newMasterKey(suiteByName(suite)!) };
  }

  sdp(): string {
    const sec = this.security;
    return [
      'v=0',
      `o=bench 1 1 IN IP4 ${this.host}`,
      's=bench',
      `c=IN IP4 ${this.host}`,
      't=0 0',
      `m=audio ${this.port} ${sec ? 'RTP/SAVP' : 'RTP/AVP'} 0`,
      'a=rtpmap:0 PCMU/8000',
      ...(sec ? [`a=crypto:${writeCryptoAttribute({ tag: 1, suite: suiteByName(sec.suite)!, master: sec.key })}`] : []),
      'a=ptime:20',
      'a=sendrecv',
      '',
    ].join('\r\n');
  }

  async start(remoteSdp: string): Promise<void> {
    const m = parseSdp(remoteSdp).media.find((x) => x.type === 'audio');
    if (!m?.address) throw new Error('no audio in answer');
    this.remote = { address: m.address, port: m.port };
    if (this.security) {
      const theirs = m.cryptos.map(parseCryptoAttribute).find((c) => c.ok);
      if (!theirs?.ok) throw new Error('SRTP offered but the answer has no usable crypto line');
      this.srtp = new SrtpSession(theirs.crypto.suite, this.security.key, theirs.crypto.master, srtpCipherFactory());
    }
    // Connected: no per-send address lookup, and only the engine's RTP port can reach us.
    await new Promise<void>((resolve) => this.socket.connect(m.port, m.address, resolve));
    this.active = true;
  }

  sendOne(): void {
    if (!this.active) return;
    let payload: Buffer;
    if (this.source) payload = this.source();
    else {
      payload = this.gen.payloads[this.cursor]!;
      this.cursor = (this.cursor + 1) % this.gen.payloads.length;
    }
    const b = Buffer.allocUnsafe(12 + payload.length + (this.srtp ? 16 : 0));
    b[0] = 0x80;
    b[1] = this.sent === 0 ? 0x80 : 0x00;
    b.writeUInt16BE(this.seq, 2);
    b.writeUInt32BE(this.ts, 4);
    b.writeUInt32BE(this.ssrc, 8);
    payload.copy(b, 12);
    this.seq = (this.seq + 1) & 0xffff;
    this.ts = (this.ts + 160) >>> 0;
    this.sent++;
    this.socket.send(this.srtp ? b.subarray(0, this.srtp.protectRtp(b, 12 + payload.length)) : b);
  }

  private onPacket(msg: Buffer, now: number): void {
    if (this.srtp) {
      if ((msg[1]! & 0x7f) !== 0) return; // SRTCP and others
      const n = this.srtp.unprotectRtp(msg, msg.length);
      if (n < 0) {
        this.srtpRefused++;
        return;
      }
      msg = msg.subarray(0, n);
    }
    if (msg.length < 12 || (msg[0]! & 0xc0) !== 0x80 || (msg[1]! & 0x7f) !== 0) return;
    this.received++;
    this.onAudio?.(msg.subarray(12));
    const seq = msg.readUInt16BE(2);
    const ts = msg.readUInt32BE(4);
    // Extended sequence number (RFC 3550 A.1, simplified: no reordering on loopback).
    if (this.lastSeq >= 0 && seq < this.lastSeq && this.lastSeq - seq > 0x8000) this.cycles += 0x10000;
    this.lastSeq = seq;
    const ext = this.cycles + seq;
    if (this.firstExt < 0) this.firstExt = ext;
    if (ext > this.maxExt) this.maxExt = ext;
    // Unwrapped timestamp in ms since the first packet.
    if (this.tsBase < 0) {
      this.tsBase = ts;
      this.tsPrevRaw = ts;
    }
    if (ts < this.tsPrevRaw && this.tsPrevRaw - ts > 0x80000000) this.tsUnwrapHigh += 0x1_0000_0000;
    this.tsPrevRaw = ts;
    const tsMs = (this.tsUnwrapHigh + ts - this.tsBase) / 8;
    const w = this.gen.window;
    if (w) {
      w.received++;
      if (msg[12 + 40] !== 0xff || msg[12 + 120] !== 0xff) w.audible++;
      if (this.lastArrival >= 0) {
        const steps = ((ts - this.lastTs) >>> 0) / 160;
        if (steps >= 1 && steps < 50) w.interval.record(Math.abs(now - this.lastArrival - steps * FRAME_MS));
      }
      this.windowOffsets?.push(now - tsMs);
    }
    this.lastArrival = now;
    this.lastTs = ts;
  }

  beginWindow(): void {
    this.windowOffsets = [];
    this.windowStartExt = this.maxExt;
    this.windowStartReceived = this.received;
  }

  endWindow(w: ReceiveWindow): void {
    const offsets = this.windowOffsets ?? [];
    this.windowOffsets = undefined;
    if (offsets.length > 0) {
      let min = Infinity;
      for (const o of offsets) if (o < min) min = o;
      for (const o of offsets) w.grid.record(o - min);
    }
    if (this.windowStartExt >= 0 && this.maxExt > this.windowStartExt) w.expected += this.maxExt - this.windowStartExt;
    else if (this.windowStartExt < 0 && this.maxExt >= 0) w.expected += this.received - this.windowStartReceived;
  }

  stop(): void {
    this.active = false;
  }

  close(): void {
    this.active = false;
    this.socket.removeAllListeners('message');
    try {
      this.socket.close();
    } catch {
      // already closed
    }
  }
}

export interface Carrier {
  host: string;
  ua: UserAgent;
}

export interface PlacedCall {
  carrier: Carrier;
  leg: MediaLeg;
  dialog: Dialog | undefined;
  setupMs: number;
  status: number;
  /** Set when the engine ended the dialog before we hung up. */
  endedEarly: string | undefined;
}

export class LoadGen {
  readonly payloads = loadPayloads();
  readonly legs = new Set<MediaLeg>();
  readonly eld = monitorEventLoopDelay({ resolution: 5 });
  window: ReceiveWindow | undefined;
  /** Send ticks that ran more than 5 ms behind their deadline. */
  lateTicks = 0;
  private timer: NodeJS.Timeout | undefined;
  private t0 = 0;
  private tick = 0;
  private nextPhase = 0;
  private readonly phases: Array<Set<MediaLeg>> = Array.from({ length: PHASES }, () => new Set());

  constructor() {
    this.eld.enable();
  }

  static async carrier(host: string): Promise<Carrier> {
    const ua = await UserAgent.create({ host, port: 0, transports: ['udp'], userName: 'bench', userAgent: 'switchboard-bench' });
    return { host, ua };
  }

  /** One shared deadline clock for every leg: tick k at t0 + k × 5 ms serves phase k mod 4. */
  startClock(): void {
    if (this.timer) return;
    this.t0 = performance.now();
    this.tick = 0;
    const step = FRAME_MS / PHASES;
    const run = () => {
      const now = performance.now();
      let due = Math.floor((now - this.t0) / step) - this.tick + 1;
      if (due > PHASES * 3) {
        // More than three frames behind: skip rather than burst (as the engine's pacer does).
        this.tick += due - 1;
        due = 1;
      }
      if (now - (this.t0 + this.tick * step) > 5) this.lateTicks++;
      for (let i = 0; i < due; i++) {
        for (const leg of this.phases[this.tick % PHASES]!) leg.sendOne();
        this.tick++;
      }
      this.timer = setTimeout(run, Math.max(0, this.t0 + this.tick * step - performance.now()));
    };
    this.timer = setTimeout(run, step);
  }

  stopClock(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  async openLeg(host: string): Promise<MediaLeg> {
    const leg = await MediaLeg.open(host, this);
    leg.phase = this.nextPhase++ % PHASES;
    this.legs.add(leg);
    return leg;
  }

  private schedule(leg: MediaLeg): void {
    this.phases[leg.phase]!.add(leg);
  }

  private unschedule(leg: MediaLeg): void {
    this.phases[leg.phase]!.delete(leg);
  }

  /** INVITE → 200 (ACK sent by the UA) → media running. Never throws: the status says how it went. */
  async place(carrier: Carrier, target: string, timeoutMs = 10_000, prepare?: (leg: MediaLeg) => void): Promise<PlacedCall> {
    const leg = await this.openLeg(carrier.host);
    // Before any packet can go out: a scripted caller takes over the leg's payloads here.
    prepare?.(leg);
    const call: PlacedCall = { carrier, leg, dialog: undefined, setupMs: NaN, status: 0, endedEarly: undefined };
    const t0 = performance.now();
    const invite = carrier.ua.invite(target, leg.sdp());
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
    try {
      const r = await Promise.race([invite.result, timeout]);
      if (r === 'timeout') {
        invite.cancel();
        call.status = 408;
        return call;
      }
      call.setupMs = performance.now() - t0;
      call.dialog = r;
      call.status = 200;
      r.once('ended', ({ reason }) => {
        if (reason !== 'local-bye') call.endedEarly = reason;
        leg.stop();
        this.unschedule(leg);
      });
      if (!r.remoteSdp) throw new Error('200 without SDP');
      await leg.start(r.remoteSdp);
      this.schedule(leg);
    } catch (err) {
      call.status = err instanceof InviteFailedError ? err.status : 500;
    } finally {
      clearTimeout(timer);
      // Swallow a late rejection of the raced INVITE.
      invite.result.catch(() => undefined);
    }
    if (call.status !== 200) this.release(leg);
    return call;
  }

  /** BYE; resolves with the final status (0 when there was no dialog, -1 on a timeout). */
  async hangup(call: PlacedCall, timeoutMs = 10_000): Promise<number> {
    call.leg.stop();
    this.unschedule(call.leg);
    let status = 0;
    if (call.dialog && !call.dialog.isEnded) {
      let timer: NodeJS.Timeout | undefined;
      const res = await Promise.race([
        call.dialog.bye(),
        new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs))),
      ]);
      clearTimeout(timer);
      status = res === 'timeout' ? -1 : (res?.status ?? 0);
    }
    this.release(call.leg);
    return status;
  }

  private release(leg: MediaLeg): void {
    this.unschedule(leg);
    this.legs.delete(leg);
    leg.close();
  }

  startWindow(): ReceiveWindow {
    this.window = new ReceiveWindow();
    for (const leg of this.legs) leg.beginWindow();
    this.eld.reset();
    this.lateTicks = 0;
    return this.window;
  }

  endWindow(): ReceiveWindow {
    const w = this.window ?? new ReceiveWindow();
    for (const leg of this.legs) leg.endWindow(w);
    this.window = undefined;
    return w;
  }

  async close(carriers: Carrier[]): Promise<void> {
    this.stopClock();
    for (const leg of this.legs) leg.close();
    this.legs.clear();
    this.eld.disable();
    await Promise.all(carriers.map((c) => c.ua.close()));
  }
}

/** Creates `count` carriers on 127.0.0.11, .12, … each with an `ip` trunk of its own account. */
export async function provisionCarriers(
  engine: { httpUrl: string; accounts: Array<{ id: number; key: string }>; request: (op: string, args?: Record<string, unknown>) => Promise<unknown> },
  count: number,
  opts: { assistant?: boolean; pipeline?: Record<string, unknown>; srtp?: 'off' | 'offered' | 'required' } = {},
): Promise<Array<Carrier & { number: string; accountId: number; apiKey: string; assistantId?: number }>> {
  const out: Array<Carrier & { number: string; accountId: number; apiKey: string; assistantId?: number }> = [];
  for (let k = 0; k < count; k++) {
    const account = engine.accounts[k];
    if (!account) throw new Error(`engine has no account ${k + 1}`);
    const host = `127.0.0.${11 + k}`;
    const number = `+1415555${String(100 + k).padStart(4, '0')}`;
    const res = await fetch(`${engine.httpUrl}/api/user/sip-trunks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        sip_trunk_type: 'number',
        phone_number: number,
        sip_username: `bench${k}`,
        sip_password: 'bench-secret',
        sip_address: host,
        sip_calling_format: '+e164',
        inbound_authorization_type: 'ip',
        allowed_inbound_ips: [host],
        country_code: 'US',
        ...(opts.srtp ? { srtp: opts.srtp } : {}),
      }),
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await res.json()) as { data?: { phone_number_id: number } };
    if (res.status !== 201 || !body.data) throw new Error(`trunk for ${host}: ${res.status} ${JSON.stringify(body)}`);
    if (opts.assistant) await engine.request('assistant', { accountId: account.id, phoneNumberId: body.data.phone_number_id });
    let assistantId: number | undefined;
    if (opts.pipeline) {
      // A pipeline assistant made the way a user makes one (POST /user/assistant), on this number.
      const a = await fetch(`${engine.httpUrl}/api/user/assistant`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'inbound', mode: 'pipeline', phone_number_id: body.data.phone_number_id, ...opts.pipeline }),
        signal: AbortSignal.timeout(10_000),
      });
      if (a.status !== 201) throw new Error(`assistant for ${host}: ${a.status} ${await a.text()}`);
      assistantId = ((await a.json()) as { data: { id: number } }).data.id;
    }
    out.push({ ...(await LoadGen.carrier(host)), number, accountId: account.id, apiKey: account.key, ...(assistantId !== undefined ? { assistantId } : {}) });
  }
  return out;
}
