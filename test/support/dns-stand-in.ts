/**
 * A DNS server on loopback UDP for tests of RFC 3263 server location: it answers A, AAAA
 * (RFC 3596), SRV (RFC 2782) and NAPTR (RFC 3403) questions from a fixed zone, in the wire
 * format of RFC 1035, so the engine's real resolver (Node's c-ares `Resolver`, pointed here with
 * setServers) does the asking. A name the zone does not hold at all answers NXDOMAIN; a name it
 * holds with no record of the asked type answers NOERROR with no answers (NODATA), as a real
 * server does.
 */
import dgram from 'node:dgram';

export interface SrvAnswer {
  priority: number;
  weight: number;
  port: number;
  target: string;
}

export interface NaptrAnswer {
  order: number;
  preference: number;
  flags: string;
  service: string;
  regexp: string;
  replacement: string;
}

export interface Zone {
  a?: Record<string, string[]>;
  /** IPv6 addresses (AAAA, RFC 3596). */
  aaaa?: Record<string, string[]>;
  srv?: Record<string, SrvAnswer[]>;
  naptr?: Record<string, NaptrAnswer[]>;
}

const TYPE = { A: 1, AAAA: 28, NAPTR: 35, SRV: 33 } as const;
const TYPE_NAMES: Record<number, string> = { 1: 'A', 28: 'AAAA', 33: 'SRV', 35: 'NAPTR' };

export class DnsStandIn {
  /** Every question asked, in order (type as its mnemonic, or the number). */
  readonly queries: { name: string; type: string }[] = [];

  private constructor(
    private readonly socket: dgram.Socket,
    readonly zone: Zone,
  ) {
    socket.on('message', (msg, from) => {
      const reply = this.answer(msg);
      if (reply) socket.send(reply, from.port, from.address);
    });
  }

  static async start(zone: Zone): Promise<DnsStandIn> {
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return new DnsStandIn(socket, zone);
  }

  get server(): string {
    return `127.0.0.1:${this.socket.address().port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }

  private answer(msg: Buffer): Buffer | undefined {
    if (msg.length < 12 || msg.readUInt16BE(4) !== 1) return undefined;
    const q = readName(msg, 12);
    if (!q || q.end + 4 > msg.length) return undefined;
    const type = msg.readUInt16BE(q.end);
    const name = q.name.toLowerCase();
    this.queries.push({ name, type: TYPE_NAMES[type] ?? String(type) });
    const records = this.records(name, type);
    const known = this.holds(name);
    const question = msg.subarray(12, q.end + 4);
    const header = Buffer.alloc(12);
    header.writeUInt16BE(msg.readUInt16BE(0), 0);
    // QR, the query's RD echoed, RA; RCODE 3 (NXDOMAIN) for a name the zone does not hold.
    header.writeUInt16BE(0x8080 | (msg.readUInt16BE(2) & 0x0100) | (known ? 0 : 3), 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(records.length, 6);
    const answers = records.map((rdata) => {
      const rr = Buffer.alloc(12);
      rr.writeUInt16BE(0xc00c, 0); // the question's name
      rr.writeUInt16BE(type, 2);
      rr.writeUInt16BE(1, 4); // IN
      rr.writeUInt32BE(60, 6);
      rr.writeUInt16BE(rdata.length, 10);
      return Buffer.concat([rr, rdata]);
    });
    return Buffer.concat([header, question, ...answers]);
  }

  private holds(name: string): boolean {
    return [this.zone.a, this.zone.aaaa, this.zone.srv, this.zone.naptr].some((table) => table !== undefined && name in table);
  }

  private records(name: string, type: number): Buffer[] {
    if (type === TYPE.A) return (this.zone.a?.[name] ?? []).map((ip) => Buffer.from(ip.split('.').map(Number)));
    if (type === TYPE.AAAA) return (this.zone.aaaa?.[name] ?? []).map(ipv6Bytes);
    if (type === TYPE.SRV) {
      return (this.zone.srv?.[name] ?? []).map((s) => {
        const fixed = Buffer.alloc(6);
        fixed.writeUInt16BE(s.priority, 0);
        fixed.writeUInt16BE(s.weight, 2);
        fixed.writeUInt16BE(s.port, 4);
        return Buffer.concat([fixed, writeName(s.target)]);
      });
    }
    if (type === TYPE.NAPTR) {
      return (this.zone.naptr?.[name] ?? []).map((n) => {
        const fixed = Buffer.alloc(4);
        fixed.writeUInt16BE(n.order, 0);
        fixed.writeUInt16BE(n.preference, 2);
        return Buffer.concat([fixed, charString(n.flags), charString(n.service), charString(n.regexp), writeName(n.replacement)]);
      });
    }
    return [];
  }
}

/** The 16 bytes of an IPv6 address (no embedded IPv4 form). */
function ipv6Bytes(ip: string): Buffer {
  const [head = '', tail] = ip.split('::');
  const groups = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const before = groups(head);
  const after = groups(tail);
  const all = tail === undefined ? before : [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after];
  const out = Buffer.alloc(16);
  all.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}

function readName(msg: Buffer, at: number): { name: string; end: number } | undefined {
  const labels: string[] = [];
  let i = at;
  while (i < msg.length) {
    const len = msg[i]!;
    if (len === 0) return { name: labels.join('.'), end: i + 1 };
    if (len > 63 || i + 1 + len > msg.length) return undefined; // no compression in questions
    labels.push(msg.toString('latin1', i + 1, i + 1 + len));
    i += 1 + len;
  }
  return undefined;
}

function writeName(name: string): Buffer {
  const labels = name.replace(/\.$/, '').split('.').filter((l) => l.length > 0);
  return Buffer.concat([...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'latin1')])), Buffer.from([0])]);
}

function charString(s: string): Buffer {
  return Buffer.concat([Buffer.from([s.length]), Buffer.from(s, 'latin1')]);
}
