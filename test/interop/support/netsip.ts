/**
 * Net::SIP (libnet-sip-perl) as an interop peer, through the Perl scripts in scripts/interop/:
 * netsip-call.pl places a call, netsip-answer.pl answers one. Both send a looped raw PCMU file,
 * save the PCMU they receive to another raw file and report progress as JSON lines on stdout.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ulaw } from '../../../src/media/codecs/g711.ts';
import { startChild, type Child } from './children.ts';
import { freePort, LOOPBACK, requirePerlModule, sleep, tempDir, tone, within } from './tools.ts';

const SCRIPTS = resolve(fileURLToPath(import.meta.url), '../../../../scripts/interop');

export interface NetSipEvent {
  event: string;
  code?: number | null;
  packets?: number;
  bytes?: number;
  [key: string]: unknown;
}

export class NetSipPeer {
  readonly events: NetSipEvent[] = [];
  private readonly waiters = new Set<() => void>();

  private constructor(
    private readonly child: Child,
    private readonly dir: { path: string; remove(): void },
    readonly sipPort: number,
    private readonly recvFile: string,
  ) {}

  get output(): string {
    return this.child.output;
  }

  get uri(): string {
    return `sip:netsip@${LOOPBACK}:${this.sipPort}`;
  }

  /** Places a call to `to`, sending `toneHz` (PCMU); BYE after `seconds`. */
  static async call(options: {
    to: string;
    toneHz: number;
    seconds: number;
    ringSeconds?: number;
    from?: string;
    /** RFC 4733 digits to send `dtmfAt` seconds into the call. */
    dtmf?: string;
    dtmfAt?: number;
    /** A re-INVITE `reinviteAt` seconds into the call (with `hold`: putting us on hold). */
    reinviteAt?: number;
    hold?: boolean;
    debug?: boolean;
  }): Promise<NetSipPeer> {
    return NetSipPeer.spawn('netsip-call.pl', options.toneHz, undefined, (local, send, recv) => [
      '--local', local, '--to', options.to, '--send', send, '--recv', recv,
      '--seconds', String(options.seconds), '--ring', String(options.ringSeconds ?? 8),
      ...(options.from ? ['--from', options.from] : []),
      ...(options.dtmf ? ['--dtmf', options.dtmf, '--dtmf-at', String(options.dtmfAt ?? 0.5)] : []),
      ...(options.reinviteAt !== undefined ? ['--reinvite-at', String(options.reinviteAt), ...(options.hold ? ['--hold'] : [])] : []),
      ...(options.debug ? ['--debug', '10'] : []),
    ]);
  }

  /**
   * Calls `to` with `Require: 100rel`, PRACKs each reliable provisional, then presses `keys` in
   * SIP INFO (application/dtmf-relay) and hangs up after `seconds` (netsip-prack-info.pl).
   */
  static async callPrackInfo(options: { to: string; toneHz: number; keys: string; seconds?: number; debug?: boolean }): Promise<NetSipPeer> {
    return NetSipPeer.spawn('netsip-prack-info.pl', options.toneHz, undefined, (local, send) => [
      '--local', local, '--to', options.to, '--send', send, '--keys', options.keys, '--seconds', String(options.seconds ?? 1),
      ...(options.debug ? ['--debug', '10'] : []),
    ]);
  }

  /** Waits for one call, answers it with `toneHz` (PCMU); hangs up itself after `hangupAfter` s if given. */
  static async answer(options: { toneHz: number; maxSeconds?: number; hangupAfter?: number; sipPort?: number; debug?: boolean }): Promise<NetSipPeer> {
    const peer = await NetSipPeer.spawn('netsip-answer.pl', options.toneHz, options.sipPort, (local, send, recv) => [
      '--local', local, '--send', send, '--recv', recv, '--max', String(options.maxSeconds ?? 15),
      ...(options.hangupAfter !== undefined ? ['--hangup', String(options.hangupAfter)] : []),
      ...(options.debug ? ['--debug', '10'] : []),
    ]);
    await peer.waitEvent('ready', 5000);
    // The socket is bound before "ready" is printed; a short grace covers the event loop start.
    await sleep(50);
    return peer;
  }

  private static async spawn(script: string, toneHz: number, sipPort: number | undefined, args: (local: string, send: string, recv: string) => string[]): Promise<NetSipPeer> {
    requirePerlModule('Net::SIP', 'libnet-sip-perl');
    const path = join(SCRIPTS, script);
    if (!existsSync(path)) throw new Error(`missing ${path}`);
    const dir = tempDir('netsip');
    const send = join(dir.path, 'send.pcmu');
    const recv = join(dir.path, 'recv.pcmu');
    writeFileSync(send, ulaw.encode(tone(toneHz, 1, 8000)));
    const port = sipPort ?? (await freePort());
    let peer: NetSipPeer | undefined;
    const pending: NetSipEvent[] = [];
    const child = startChild('perl', [path, ...args(`${LOOPBACK}:${port}`, send, recv)], {
      cwd: dir.path,
      onLine: (line, stream) => {
        if (stream !== 'stdout' || !line.startsWith('{')) return;
        try {
          const event = JSON.parse(line) as NetSipEvent;
          if (peer) peer.push(event);
          else pending.push(event);
        } catch {
          // not ours
        }
      },
    });
    peer = new NetSipPeer(child, dir, port, recv);
    for (const e of pending) peer.push(e);
    return peer;
  }

  private push(event: NetSipEvent): void {
    this.events.push(event);
    for (const wake of [...this.waiters]) wake();
  }

  async waitEvent(name: string, timeoutMs = 5000): Promise<NetSipEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.find((e) => e.event === name);
      if (found) return found;
      const exited = this.child.done;
      const left = deadline - Date.now();
      if (left <= 0 || exited) {
        throw new Error(
          `Net::SIP: no "${name}" event within ${timeoutMs} ms${exited ? ` (script exited with ${this.child.process.exitCode ?? this.child.process.signalCode})` : ''}; ` +
            `events: ${JSON.stringify(this.events)}\n--- output ---\n${this.output.slice(-4000)}`,
        );
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(left, 100));
        this.waiters.add(wake);
      });
    }
  }

  /** Waits for the script to finish; resolves with its exit code. */
  async finished(timeoutMs = 10_000): Promise<number | null> {
    const { code } = await within(this.child.exited, timeoutMs, `the Net::SIP script to finish\n--- output ---\n${this.output.slice(-2000)}`);
    return code;
  }

  /** RFC 4733 digits the peer received, in order. */
  get dtmfReceived(): string {
    return this.events.filter((e) => e.event === 'dtmf').map((e) => String(e.digit)).join('');
  }

  /** Decoded PCMU the peer received (8 kHz). */
  heard(): Int16Array {
    return existsSync(this.recvFile) ? ulaw.decode(readFileSync(this.recvFile)) : new Int16Array(0);
  }

  async stop(): Promise<void> {
    await this.child.stop(1000);
    this.dir.remove();
  }
}
