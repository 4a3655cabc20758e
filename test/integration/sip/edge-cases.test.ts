import dgram from 'node:dgram';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { computeDigestResponse, parseCredentials } from '../../../src/sip/digest.ts';
import type { Dialog } from '../../../src/sip/dialog.ts';
import { header } from '../../../src/sip/message.ts';
import { digestCredentials } from '../../../src/sip/user-agent-auth.ts';
import { UserAgent } from '../../../src/sip/user-agent.ts';
import { ANSWER, OFFER, once, target, uaPair, FAST_TIMERS } from './ua-pair.ts';

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

function rawRequest(method: string, port: number, localPort: number, extra = ''): string {
  return (
    `${method} sip:bob@127.0.0.1:${port} SIP/2.0\r\n` +
    `Via: SIP/2.0/UDP 127.0.0.1:${localPort};branch=z9hG4bK-raw-${method}-${Math.random().toString(16).slice(2)};rport\r\n` +
    `Max-Forwards: 70\r\nFrom: <sip:raw@127.0.0.1>;tag=raw1\r\nTo: <sip:bob@127.0.0.1>\r\n` +
    `Call-ID: raw-${method}@127.0.0.1\r\nCSeq: 1 ${method}\r\n${extra}Content-Length: 0\r\n\r\n`
  );
}

async function udpExchange(port: number, build: (localPort: number) => string): Promise<string> {
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
  try {
    const reply = new Promise<string>((resolve) => sock.on('message', (m) => {
      const text = m.toString();
      if (!text.startsWith('SIP/2.0 100')) resolve(text);
    }));
    sock.send(build(sock.address().port), port, '127.0.0.1');
    return await reply;
  } finally {
    sock.close();
  }
}

describe('UAS answers over raw sockets', () => {
  it('unknown method → 501 with Allow; known but unsupported → 405; rport/received stamped', async () => {
    const ua = await UserAgent.create({ host: '127.0.0.1', port: 0, timers: FAST_TIMERS });
    cleanup = () => ua.close();
    const r501 = await udpExchange(ua.port, (lp) => rawRequest('FOOBAR', ua.port, lp));
    expect(r501).toMatch(/^SIP\/2\.0 501 /);
    expect(r501).toMatch(/\r\nAllow: INVITE, ACK, CANCEL, BYE/);
    expect(r501).toMatch(/;rport=\d+/);
    expect(r501).toMatch(/;received=127\.0\.0\.1/);
    const r405 = await udpExchange(ua.port, (lp) => rawRequest('SUBSCRIBE', ua.port, lp, 'Event: presence\r\n'));
    expect(r405).toMatch(/^SIP\/2\.0 405 /);
    expect(r405).toMatch(/\r\nAllow: /);
  });

  it('malformed request with readable headers → 400; garbage is dropped without harm', async () => {
    const ua = await UserAgent.create({ host: '127.0.0.1', port: 0, timers: FAST_TIMERS });
    cleanup = () => ua.close();
    const bad = await udpExchange(ua.port, (lp) => rawRequest('OPTIONS', ua.port, lp).replace('CSeq: 1 OPTIONS', 'CSeq: x OPTIONS'));
    expect(bad).toMatch(/^SIP\/2\.0 400 /);
    const sock = dgram.createSocket('udp4');
    sock.send(Buffer.from('\x00\x01garbage\r\n\r\n'), ua.port, '127.0.0.1', () => sock.close());
    const ok = await udpExchange(ua.port, (lp) => rawRequest('OPTIONS', ua.port, lp));
    expect(ok).toMatch(/^SIP\/2\.0 200 /);
  });

  it('answers over TCP on the connection the request came in on', async () => {
    const ua = await UserAgent.create({ host: '127.0.0.1', port: 0, timers: FAST_TIMERS });
    cleanup = () => ua.close();
    const sock = net.connect(ua.port, '127.0.0.1');
    await once<void>((cb) => sock.once('connect', () => cb()));
    const reply = once<string>((cb) => sock.once('data', (d) => cb(d.toString())));
    sock.write(rawRequest('OPTIONS', ua.port, 5999).replace('SIP/2.0/UDP', 'SIP/2.0/TCP'));
    expect(await reply).toMatch(/^SIP\/2\.0 200 /);
    sock.destroy();
  });
});

describe('authentication and session timers', () => {
  it('answers a 401 digest challenge and the call goes through', async () => {
    const { alice, bob, close } = await uaPair();
    cleanup = close;
    let challenges = 0;
    bob.onInvite = (inc) => {
      const auth = header(inc.request, 'authorization');
      const creds = auth === undefined ? undefined : parseCredentials(auth);
      if (!creds) {
        challenges++;
        inc.reject(401, undefined, [{ name: 'www-authenticate', value: 'Digest realm="sb", nonce="n0nce", qop="auth", algorithm=MD5' }]);
        return;
      }
      const expected = computeDigestResponse({
        username: creds.username, realm: 'sb', password: 'secret', method: 'INVITE', uri: creds.uri, nonce: 'n0nce',
        ...(creds.qop !== undefined && { qop: creds.qop }), ...(creds.nc !== undefined && { nc: creds.nc }), ...(creds.cnonce !== undefined && { cnonce: creds.cnonce }),
      });
      if (creds.response === expected) inc.accept(ANSWER);
      else inc.reject(403);
    };
    const dialog = await alice.invite(target(bob), OFFER, { credentials: digestCredentials('alice', 'secret') }).result;
    expect(challenges).toBe(1);
    await dialog.bye();
  });

  it('a wrong password ends in the final challenge failure, not a loop', async () => {
    const { alice, bob, close } = await uaPair();
    cleanup = close;
    bob.onInvite = (inc) => inc.reject(401, undefined, [{ name: 'www-authenticate', value: 'Digest realm="sb", nonce="n", algorithm=MD5' }]);
    const err = await alice.invite(target(bob), OFFER, { credentials: digestCredentials('a', 'b') }).result.catch((e: unknown) => e);
    expect((err as { status: number }).status).toBe(401);
  });

  it('negotiates Session-Expires and keeps the session alive by refreshing', async () => {
    const { alice, bob, close } = await uaPair({ minSeSec: 1 });
    cleanup = close;
    const bobDialog = once<Dialog>((cb) => {
      bob.onInvite = (inc) => cb(inc.accept(ANSWER));
    });
    const ad = await alice.invite(target(bob), OFFER, { sessionExpiresSec: 2 }).result;
    const bd = await bobDialog;
    expect(ad.sessionExpires).toEqual({ deltaSec: 2, weRefresh: true });
    expect(bd.sessionExpires).toEqual({ deltaSec: 2, weRefresh: false });
    // Without refreshes Bob would hang up after ~1.33 s.
    await new Promise((r) => setTimeout(r, 2500));
    expect(ad.state).toBe('confirmed');
    expect(bd.state).toBe('confirmed');
    await ad.bye();
  });

  it('rejects a Session-Expires below Min-SE with 422', async () => {
    const { alice, bob, close } = await uaPair();
    cleanup = close;
    bob.onInvite = (inc) => inc.accept(ANSWER);
    const err = await alice.invite(target(bob), OFFER, { sessionExpiresSec: 30 }).result.catch((e: unknown) => e);
    expect((err as { status: number }).status).toBe(422);
    expect(header((err as { response: import('../../../src/sip/message.ts').SipResponse }).response, 'min-se')).toBe('90');
  });
});

describe('resource hygiene', () => {
  it('close() releases sockets, transactions, dialogs and timers', async () => {
    const kinds = () => process.getActiveResourcesInfo().filter((k) => /UDP|TCP|Timeout/.test(k)).length;
    const before = kinds();
    const { alice, bob, close } = await uaPair();
    bob.onInvite = (inc) => {
      inc.ringing();
      inc.accept(ANSWER);
    };
    const d1 = await alice.invite(target(bob, 'tcp'), OFFER).result;
    const d2 = await alice.invite(target(bob), OFFER).result;
    await d1.bye();
    void d2; // left up on purpose: close() must release it without a BYE
    const pending = alice.invite('sip:nobody@127.0.0.1:9', OFFER); // still retransmitting at close
    await close();
    await close(); // idempotent
    await pending.result.catch(() => undefined);
    for (const ua of [alice, bob]) {
      expect(ua.stats).toMatchObject({ transactions: 0, transactionTimers: 0, dialogs: 0, connections: 0, pending: 0 });
    }
    await new Promise((r) => setTimeout(r, 50));
    expect(kinds()).toBeLessThanOrEqual(before);
  });
});
