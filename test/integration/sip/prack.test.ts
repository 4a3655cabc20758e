/**
 * RFC 3262 over real UDP on loopback: our UAC and UAS together, and each of them against a raw
 * socket that plays the other side exactly as the wire demands.
 */
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { header, type SipResponse } from '../../../src/sip/message.ts';
import { parseMessage } from '../../../src/sip/parser.ts';
import type { IncomingInvite } from '../../../src/sip/user-agent-incoming-invite.ts';
import { UserAgent } from '../../../src/sip/user-agent.ts';
import { digestCredentials } from '../../../src/sip/user-agent-auth.ts';
import { formatChallenge, parseCredentials } from '../../../src/sip/digest.ts';
import { createChallenge, DigestNonces, verifyCredentials } from '../../../src/sip/digest-server.ts';
import { systemClock } from '../../../src/util/clock.ts';
import { ANSWER, FAST_TIMERS, OFFER, target, uaPair, waitFor } from './ua-pair.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface RawPeer {
  port: number;
  received: string[];
  send(text: string, port: number): void;
  next(pred: (text: string) => boolean, timeoutMs?: number): Promise<string>;
}

async function rawPeer(): Promise<RawPeer> {
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
  const received: string[] = [];
  const waiters = new Set<() => void>();
  sock.on('message', (m) => {
    received.push(m.toString());
    for (const w of [...waiters]) w();
  });
  cleanups.push(() => new Promise<void>((r) => sock.close(() => r())));
  let seen = 0;
  return {
    port: sock.address().port,
    received,
    send: (text, port) => sock.send(text, port, '127.0.0.1'),
    next: (pred, timeoutMs = 3000) =>
      new Promise<string>((resolve, reject) => {
        const check = () => {
          while (seen < received.length) {
            const text = received[seen++]!;
            if (pred(text)) {
              waiters.delete(check);
              clearTimeout(timer);
              resolve(text);
              return;
            }
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`nothing matching within ${timeoutMs} ms; got:\n${received.join('\n---\n')}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
  };
}

function rawInvite(uaPort: number, localPort: number, extra: string, callId: string): string {
  const body = OFFER;
  return (
    `INVITE sip:bob@127.0.0.1:${uaPort} SIP/2.0\r\n` +
    `Via: SIP/2.0/UDP 127.0.0.1:${localPort};branch=z9hG4bK-${callId};rport\r\n` +
    `Max-Forwards: 70\r\nFrom: <sip:raw@127.0.0.1>;tag=rawtag\r\nTo: <sip:bob@127.0.0.1>\r\n` +
    `Call-ID: ${callId}\r\nCSeq: 1 INVITE\r\nContact: <sip:raw@127.0.0.1:${localPort}>\r\n${extra}` +
    `Content-Type: application/sdp\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

function hdr(text: string, name: string): string | undefined {
  const parsed = parseMessage(Buffer.from(text));
  return parsed.ok ? header(parsed.message, name) : undefined;
}

function prackFor(res: string, uaPort: number, localPort: number, cseq: number, rackRSeq?: string): string {
  const to = hdr(res, 'to')!;
  const rseq = rackRSeq ?? hdr(res, 'rseq')!;
  return (
    `PRACK sip:bob@127.0.0.1:${uaPort} SIP/2.0\r\n` +
    `Via: SIP/2.0/UDP 127.0.0.1:${localPort};branch=z9hG4bK-prack-${cseq}-${rseq};rport\r\n` +
    `Max-Forwards: 70\r\nFrom: <sip:raw@127.0.0.1>;tag=rawtag\r\nTo: ${to}\r\n` +
    `Call-ID: ${hdr(res, 'call-id')}\r\nCSeq: ${cseq} PRACK\r\nRAck: ${rseq} 1 INVITE\r\nContent-Length: 0\r\n\r\n`
  );
}

const status = (text: string): number => Number(/^SIP\/2\.0 (\d{3})/.exec(text)?.[1] ?? 0);

describe('PRACK: our UAC against our UAS', () => {
  it('a reliable 183 with SDP is PRACKed once, and the 2xx waits for that PRACK', async () => {
    const pair = await uaPair();
    cleanups.push(() => pair.close());
    let incoming: IncomingInvite | undefined;
    const prackSeen: string[] = [];
    pair.bob.onInvite = (inc) => {
      incoming = inc;
      inc.progress(ANSWER);
      // Answered at once: the 200 must not overtake the 183's PRACK.
      inc.accept(ANSWER);
    };
    const origHandle = pair.bob.layer.receiveRequest.bind(pair.bob.layer);
    pair.bob.layer.receiveRequest = (req, source) => {
      if (req.method === 'PRACK') prackSeen.push(header(req, 'rack') ?? '');
      origHandle(req, source);
    };
    const progress: SipResponse[] = [];
    const call = pair.alice.invite(target(pair.bob), OFFER);
    call.on('progress', (res) => progress.push(res));
    const dialog = await call.result;
    expect(incoming?.reliableProvisionals).toBe(true);
    const p183 = progress.find((r) => r.status === 183)!;
    expect(header(p183, 'require')).toBe('100rel');
    const rseq = header(p183, 'rseq')!;
    expect(prackSeen).toEqual([`${rseq} 1 INVITE`]);
    expect(dialog.remoteSdp).toBe(ANSWER);
    // The dialog goes on with CSeq past the PRACK's.
    await dialog.bye();
    await waitFor(() => pair.bob.stats.dialogs === 0 && pair.alice.stats.dialogs === 0);
    expect(pair.bob.stats.pending).toBe(0);
  });
});

describe('PRACK: our UAS against a raw UAC', () => {
  it('Require: 100rel is accepted (no 420): reliable 180, PRACK 200, then the 2xx', async () => {
    const ua = await UserAgent.create({ host: '127.0.0.1', port: 0, timers: FAST_TIMERS });
    cleanups.push(() => ua.close());
    let incoming: IncomingInvite | undefined;
    ua.onInvite = (inc) => {
      incoming = inc;
      inc.ringing();
    };
    const peer = await rawPeer();
    peer.send(rawInvite(ua.port, peer.port, 'Require: 100rel\r\n', 'req100rel'), ua.port);
    const r180 = await peer.next((t) => status(t) === 180);
    expect(hdr(r180, 'require')).toBe('100rel');
    expect(Number(hdr(r180, 'rseq'))).toBeGreaterThan(0);
    // Unacknowledged: resent after T1.
    await peer.next((t) => status(t) === 180);
    peer.send(prackFor(r180, ua.port, peer.port, 2), ua.port);
    const prackOk = await peer.next((t) => status(t) === 200 && / PRACK/.test(hdr(t, 'cseq') ?? ''));
    expect(hdr(prackOk, 'cseq')).toBe('2 PRACK');
    const countAfterPrack = peer.received.filter((t) => status(t) === 180).length;
    incoming!.accept(ANSWER);
    const ok = await peer.next((t) => status(t) === 200 && / INVITE/.test(hdr(t, 'cseq') ?? ''));
    expect(ok).toContain('m=audio 40002');
    await new Promise((r) => setTimeout(r, 4 * FAST_TIMERS.t1Ms));
    expect(peer.received.filter((t) => status(t) === 180).length, 'no 180 resent after its PRACK').toBe(countAfterPrack);
  });

  it('a PRACK that matches nothing gets 481', async () => {
    const ua = await UserAgent.create({ host: '127.0.0.1', port: 0, timers: FAST_TIMERS });
    cleanups.push(() => ua.close());
    ua.onInvite = (inc) => inc.ringing();
    const peer = await rawPeer();
    peer.send(rawInvite(ua.port, peer.port, 'Supported: 100rel\r\n', 'badrack'), ua.port);
    const r180 = await peer.next((t) => status(t) === 180);
    peer.send(prackFor(r180, ua.port, peer.port, 2, String(Number(hdr(r180, 'rseq')) + 5)), ua.port);
    const res = await peer.next((t) => / PRACK/.test(hdr(t, 'cseq') ?? '') && status(t) >= 200);
    expect(status(res)).toBe(481);
  });

  it('no PRACK within 64*T1: the INVITE is answered 500 and the application hears prackTimeout', async () => {
    const ua = await UserAgent.create({ host: '127.0.0.1', port: 0, timers: FAST_TIMERS });
    cleanups.push(() => ua.close());
    let timedOut = false;
    ua.onInvite = (inc) => {
      inc.once('prackTimeout', () => (timedOut = true));
      inc.ringing();
    };
    const peer = await rawPeer();
    peer.send(rawInvite(ua.port, peer.port, 'Require: 100rel\r\n', 'noprack'), ua.port);
    const final = await peer.next((t) => status(t) >= 300, 64 * FAST_TIMERS.t1Ms + 2000);
    expect(status(final)).toBe(500);
    expect(timedOut).toBe(true);
    // T1, 2T1, 4T1, 8T1, 16T1, 32T1 after the first: six resends before 64*T1.
    expect(peer.received.filter((t) => status(t) === 180).length).toBe(7);
    expect(ua.stats.pending).toBe(0);
  });

  it('Require of an unknown extension still gets 420 with Unsupported', async () => {
    const ua = await UserAgent.create({ host: '127.0.0.1', port: 0, timers: FAST_TIMERS });
    cleanups.push(() => ua.close());
    ua.onInvite = (inc) => inc.ringing();
    const peer = await rawPeer();
    peer.send(rawInvite(ua.port, peer.port, 'Require: 100rel, foo\r\n', 'unknownext'), ua.port);
    const res = await peer.next((t) => status(t) >= 300);
    expect(status(res)).toBe(420);
    expect(hdr(res, 'unsupported')).toBe('foo');
  });
});

describe('PRACK: our UAC against a raw UAS', () => {
  it('a resent reliable 183 gets no second PRACK and no second progress event; RSeq+1 does', async () => {
    const ua = await UserAgent.create({ host: '127.0.0.1', port: 0, timers: FAST_TIMERS, userName: 'alice' });
    cleanups.push(() => ua.close());
    const peer = await rawPeer();
    const call = ua.invite(`sip:raw@127.0.0.1:${peer.port}`, OFFER);
    const progress: number[] = [];
    call.on('progress', (res) => progress.push(Number(header(res, 'rseq') ?? 0)));
    const invite = await peer.next((t) => t.startsWith('INVITE '));
    expect(invite).toMatch(/\r\nSupported: [^\r]*100rel/i);
    const via = hdr(invite, 'via')!;
    const base = (code: string, rseq: number, body = ANSWER) =>
      `SIP/2.0 ${code}\r\nVia: ${via}\r\nFrom: ${hdr(invite, 'from')}\r\nTo: ${hdr(invite, 'to')};tag=uas1\r\n` +
      `Call-ID: ${hdr(invite, 'call-id')}\r\nCSeq: 1 INVITE\r\nContact: <sip:raw@127.0.0.1:${peer.port}>\r\n` +
      `Require: 100rel\r\nRSeq: ${rseq}\r\nContent-Type: application/sdp\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    peer.send(base('183 Session Progress', 77), ua.port);
    const prack = await peer.next((t) => t.startsWith('PRACK '));
    expect(hdr(prack, 'rack')).toBe('77 1 INVITE');
    expect(hdr(prack, 'cseq')).toBe('2 PRACK');
    expect(hdr(prack, 'to')).toContain('tag=uas1');
    peer.send(base('183 Session Progress', 77), ua.port); // resent before our PRACK got through
    peer.send(base('180 Ringing', 78, ''), ua.port);
    const prack2 = await peer.next((t) => t.startsWith('PRACK ') && hdr(t, 'rack') === '78 1 INVITE');
    expect(hdr(prack2, 'cseq')).toBe('3 PRACK');
    await new Promise((r) => setTimeout(r, 100));
    // Transactions, not datagrams: an unanswered PRACK is resent by its own transaction (same branch).
    const transactions = new Map<string, string>();
    for (const t of peer.received.filter((x) => x.startsWith('PRACK '))) transactions.set(hdr(t, 'via')!, hdr(t, 'rack')!);
    expect([...transactions.values()]).toEqual(['77 1 INVITE', '78 1 INVITE']);
    expect(progress).toEqual([77, 78]);
    call.cancel();
  });
});

describe('PRACK challenged by the far end', () => {
  it('a PRACK answered 407 is resent once with Proxy-Authorization from the INVITE credentials and the next CSeq; the call goes on', async () => {
    const ua = await UserAgent.create({ host: '127.0.0.1', port: 0, timers: FAST_TIMERS, userName: 'alice' });
    cleanups.push(() => ua.close());
    const peer = await rawPeer();
    const nonces = new DigestNonces({ secret: randomBytes(32), clock: systemClock });
    const realm = 'carrier.test';
    const call = ua.invite(`sip:raw@127.0.0.1:${peer.port}`, OFFER, { credentials: digestCredentials('trunkuser', 'trunk-secret') });
    const invite = await peer.next((t) => t.startsWith('INVITE '));
    const via = hdr(invite, 'via')!;
    const common = `From: ${hdr(invite, 'from')}\r\nTo: ${hdr(invite, 'to')};tag=uas1\r\nCall-ID: ${hdr(invite, 'call-id')}\r\n`;
    peer.send(
      `SIP/2.0 183 Session Progress\r\nVia: ${via}\r\n${common}CSeq: 1 INVITE\r\nContact: <sip:raw@127.0.0.1:${peer.port}>\r\n` +
        `Require: 100rel\r\nRSeq: 9\r\nContent-Type: application/sdp\r\nContent-Length: ${Buffer.byteLength(ANSWER)}\r\n\r\n${ANSWER}`,
      ua.port,
    );
    const reply = (req: string, code: string, extra = '') =>
      `SIP/2.0 ${code}\r\nVia: ${hdr(req, 'via')}\r\n${common}CSeq: ${hdr(req, 'cseq')}\r\n${extra}Content-Length: 0\r\n\r\n`;
    const prack = await peer.next((t) => t.startsWith('PRACK '));
    expect(hdr(prack, 'cseq')).toBe('2 PRACK');
    expect(hdr(prack, 'proxy-authorization')).toBeUndefined();
    const challenge = formatChallenge(createChallenge(realm, nonces, { algorithm: 'SHA-256' }));
    peer.send(reply(prack, '407 Proxy Authentication Required', `Proxy-Authenticate: ${challenge}\r\n`), ua.port);

    const answered = await peer.next((t) => t.startsWith('PRACK ') && hdr(t, 'proxy-authorization') !== undefined);
    expect(hdr(answered, 'cseq')).toBe('3 PRACK');
    expect(hdr(answered, 'rack')).toBe('9 1 INVITE');
    const creds = parseCredentials(hdr(answered, 'proxy-authorization')!)!;
    expect(creds.username).toBe('trunkuser');
    expect(verifyCredentials(creds, { realm, method: 'PRACK', nonces, password: 'trunk-secret' }).ok).toBe(true);
    peer.send(reply(answered, '200 OK'), ua.port);
    peer.send(
      `SIP/2.0 200 OK\r\nVia: ${via}\r\n${common}CSeq: 1 INVITE\r\nContact: <sip:raw@127.0.0.1:${peer.port}>\r\nContent-Length: 0\r\n\r\n`,
      ua.port,
    );
    const dialog = await call.result;
    // One PRACK transaction per challenge answered: the first, then the one with credentials.
    const branches = new Set(peer.received.filter((t) => t.startsWith('PRACK ')).map((t) => hdr(t, 'via')));
    expect(branches.size).toBe(2);
    // The dialog goes on past the answered PRACK's CSeq.
    const bye = dialog.bye();
    const byeSeen = await peer.next((t) => t.startsWith('BYE '));
    expect(hdr(byeSeen, 'cseq')).toBe('4 BYE');
    peer.send(reply(byeSeen, '200 OK'), ua.port);
    await bye;
  });

  it('a PRACK challenged with no credentials to answer is not resent', async () => {
    const ua = await UserAgent.create({ host: '127.0.0.1', port: 0, timers: FAST_TIMERS, userName: 'alice' });
    cleanups.push(() => ua.close());
    const peer = await rawPeer();
    const nonces = new DigestNonces({ secret: randomBytes(32), clock: systemClock });
    const call = ua.invite(`sip:raw@127.0.0.1:${peer.port}`, OFFER);
    const invite = await peer.next((t) => t.startsWith('INVITE '));
    const common = `Via: ${hdr(invite, 'via')}\r\nFrom: ${hdr(invite, 'from')}\r\nTo: ${hdr(invite, 'to')};tag=uas1\r\nCall-ID: ${hdr(invite, 'call-id')}\r\n`;
    peer.send(`SIP/2.0 180 Ringing\r\n${common}CSeq: 1 INVITE\r\nContact: <sip:raw@127.0.0.1:${peer.port}>\r\nRequire: 100rel\r\nRSeq: 1\r\nContent-Length: 0\r\n\r\n`, ua.port);
    const prack = await peer.next((t) => t.startsWith('PRACK '));
    const challenge = formatChallenge(createChallenge('carrier.test', nonces, { algorithm: 'MD5' }));
    peer.send(`SIP/2.0 401 Unauthorized\r\nVia: ${hdr(prack, 'via')}\r\nFrom: ${hdr(prack, 'from')}\r\nTo: ${hdr(prack, 'to')}\r\nCall-ID: ${hdr(prack, 'call-id')}\r\nCSeq: ${hdr(prack, 'cseq')}\r\nWWW-Authenticate: ${challenge}\r\nContent-Length: 0\r\n\r\n`, ua.port);
    await new Promise((r) => setTimeout(r, 300));
    expect(new Set(peer.received.filter((t) => t.startsWith('PRACK ')).map((t) => hdr(t, 'via'))).size).toBe(1);
    call.cancel();
  });
});
