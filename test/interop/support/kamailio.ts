/**
 * Kamailio (Debian's `kamailio` with `kamailio-tls-modules`) as a second, independent SIP-over-TLS
 * implementation: a stateful proxy on loopback that relays between UDP and TLS.
 *
 * Each instance gets a temp dir holding a kamailio.cfg and a tls.cfg written here, and runs in the
 * foreground as a child process: `kamailio -f <dir>/kamailio.cfg -DD -E -m 64 -M 8 -Y <dir>
 * -P <dir>/kamailio.pid` (-DD: no fork into the background, -E: log to stderr, -m/-M: 64 MB
 * shared and 8 MB private memory, so nothing depends on the machine's defaults; -Y/-P: runtime
 * dir and pid file inside the temp dir, nothing under /run). It is ready once it answers an
 * OPTIONS to its own address on UDP.
 *
 * Routing (see `config()`): a new request that arrives over UDP is relayed over TLS to `toTls`;
 * one that arrives over TLS is relayed over UDP to `toUdp`. Dialog-forming requests are
 * record-routed (double Record-Route, one entry per transport), so in-dialog requests (ACK, BYE)
 * go through Kamailio too and change transport on the way. Kamailio verifies the certificate of
 * the TLS peers it connects to against the test CA; it does not ask clients for one.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import dgram from 'node:dgram';
import { join } from 'node:path';
import { startChild, type Child } from './children.ts';
import { freePort, LOOPBACK, requireBinary, sleep, tempDir } from './tools.ts';

/** Debian installs modules under /usr/lib/<multiarch triplet>/kamailio/modules. */
function modulePath(): string {
  const candidates = ['/usr/lib/kamailio/modules', ...readdirSync('/usr/lib').map((d) => join('/usr/lib', d, 'kamailio/modules'))];
  const found = candidates.find((dir) => existsSync(join(dir, 'tls.so')));
  if (!found) throw new Error("Kamailio's tls module (tls.so) not found under /usr/lib/*/kamailio/modules (Debian package kamailio-tls-modules, listed in .ci/apt-packages)");
  return found;
}

export interface KamailioOptions {
  /** Kamailio's TLS server certificate and key (PEM files) and the CA it trusts as a client. */
  tls: { certFile: string; keyFile: string; caFile: string };
  /** Where requests arriving over UDP go: a TLS listener on 127.0.0.1 (port). */
  toTls?: number;
  /** Where requests arriving over TLS go: a UDP listener on 127.0.0.1 (port). */
  toUdp?: number;
}

/** One relayed request as Kamailio logged it (the cfg's xlog line). */
export interface KamailioRequest {
  method: string;
  /** Transport it arrived on: udp or tls. */
  proto: string;
  ruri: string;
}

export class Kamailio {
  private constructor(
    readonly udpPort: number,
    readonly tlsPort: number,
    private readonly child: Child,
    private readonly removeDir: () => void,
  ) {}

  get output(): string {
    return this.child.output;
  }

  /** A URI on Kamailio's UDP listener. */
  udpUri(user: string): string {
    return `sip:${user}@${LOOPBACK}:${this.udpPort}`;
  }

  /** A URI on Kamailio's TLS listener. */
  tlsUri(user: string): string {
    return `sip:${user}@${LOOPBACK}:${this.tlsPort};transport=tls`;
  }

  /** The requests Kamailio routed so far (from its log), readiness probes left out. */
  get requests(): KamailioRequest[] {
    const out: KamailioRequest[] = [];
    for (const match of this.child.output.matchAll(/KAMAILIO-REQ method=(\S+) proto=(\S+) ruri=(\S+)/g)) {
      out.push({ method: match[1]!, proto: match[2]!, ruri: match[3]! });
    }
    return out;
  }

  /**
   * Starts Kamailio on free ports. A port picked free can be taken before Kamailio binds it: on
   * "Address already in use" the ports are picked again (twice at most).
   */
  static async start(options: KamailioOptions): Promise<Kamailio> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await Kamailio.startOnce(options);
      } catch (err) {
        if (attempt >= 3 || !/Address already in use/.test((err as Error).message)) throw err;
      }
    }
  }

  private static async startOnce(options: KamailioOptions): Promise<Kamailio> {
    requireBinary('kamailio');
    const modules = modulePath();
    const tmp = tempDir('kamailio');
    const dir = tmp.path;
    const udpPort = await freePort();
    let tlsPort = await freePort();
    while (tlsPort === udpPort) tlsPort = await freePort();
    const cfgFile = join(dir, 'kamailio.cfg');
    const tlsCfgFile = join(dir, 'tls.cfg');
    writeFileSync(tlsCfgFile, tlsConfig(options.tls));
    writeFileSync(cfgFile, config({ modules, udpPort, tlsPort, tlsCfgFile, toTls: options.toTls, toUdp: options.toUdp }));
    const args = ['-f', cfgFile, '-DD', '-E', '-m', '64', '-M', '8', '-Y', dir, '-P', join(dir, 'kamailio.pid')];
    const child = startChild('kamailio', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    const instance = new Kamailio(udpPort, tlsPort, child, tmp.remove);
    try {
      await instance.ready(10_000);
    } catch (err) {
      await instance.stop();
      throw new Error(`kamailio did not start: ${(err as Error).message}\n--- kamailio output ---\n${child.output.slice(-6000)}`);
    }
    return instance;
  }

  /** Sends OPTIONS to Kamailio's own UDP address every 200 ms until it answers 200 (bounded). */
  private async ready(timeoutMs: number): Promise<void> {
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, LOOPBACK, () => resolve()));
    const local = socket.address().port;
    let answered = false;
    socket.on('message', (msg) => {
      if (/^SIP\/2\.0 200 /.test(msg.toString('utf8'))) answered = true;
    });
    try {
      const deadline = Date.now() + timeoutMs;
      for (let n = 1; !answered; n++) {
        if (this.child.done) throw new Error(`kamailio exited with code ${this.child.process.exitCode}`);
        if (Date.now() > deadline) throw new Error(`no answer to OPTIONS on udp ${LOOPBACK}:${this.udpPort} within ${timeoutMs} ms`);
        socket.send(probe(this.udpPort, local, n), this.udpPort, LOOPBACK);
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

function probe(port: number, local: number, n: number): string {
  return [
    `OPTIONS sip:${LOOPBACK}:${port} SIP/2.0`,
    `Via: SIP/2.0/UDP ${LOOPBACK}:${local};branch=z9hG4bK-ready-${n}-${local}`,
    'Max-Forwards: 70',
    `From: <sip:probe@${LOOPBACK}>;tag=ready${local}`,
    `To: <sip:${LOOPBACK}:${port}>`,
    `Call-ID: ready-${local}-${n}`,
    `CSeq: ${n} OPTIONS`,
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
}

/**
 * The tls module's own config file. Server side: the certificate the test CA issued for
 * IP:127.0.0.1, no client certificate asked for. Client side (Kamailio connecting to our TLS
 * listener): the peer's certificate must be present and chain to the test CA. TLS 1.2 or newer.
 */
function tlsConfig(tls: KamailioOptions['tls']): string {
  return [
    '[server:default]',
    'method = TLSv1.2+',
    `certificate = ${tls.certFile}`,
    `private_key = ${tls.keyFile}`,
    `ca_list = ${tls.caFile}`,
    'verify_certificate = no',
    'require_certificate = no',
    '',
    '[client:default]',
    'method = TLSv1.2+',
    `ca_list = ${tls.caFile}`,
    'verify_certificate = yes',
    'require_certificate = yes',
    '',
  ].join('\n');
}

/** kamailio.cfg: a small record-routing stateful relay between its UDP and TLS listeners. */
function config(o: { modules: string; udpPort: number; tlsPort: number; tlsCfgFile: string; toTls?: number; toUdp?: number }): string {
  const noRoute = 'sl_send_reply("404", "No Route For This Transport"); exit;';
  const toTls = o.toTls ? `$du = "sip:${LOOPBACK}:${o.toTls};transport=tls";` : noRoute;
  const toUdp = o.toUdp ? `$du = "sip:${LOOPBACK}:${o.toUdp}";` : noRoute;
  return `#!KAMAILIO
# Written by test/interop/support/kamailio.ts for one test; removed afterwards.

debug=2
children=2
tcp_children=2
auto_aliases=no
# Only the listeners below; with both, record_route() adds one entry per transport.
listen=udp:${LOOPBACK}:${o.udpPort}
listen=tls:${LOOPBACK}:${o.tlsPort}
enable_tls=yes
tcp_connect_timeout=3
tcp_connection_lifetime=60

mpath="${o.modules}/"
# tls first (it initialises OpenSSL); tm before sl so sl can use it.
loadmodule "tls.so"
loadmodule "tm.so"
loadmodule "sl.so"
loadmodule "rr.so"
loadmodule "pv.so"
loadmodule "maxfwd.so"
loadmodule "textops.so"
loadmodule "siputils.so"
loadmodule "xlog.so"

modparam("tls", "config", "${o.tlsCfgFile}")
# A relay that cannot reach the next hop answers within a few seconds.
modparam("tm", "fr_timer", 5000)
modparam("tm", "fr_inv_timer", 20000)

request_route {
\tif (!mf_process_maxfwd_header("10")) {
\t\tsl_send_reply("483", "Too Many Hops");
\t\texit;
\t}

\t# The harness's readiness probe: an OPTIONS to Kamailio itself, without a user.
\tif (is_method("OPTIONS") && $rU == $null && !has_totag()) {
\t\tsl_send_reply("200", "Ready");
\t\texit;
\t}

\txlog("L_NOTICE", "KAMAILIO-REQ method=$rm proto=$pr ruri=$ru\\n");

\t# In-dialog: follow the Route set our Record-Route built (ACK, BYE, re-INVITE).
\tif (has_totag()) {
\t\tif (loose_route()) {
\t\t\troute(RELAY);
\t\t}
\t\tif (is_method("ACK") && t_check_trans()) {
\t\t\troute(RELAY);
\t\t}
\t\tsl_send_reply("404", "Not Here");
\t\texit;
\t}

\tif (is_method("CANCEL")) {
\t\tif (t_check_trans()) {
\t\t\troute(RELAY);
\t\t}
\t\texit;
\t}
\t# A retransmission of a request already relayed is absorbed by its transaction.
\tif (!is_method("ACK") && t_check_trans()) {
\t\texit;
\t}

\tremove_hf("Route");
\tif (is_method("INVITE|SUBSCRIBE")) {
\t\trecord_route();
\t}

\t# Change transport: UDP in, TLS out; TLS in, UDP out.
\tif ($pr == "udp") {
\t\t${toTls}
\t} else {
\t\t${toUdp}
\t}
\troute(RELAY);
}

route[RELAY] {
\tif (!t_relay()) {
\t\tsl_reply_error();
\t}
\texit;
}
`;
}
