/**
 * baresip (Debian's 1.0.0) as a headless interop peer.
 *
 * Config dir per instance (-f DIR): SIP on 127.0.0.1:<free port> (UDP), `net_interface 127.0.0.1`
 * so SDP carries the loopback address, audio source = `aufile` (a WAV we generate; baresip ends
 * the call with a BYE when the file runs out, which is how the calls it places end), audio
 * player = `aubridge` (a null device; 1.0.0's aufile has no player), and the `sndfile` filter
 * dumping what it decodes (what it heard from us) to `<dir>/rec/dump-*-dec.wav`. Commands and
 * events go through `ctrl_tcp` (netstring-framed JSON) with `menu` providing the commands
 * (dial, hangup, quit). The account has `answermode=auto`, so calls to it are answered at once.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { readWav, toMono, type WavAudio } from '../../../src/audio/wav.ts';
import { startChild, type Child } from './children.ts';
import { freePort, LOOPBACK, requireBinary, rtpRange, sleep, tempDir, within } from './tools.ts';

const MODULE_PATH = '/usr/lib/baresip/modules';

export interface BaresipOptions {
  /** WAV (16-bit mono) baresip sends; when it ends baresip hangs up. */
  sourceWav: Buffer;
  user?: string;
  /** Codecs offered/accepted, in order (names from baresip: PCMU, PCMA, G722). Default PCMU. */
  codecs?: string[];
  /** Sample rate baresip's audio pipeline runs at (8000 unless G722 is wanted). */
  sampleRate?: number;
  /** Channels of the pipeline and of `sourceWav` (2 for Opus, which baresip runs in stereo). */
  channels?: 1 | 2;
  /** SIP port on 127.0.0.1 (default: a free one). Engine trunks dial 5060: a trunk's sip_address has no port. */
  sipPort?: number;
  /** SIP transports to listen on (default udp only). baresip takes TLS on the SIP port + 1. */
  transports?: Array<'udp' | 'tcp' | 'tls'>;
  /** SIP over TLS: baresip's certificate with its key in one PEM file, and the CA it trusts. */
  tls?: { bundleFile: string; caFile: string };
  /** The account's media encryption (`srtp`: offered, `srtp-mand`: required; SDES keys). */
  mediaenc?: 'srtp' | 'srtp-mand';
  /** Log SIP messages to the output (-s), for debugging. */
  sipTrace?: boolean;
  /**
   * The address SIP listens on and SDP names (`sip_listen`, `net_interface`); default 127.0.0.1,
   * `::1` for IPv6, another loopback address to take port 5060 beside other peers.
   */
  host?: string;
}

export interface BaresipEvent {
  type: string;
  param?: string;
  direction?: string;
  peeruri?: string;
  id?: string;
  [key: string]: unknown;
}

export class Baresip {
  readonly events: BaresipEvent[] = [];
  private readonly waiters = new Set<() => void>();
  private ctrl: net.Socket | undefined;
  private buffer = Buffer.alloc(0);
  private token = 0;
  private readonly responses = new Map<string, (r: { ok: boolean; data: string }) => void>();

  private constructor(
    readonly dir: string,
    readonly sipPort: number,
    readonly ctrlPort: number,
    readonly user: string,
    /** `host` as written in a URI (an IPv6 address in brackets). */
    readonly uriHost: string,
    private readonly child: Child,
    private readonly removeDir: () => void,
  ) {}

  /** The SIP URI of this baresip's account, for the engine to call. */
  get uri(): string {
    return `sip:${this.user}@${this.uriHost}:${this.sipPort}`;
  }

  /** The account's URI over TLS (baresip listens for TLS on the SIP port + 1). */
  get tlsUri(): string {
    return `sip:${this.user}@${this.uriHost}:${this.sipPort + 1};transport=tls`;
  }

  get output(): string {
    return this.child.output;
  }

  /**
   * Starts baresip on free ports. Ports are picked free but bound by baresip a moment later, and
   * it binds more than the SIP port (CI once saw its TLS listener fail with "Address already in
   * use" although `sip_transports` is udp): another process can take one in between. On "Address already in
   * use", chosen ports are picked again (twice at most); a port given in `options` is not.
   */
  static async start(options: BaresipOptions): Promise<Baresip> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await Baresip.startOnce(options);
      } catch (err) {
        if (attempt >= 3 || options.sipPort !== undefined || !/Address already in use/.test((err as Error).message)) throw err;
      }
    }
  }

  private static async startOnce(options: BaresipOptions): Promise<Baresip> {
    requireBinary('baresip');
    if (!existsSync(join(MODULE_PATH, 'ctrl_tcp.so'))) {
      throw new Error(`baresip modules not found in ${MODULE_PATH} (Debian package baresip-core)`);
    }
    const tmp = tempDir('baresip');
    const dir = tmp.path;
    const user = options.user ?? 'baresip';
    const host = options.host ?? LOOPBACK;
    const uriHost = host.includes(':') ? `[${host}]` : host;
    const sipPort = options.sipPort ?? (await freePort());
    let ctrlPort = await freePort();
    while (ctrlPort === sipPort) ctrlPort = await freePort();
    const rtp = rtpRange();
    const sampleRate = options.sampleRate ?? 8000;
    const codecs = options.codecs ?? ['PCMU'];
    mkdirSync(join(dir, 'rec'));
    writeFileSync(join(dir, 'source.wav'), options.sourceWav);
    const modules = new Set(['g711.so', 'aufile.so', 'aubridge.so', 'sndfile.so']);
    if (codecs.some((c) => c.toUpperCase() === 'G722')) modules.add('g722.so');
    if (codecs.some((c) => c.toUpperCase() === 'OPUS')) modules.add('opus.so');
    if (options.mediaenc) modules.add('srtp.so');
    writeFileSync(
      join(dir, 'config'),
      [
        'poll_method\t\tpoll',
        `sip_listen\t\t${uriHost}:${sipPort}`,
        `sip_transports\t\t${(options.transports ?? ['udp']).join(',')}`,
        ...(options.tls ? [`sip_certificate\t\t${options.tls.bundleFile}`, `sip_cafile\t\t${options.tls.caFile}`] : []),
        `net_interface\t\t${host}`,
        'call_max_calls\t\t4',
        `audio_player\t\taubridge,play-${sipPort}`,
        `audio_source\t\taufile,${join(dir, 'source.wav')}`,
        `audio_alert\t\taubridge,alert-${sipPort}`,
        `audio_srate\t\t${sampleRate}`,
        `audio_channels\t\t${options.channels ?? 1}`,
        `rtp_ports\t\t${rtp.min}-${rtp.max}`,
        'rtcp_mux\t\tno',
        `module_path\t\t${MODULE_PATH}`,
        ...[...modules].map((m) => `module\t\t\t${m}`),
        `snd_path\t\t${join(dir, 'rec')}`,
        'module_app\t\taccount.so',
        'module_app\t\tmenu.so',
        'module_app\t\tctrl_tcp.so',
        `ctrl_tcp_listen\t\t${LOOPBACK}:${ctrlPort}`,
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'accounts'),
      // baresip assumes 8 kHz when a codec name has no rate: G.722 must be spelled out.
      `<sip:${user}@${uriHost}${options.tls ? ';transport=tls' : ''}>;regint=0;answermode=auto${options.mediaenc ? `;mediaenc=${options.mediaenc}` : ''};audio_codecs=${codecs.map((c) => (c.toUpperCase() === 'G722' ? 'G722/16000/1' : c.toUpperCase() === 'OPUS' ? 'opus/48000/2' : c)).join(',')}\n`,
    );
    writeFileSync(join(dir, 'contacts'), '');
    const args = ['-f', dir, ...(options.sipTrace ? ['-s'] : [])];
    const child = startChild('baresip', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    const instance = new Baresip(dir, sipPort, ctrlPort, user, uriHost, child, tmp.remove);
    try {
      await instance.connect(8000);
    } catch (err) {
      await instance.stop();
      throw new Error(`baresip did not start: ${(err as Error).message}\n--- baresip output ---\n${child.output}`);
    }
    return instance;
  }

  private async connect(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.child.done) throw new Error(`baresip exited with code ${this.child.process.exitCode}`);
      try {
        this.ctrl = await new Promise<net.Socket>((resolve, reject) => {
          const socket = net.connect(this.ctrlPort, LOOPBACK);
          socket.once('connect', () => resolve(socket));
          socket.once('error', reject);
        });
        break;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`ctrl_tcp on ${this.ctrlPort}: ${(err as Error).message}`);
        await sleep(50);
      }
    }
    this.ctrl.on('data', (chunk: Buffer) => this.onData(chunk));
    this.ctrl.on('error', () => undefined);
  }

  private onData(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const colon = this.buffer.indexOf(':');
      if (colon < 0) return;
      const length = Number(this.buffer.subarray(0, colon).toString('ascii'));
      if (!Number.isInteger(length)) {
        this.buffer = Buffer.alloc(0);
        return;
      }
      if (this.buffer.length < colon + 1 + length + 1) return;
      const body = this.buffer.subarray(colon + 1, colon + 1 + length).toString('utf8');
      this.buffer = this.buffer.subarray(colon + 1 + length + 1);
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(body) as Record<string, unknown>;
      } catch {
        continue;
      }
      if (message.response === true) {
        const token = String(message.token ?? '');
        this.responses.get(token)?.({ ok: message.ok === true, data: String(message.data ?? '') });
        this.responses.delete(token);
      } else if (message.event === true) {
        this.events.push(message as unknown as BaresipEvent);
        for (const wake of [...this.waiters]) wake();
      }
    }
  }

  /** Runs a ctrl_tcp command (a menu command name such as dial, hangup, quit). */
  async command(command: string, params?: string, timeoutMs = 3000): Promise<{ ok: boolean; data: string }> {
    const ctrl = this.ctrl;
    if (!ctrl) throw new Error('baresip control connection is not open');
    const token = String(++this.token);
    const body = Buffer.from(JSON.stringify({ command, ...(params !== undefined ? { params } : {}), token }));
    const reply = new Promise<{ ok: boolean; data: string }>((resolve) => this.responses.set(token, resolve));
    ctrl.write(Buffer.concat([Buffer.from(`${body.length}:`), body, Buffer.from(',')]));
    return within(reply, timeoutMs, `baresip's reply to "${command}"`);
  }

  async dial(uri: string): Promise<void> {
    const reply = await this.command('dial', uri);
    if (!reply.ok) throw new Error(`baresip refused to dial ${uri}: ${reply.data}`);
  }

  async hangup(): Promise<void> {
    await this.command('hangup');
  }

  /** The first event of `type` (already seen or still to come) matching `filter`. */
  async waitEvent(type: string, timeoutMs = 5000, filter: (e: BaresipEvent) => boolean = () => true): Promise<BaresipEvent> {
    const find = () => this.events.find((e) => e.type === type && filter(e));
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = find();
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0 || this.child.done) {
        const seen = this.events.map((e) => `${e.type}${e.param ? `(${e.param})` : ''}`).join(', ');
        throw new Error(`baresip: no ${type} event within ${timeoutMs} ms; events: [${seen}]\n--- baresip output ---\n${this.output.slice(-4000)}`);
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(left, 200));
        this.waiters.add(wake);
      });
    }
  }

  /** What baresip decoded from the far end (the sndfile dump of the latest call), as mono. */
  recording(): WavAudio {
    const dir = join(this.dir, 'rec');
    const files = readdirSync(dir).filter((f) => f.endsWith('-dec.wav')).sort();
    const last = files.at(-1);
    if (!last) throw new Error(`baresip left no recording in ${dir}; files: ${readdirSync(dir).join(', ')}`);
    const wav = readWav(readFileSync(join(dir, last)));
    return { sampleRate: wav.sampleRate, channels: 1, samples: toMono(wav) };
  }

  /** quit over ctrl_tcp, then SIGTERM/SIGKILL; removes the config dir. Idempotent. */
  async stop(): Promise<void> {
    if (this.child.process.exitCode === null && this.child.process.signalCode === null && this.ctrl && !this.ctrl.destroyed) {
      try {
        await this.command('quit', undefined, 1000);
      } catch {
        // fall through to signals
      }
      await within(this.child.exited, 1500, 'baresip to quit').catch(() => undefined);
    }
    this.ctrl?.destroy();
    await this.child.stop(1000);
    this.removeDir();
  }
}
