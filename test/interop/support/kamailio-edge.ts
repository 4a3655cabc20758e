/**
 * The shipped SIP edge, deploy/kamailio/kamailio.cfg, run for a test: the file is rendered with
 * this test's values in its `#!substdef` site settings (listen address and port, dispatcher list,
 * probe interval, ctl socket) and nothing else changed, so the tested config is the shipped one.
 * The dispatcher list is written from the nodes the test started.
 *
 * Kamailio runs in the foreground in a temp dir (`-DD -E`, 64 MB shared / 8 MB private memory,
 * runtime dir and pid file inside the temp dir) and is ready once it answers an OPTIONS to itself.
 */
import { execFileSync } from 'node:child_process';
import dgram from 'node:dgram';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startChild, type Child } from './children.ts';
import { sleep, tempDir } from './tools.ts';

export const EDGE_CONFIG = resolve('deploy/kamailio/kamailio.cfg');

/** Whether a kamailio binary is on PATH (the tests skip, saying so, when it is not). */
export function kamailioAvailable(): boolean {
  try {
    execFileSync('sh', ['-c', 'command -v kamailio'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * The shipped config with new values for its `#!substdef "!NAME!value!g"` settings. Every name
 * given must be one of the file's settings (a renamed setting fails the test, not silently).
 */
export function renderEdgeConfig(text: string, settings: Record<string, string>): string {
  let out = text;
  for (const [name, value] of Object.entries(settings)) {
    if (value.includes('!')) throw new Error(`substdef value for ${name} must not contain "!"`);
    const line = new RegExp(`^#!substdef "!${name}![^!]*!g"$`, 'm');
    if (!line.test(out)) throw new Error(`${EDGE_CONFIG} has no #!substdef setting ${name}`);
    out = out.replace(line, `#!substdef "!${name}!${value}!g"`);
  }
  return out;
}

export interface EdgeNode {
  id: string;
  host: string;
  port: number;
}

export interface EdgeOptions {
  /** Kamailio's address (a 127.0.0.x of its own, so nodes and peers can tell it apart). */
  ip: string;
  port: number;
  nodes: EdgeNode[];
  /** Seconds between OPTIONS probes of each node. */
  pingIntervalS?: number;
}

/** One line of the config's `edge:` log. */
export interface EdgeLine {
  text: string;
}

export class KamailioEdge {
  private constructor(
    readonly ip: string,
    readonly port: number,
    private readonly child: Child,
    private readonly removeDir: () => void,
  ) {}

  get output(): string {
    return this.child.output;
  }

  /** The main Kamailio process (its workers are its children). */
  get pid(): number {
    return this.child.process.pid!;
  }

  /** The config's own log lines (`edge: ...`), in order. */
  get lines(): string[] {
    return [...this.child.output.matchAll(/edge: ([^\n]*)/g)].map((m) => m[1]!);
  }

  uri(user: string): string {
    return `sip:${user}@${this.ip}:${this.port}`;
  }

  static async start(options: EdgeOptions): Promise<KamailioEdge> {
    const tmp = tempDir('kamailio-edge');
    const dir = tmp.path;
    const listFile = join(dir, 'dispatcher.list');
    writeFileSync(listFile, options.nodes.map((n) => `1 sip:${n.host}:${n.port} 0 0 duid=${n.id}\n`).join(''));
    const cfgFile = join(dir, 'kamailio.cfg');
    writeFileSync(
      cfgFile,
      renderEdgeConfig(readFileSync(EDGE_CONFIG, 'utf8'), {
        SB_LISTEN_IP: options.ip,
        SB_LISTEN_PORT: String(options.port),
        SB_DISPATCHER_LIST: listFile,
        SB_PING_INTERVAL: String(options.pingIntervalS ?? 1),
        SB_CTL_SOCKET: `unix:${join(dir, 'kamailio_ctl')}`,
      }),
    );
    const args = ['-f', cfgFile, '-DD', '-E', '-m', '64', '-M', '8', '-Y', dir, '-P', join(dir, 'kamailio.pid')];
    const child = startChild('kamailio', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    const edge = new KamailioEdge(options.ip, options.port, child, tmp.remove);
    try {
      await edge.ready(10_000);
    } catch (err) {
      await edge.stop();
      throw new Error(`kamailio did not start: ${(err as Error).message}\n--- kamailio output ---\n${child.output.slice(-6000)}`);
    }
    return edge;
  }

  /** OPTIONS to Kamailio itself every 200 ms until it answers 200 (bounded). */
  private async ready(timeoutMs: number): Promise<void> {
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((r) => socket.bind(0, this.ip, () => r()));
    const local = socket.address().port;
    let answered = false;
    socket.on('message', (msg) => {
      if (/^SIP\/2\.0 200 /.test(msg.toString('utf8'))) answered = true;
    });
    try {
      const deadline = Date.now() + timeoutMs;
      for (let n = 1; !answered; n++) {
        if (this.child.done) throw new Error(`kamailio exited with code ${this.child.process.exitCode}`);
        if (Date.now() > deadline) throw new Error(`no answer to OPTIONS on udp ${this.ip}:${this.port} within ${timeoutMs} ms`);
        socket.send(probe(this.ip, this.port, local, n), this.port, this.ip);
        for (let i = 0; i < 10 && !answered; i++) await sleep(20);
      }
    } finally {
      socket.close();
    }
  }

  async stop(): Promise<void> {
    await this.child.stop(2000);
    this.removeDir();
  }
}

function probe(ip: string, port: number, local: number, n: number): string {
  return [
    `OPTIONS sip:${ip}:${port} SIP/2.0`,
    `Via: SIP/2.0/UDP ${ip}:${local};branch=z9hG4bK-ready-${n}-${local}`,
    'Max-Forwards: 70',
    `From: <sip:probe@${ip}>;tag=ready${local}`,
    `To: <sip:${ip}:${port}>`,
    `Call-ID: ready-${local}-${n}@edge-test`,
    `CSeq: ${n} OPTIONS`,
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
}
