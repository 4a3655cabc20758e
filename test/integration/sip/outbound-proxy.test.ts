/**
 * SIP_OUTBOUND_PROXY: every out-of-dialog request the UA starts (INVITE, REGISTER, OPTIONS) is
 * sent to the proxy, with a preloaded `Route: <sip:proxy;lr>` and the far end still in the
 * Request-URI; without it, the same requests go where their Request-URI says. The "proxy" and
 * the "carrier" are raw UDP sockets on loopback that only record what reaches them.
 */
import dgram from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { headers, type SipRequest } from '../../../src/sip/message.ts';
import { parseMessage } from '../../../src/sip/parser.ts';
import { UserAgent } from '../../../src/sip/user-agent.ts';
import { FAST_TIMERS } from '../../support/test-phone.ts';

/** A UDP socket that records the SIP requests it gets and answers none. */
async function listener(host: string): Promise<{ port: number; got: SipRequest[]; close(): void }> {
  const socket = dgram.createSocket('udp4');
  const got: SipRequest[] = [];
  socket.on('message', (msg) => {
    const parsed = parseMessage(msg);
    if (parsed.ok && parsed.message.kind === 'request') got.push(parsed.message);
  });
  await new Promise<void>((r) => socket.bind(0, host, () => r()));
  return { port: socket.address().port, got, close: () => socket.close() };
}

const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const item of open.splice(0)) await item.close();
});

async function waitFor(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!cond()) throw new Error(`timed out waiting for ${what}`);
}

describe('outbound proxy (SIP_OUTBOUND_PROXY)', () => {
  it('sends INVITE, REGISTER and OPTIONS to the proxy with a preloaded loose Route; the Request-URI still names the far end', async () => {
    const proxy = await listener('127.0.0.1');
    const carrier = await listener('127.0.0.1');
    open.push(proxy, carrier);
    const ua = await UserAgent.create({ host: '127.0.0.1', port: 0, transports: ['udp'], timers: FAST_TIMERS, outboundProxy: { host: '127.0.0.1', port: proxy.port } });
    open.push(ua);
    const target = `sip:+14155550199@127.0.0.1:${carrier.port}`;

    ua.invite(target, 'v=0\r\n');
    void ua.options(`sip:127.0.0.1:${carrier.port}`);
    ua.register({ registrar: `sip:127.0.0.1:${carrier.port}`, aor: `sip:trunk@127.0.0.1:${carrier.port}` });
    await waitFor(() => new Set(proxy.got.map((r) => r.method)).size === 3, 'INVITE, OPTIONS and REGISTER at the proxy');

    for (const method of ['INVITE', 'OPTIONS', 'REGISTER']) {
      const req = proxy.got.find((r) => r.method === method)!;
      expect(headers(req, 'route'), method).toEqual([`<sip:127.0.0.1:${proxy.port};lr>`]);
      expect(req.uri, method).toContain(`127.0.0.1:${carrier.port}`);
    }
    expect(proxy.got.find((r) => r.method === 'INVITE')!.uri).toBe(target);
    expect(carrier.got).toEqual([]);
  });

  it('without a proxy the same requests go where their Request-URI says, with no Route', async () => {
    const carrier = await listener('127.0.0.1');
    open.push(carrier);
    const ua = await UserAgent.create({ host: '127.0.0.1', port: 0, transports: ['udp'], timers: FAST_TIMERS });
    open.push(ua);
    ua.invite(`sip:+14155550199@127.0.0.1:${carrier.port}`, 'v=0\r\n');
    void ua.options(`sip:127.0.0.1:${carrier.port}`);
    await waitFor(() => new Set(carrier.got.map((r) => r.method)).size === 2, 'INVITE and OPTIONS at the carrier');
    for (const req of carrier.got) expect(headers(req, 'route')).toEqual([]);
  });
});
