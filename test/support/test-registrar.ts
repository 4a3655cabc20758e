/**
 * A provider's registrar for `auth` trunk tests, on a raw UDP socket: challenges REGISTER with
 * digest (MD5 or SHA-256), checks the answer, grants a short expiry and remembers the Contact.
 * Can be told to fail (`failWith`) to exercise the engine's backoff.
 */
import dgram from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { systemClock } from '../../src/util/clock.ts';
import { formatChallenge, parseCredentials } from '../../src/sip/digest.ts';
import { createChallenge, DigestNonces, verifyCredentials } from '../../src/sip/digest-server.ts';
import { header, type SipRequest } from '../../src/sip/message.ts';
import { parseMessage } from '../../src/sip/parser.ts';
import { serializeMessage } from '../../src/sip/serializer.ts';
import { buildResponse } from '../../src/sip/transaction-response.ts';

export class TestRegistrar {
  readonly registers: SipRequest[] = [];
  contact: string | undefined;
  expiresSec = 2;
  algorithm: 'MD5' | 'SHA-256' = 'SHA-256';
  failWith: number | undefined;
  private readonly nonces = new DigestNonces({ secret: randomBytes(32), clock: systemClock });
  readonly realm = 'provider.test';

  private constructor(
    readonly socket: dgram.Socket,
    readonly username: string,
    readonly password: string,
  ) {
    socket.on('message', (msg, rinfo) => this.onMessage(msg, rinfo));
  }

  /** `port` 5060: a registrar a trunk names by host alone (REST takes no port). */
  static async start(host: string, username: string, password: string, port = 0): Promise<TestRegistrar> {
    const socket = dgram.createSocket(host.includes(':') ? 'udp6' : 'udp4');
    await new Promise<void>((r) => socket.bind(port, host, r));
    return new TestRegistrar(socket, username, password);
  }

  /** host:port, an IPv6 host in brackets (as a trunk's sip_address is given in tests). */
  get address(): string {
    const a = this.socket.address();
    return `${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
  }

  /** REGISTERs that were accepted. */
  get accepted(): number {
    return this.registers.filter((r) => header(r, 'authorization') !== undefined && this.check(r)).length;
  }

  private check(req: SipRequest): boolean {
    const creds = parseCredentials(header(req, 'authorization') ?? '');
    if (!creds || creds.username !== this.username) return false;
    return verifyCredentials(creds, { realm: this.realm, method: 'REGISTER', nonces: this.nonces, password: this.password }).ok;
  }

  private onMessage(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    const parsed = parseMessage(msg);
    if (!parsed.ok || parsed.message.kind !== 'request' || parsed.message.method !== 'REGISTER') return;
    const req = parsed.message;
    this.registers.push(req);
    let res;
    if (this.failWith !== undefined) {
      res = buildResponse(req, this.failWith, { toTag: 'reg' });
    } else if (!this.check(req)) {
      const challenge = formatChallenge(createChallenge(this.realm, this.nonces, { algorithm: this.algorithm }));
      res = buildResponse(req, 401, { toTag: 'reg', headers: [{ name: 'www-authenticate', value: challenge }] });
    } else {
      this.contact = header(req, 'contact');
      const expires = header(req, 'expires') === '0' ? 0 : this.expiresSec;
      res = buildResponse(req, 200, {
        toTag: 'reg',
        headers: this.contact ? [{ name: 'contact', value: `${this.contact};expires=${expires}` }] : [],
      });
    }
    this.socket.send(serializeMessage(res), rinfo.port, rinfo.address);
  }

  close(): void {
    this.socket.removeAllListeners('message');
    this.socket.close();
  }
}

