/**
 * A fuzz campaign against the engine's network edge, reproducible from a seed, bounded in count
 * and time, loopback only: mutated SIP (RFC 4475 torture messages and well-formed requests as
 * seeds) over UDP, TCP and TLS from given loopback sources, and mutated RTP (plain or, on an SRTP
 * call, failing authentication) into a live call's port from the caller's own address, so it
 * passes the media lock and reaches the receive path. What it checks is up to the caller: that
 * the engine still serves (test/integration/sip/edge-fuzz.test.ts, bench/fuzz-edge.ts).
 */
import dgram from 'node:dgram';
import net from 'node:net';
import tls from 'node:tls';
import { TORTURE_CASES, torture } from '../unit/sip/torture-fixtures.ts';
import { mulberry32, mutate } from './mutate.ts';

export interface EdgeTarget {
  host: string;
  sipPort: number;
  /** The engine's SIP-over-TLS port (0: no TLS in the campaign). */
  tlsPort: number;
}

export interface SipCampaign {
  seed: number;
  durationMs: number;
  /** Loopback addresses the messages come from, in turn. */
  sources: readonly string[];
  /** Upper bound on messages, whatever the time (default 50,000). */
  maxMessages?: number;
}

export interface SipFuzzCounts {
  udp: number;
  tcp: number;
  tls: number;
}

/** Well-formed requests to mutate beside the torture messages. */
function templates(target: EdgeTarget, source: string): Buffer[] {
  const via = `SIP/2.0/UDP ${source}:5099;branch=z9hG4bK-fuzz;rport`;
  const common = (method: string, uri: string, extra = '', body = '') =>
    Buffer.from(
      `${method} ${uri} SIP/2.0\r\nVia: ${via}\r\nMax-Forwards: 70\r\nFrom: <sip:fuzz@${source}>;tag=f1\r\nTo: <${uri}>\r\n` +
        `Call-ID: fuzz-${method}@${source}\r\nCSeq: 1 ${method}\r\nContact: <sip:fuzz@${source}:5099>\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  const sdp = `v=0\r\no=- 1 1 IN IP4 ${source}\r\ns=-\r\nc=IN IP4 ${source}\r\nt=0 0\r\nm=audio 40000 RTP/SAVP 0 101\r\na=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz\r\na=rtpmap:101 telephone-event/8000\r\n`;
  const uri = `sip:echo@${target.host}:${target.sipPort}`;
  return [
    common('OPTIONS', uri),
    common('INVITE', uri, 'Content-Type: application/sdp\r\nSupported: 100rel\r\n', sdp),
    common('REGISTER', `sip:${target.host}`, 'Expires: 60\r\n'),
    common('INFO', uri, 'Content-Type: application/dtmf-relay\r\n', 'Signal=5\r\nDuration=160\r\n'),
  ];
}

/** Sends mutated SIP over UDP, TCP and TLS in turn until the time or the count is up. */
export async function fuzzSip(target: EdgeTarget, campaign: SipCampaign): Promise<SipFuzzCounts> {
  const rnd = mulberry32(campaign.seed);
  const seeds = [...TORTURE_CASES.map((c) => torture(c.name)), ...campaign.sources.flatMap((s) => templates(target, s))];
  const counts: SipFuzzCounts = { udp: 0, tcp: 0, tls: 0 };
  const sockets = new Map(campaign.sources.map((s) => [s, dgram.createSocket('udp4')] as const));
  await Promise.all([...sockets].map(([s, sock]) => new Promise<void>((resolve) => sock.bind(0, s, () => resolve()))));
  for (const sock of sockets.values()) sock.on('message', () => undefined);
  const deadline = Date.now() + campaign.durationMs;
  const max = campaign.maxMessages ?? 50_000;
  try {
    for (let i = 0; Date.now() < deadline && counts.udp + counts.tcp + counts.tls < max; i++) {
      const source = campaign.sources[i % campaign.sources.length]!;
      const input = mutate(seeds[Math.floor(rnd() * seeds.length)]!, rnd);
      const kind = i % 8;
      if (kind < 6 || (kind === 7 && target.tlsPort === 0)) {
        // Datagrams are cheap: most of the campaign.
        sockets.get(source)!.send(input, target.sipPort, target.host);
        counts.udp++;
        if (i % 64 === 0) await new Promise((r) => setImmediate(r));
      } else if (kind === 6) {
        await streamOnce(net.connect({ host: target.host, port: target.sipPort, localAddress: source }), input, rnd);
        counts.tcp++;
      } else {
        const raw = net.connect({ host: target.host, port: target.tlsPort, localAddress: source });
        await streamOnce(tls.connect({ socket: raw, rejectUnauthorized: false }), input, rnd);
        counts.tls++;
      }
    }
  } finally {
    for (const sock of sockets.values()) sock.close();
  }
  return counts;
}

/** One stream connection: the input in one or two pieces, then closed; never longer than 300 ms. */
function streamOnce(socket: net.Socket, input: Buffer, rnd: () => number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    };
    const timer = setTimeout(done, 300);
    socket.on('error', done);
    socket.on('close', done);
    socket.on('data', () => undefined);
    socket.once(socket instanceof tls.TLSSocket ? 'secureConnect' : 'connect', () => {
      const cut = Math.floor(rnd() * input.length);
      socket.write(input.subarray(0, cut));
      socket.end(input.subarray(cut));
    });
  });
}

/** A plausible RTP packet (PCMU, 20 ms) to mutate. */
function rtpTemplate(seq: number): Buffer {
  const b = Buffer.alloc(12 + 160, 0xff);
  b[0] = 0x80;
  b[1] = 0;
  b.writeUInt16BE(seq & 0xffff, 2);
  b.writeUInt32BE((seq * 160) >>> 0, 4);
  b.writeUInt32BE(0x5eed5eed, 8);
  return b;
}

/** Sends mutated RTP (and now and then RTCP-looking or random bytes) through `send`. */
export async function fuzzRtp(send: (bytes: Buffer) => void, opts: { seed: number; durationMs: number; maxPackets?: number }): Promise<number> {
  const rnd = mulberry32(opts.seed);
  const deadline = Date.now() + opts.durationMs;
  const max = opts.maxPackets ?? 50_000;
  let sent = 0;
  for (let seq = 1; Date.now() < deadline && sent < max; seq++) {
    const pick = rnd();
    let bytes: Buffer;
    if (pick < 0.8) bytes = mutate(rtpTemplate(seq), rnd);
    else if (pick < 0.9) bytes = mutate(Buffer.from([0x80, 200, 0, 6, 0x5e, 0xed, 0x5e, 0xed, ...new Array(20).fill(0)]), rnd);
    else bytes = Buffer.from(Array.from({ length: Math.floor(rnd() * 300) }, () => Math.floor(rnd() * 256)));
    send(bytes);
    sent++;
    if (sent % 32 === 0) await new Promise((r) => setTimeout(r, 1));
  }
  return sent;
}
