/**
 * The connect-time guard over real loopback sockets. Loopback plays both sides: addresses the
 * allow-list opens stand for public servers, 127.0.0.1 (not opened) for the internal target an
 * attacker wants to reach.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createOutbound, OutboundRefusedError, type Outbound } from '../../../src/net/outbound/index.ts';
import { HttpSink } from '../../support/http-sink.ts';
import { internalAndOutside, ScriptedDns } from '../../support/outbound.ts';

const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.close();
});

function guard(allow: string[], dns?: ScriptedDns): Outbound {
  const o = createOutbound({ allowCidrs: allow, ...(dns && { resolve: dns.resolve }) });
  open.push(o);
  return o;
}

async function sink(at: { host?: string; port?: number } = {}): Promise<HttpSink> {
  const s = await HttpSink.start(at);
  open.push(s);
  return s;
}

async function internalAndPublic() {
  const pair = await internalAndOutside();
  open.push(pair);
  return pair;
}

const post = (o: Outbound, url: string) => o.fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}', signal: AbortSignal.timeout(5000) });

describe('outbound guard at connect time', () => {
  it('refuses a loopback literal by default; the server receives nothing', async () => {
    const s = await sink();
    const o = guard([]);
    const err = await post(o, `${s.url}/hook`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutboundRefusedError);
    expect((err as OutboundRefusedError).message).toBe('refused to connect: 127.0.0.1 is a loopback address (customer URLs may only reach public addresses)');
    expect((err as OutboundRefusedError).kind).toBe('loopback');
    expect(s.received).toHaveLength(0);
  });

  it('refuses [::1] and the link-local metadata address, over http and https, before any connection', async () => {
    const o = guard([]);
    for (const url of ['http://[::1]:9/x', 'https://[::1]:9/x', 'http://169.254.169.254/latest/meta-data/', 'https://169.254.169.254/x', 'http://[::ffff:127.0.0.1]:9/x', 'http://0.0.0.0:9/x']) {
      const err = await post(o, url).catch((e: unknown) => e);
      expect(err, url).toBeInstanceOf(OutboundRefusedError);
    }
  });

  it('refuses a name the system resolver answers with loopback (localhost)', async () => {
    const s = await sink();
    const o = guard([]);
    const err = await post(o, `http://localhost:${s.port}/hook`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutboundRefusedError);
    expect((err as Error).message).toMatch(/^refused to connect: localhost resolves to (127\.0\.0\.1|::1), a loopback address/);
    expect(s.received).toHaveLength(0);
  });

  it('refuses a name that resolves to 127.0.0.1, over https too', async () => {
    const s = await sink();
    const dns = new ScriptedDns({ 'hooks.customer.test': ['127.0.0.1'] });
    const o = guard([], dns);
    for (const scheme of ['http', 'https']) {
      const err = await post(o, `${scheme}://hooks.customer.test:${s.port}/hook`).catch((e: unknown) => e);
      expect(err, scheme).toBeInstanceOf(OutboundRefusedError);
      expect((err as Error).message).toContain('hooks.customer.test resolves to 127.0.0.1, a loopback address');
    }
    expect(s.received).toHaveLength(0);
  });

  it('the allow-list opens a loopback server, by literal and by name', async () => {
    const s = await sink();
    const dns = new ScriptedDns({ 'tools.onprem.test': ['127.0.0.1'] });
    const o = guard(['127.0.0.0/8'], dns);
    expect((await post(o, `${s.url}/a`)).status).toBe(200);
    expect((await post(o, `http://tools.onprem.test:${s.port}/b`)).status).toBe(200);
    expect(s.received.map((d) => d.path)).toEqual(['/a', '/b']);
    expect(s.received[0]!.body).toBe('{"a":1}');
  });

  it('DNS rebinding: a name that answered a permitted address and then 127.0.0.1 is refused on the second connection', async () => {
    const { internal, outside, port } = await internalAndPublic();
    // Close the connection after each answer, so the second request has to connect (and look up) again.
    outside.responder = () => ({ status: 200, body: { ok: true }, headers: { connection: 'close' } });
    const dns = new ScriptedDns({ 'rebind.attacker.test': ['127.0.0.2', '127.0.0.1'] });
    const o = guard(['127.0.0.2/32'], dns);
    expect((await post(o, `http://rebind.attacker.test:${port}/first`)).status).toBe(200);
    const err = await post(o, `http://rebind.attacker.test:${port}/second`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutboundRefusedError);
    expect((err as Error).message).toContain('rebind.attacker.test resolves to 127.0.0.1, a loopback address');
    expect(outside.received.map((d) => d.path)).toEqual(['/first']);
    expect(internal.received).toHaveLength(0);
    // One lookup per connection: the answer checked is the answer connected to.
    expect(dns.asked).toEqual(['rebind.attacker.test', 'rebind.attacker.test']);
  });

  it('of a mixed answer only the permitted addresses are connected to', async () => {
    const { internal, outside, port } = await internalAndPublic();
    const dns = new ScriptedDns({ 'mixed.test': [['127.0.0.1', '127.0.0.2']] });
    const o = guard(['127.0.0.2/32'], dns);
    expect((await post(o, `http://mixed.test:${port}/x`)).status).toBe(200);
    expect(outside.received).toHaveLength(1);
    expect(internal.received).toHaveLength(0);
  });

  it('does not follow a redirect to an internal address: the 3xx comes back as it is', async () => {
    const { internal, outside, port } = await internalAndPublic();
    outside.responder = () => ({ status: 307, body: {}, headers: { location: `http://127.0.0.1:${port}/internal` } });
    const o = guard(['127.0.0.2/32']);
    const res = await post(o, `http://127.0.0.2:${port}/hook`);
    expect(res.status).toBe(307);
    expect(res.headers.get('location')).toBe(`http://127.0.0.1:${port}/internal`);
    expect(internal.received).toHaveLength(0);
  });

  it('refuses what it cannot guard (another scheme, a stream body) instead of handing it to the global fetch', async () => {
    const s = await sink();
    const o = guard(['127.0.0.0/8']);
    await expect(o.fetch('ftp://127.0.0.1/x')).rejects.toThrow(TypeError);
    const stream = new ReadableStream({ start: (c) => (c.enqueue(new TextEncoder().encode('x')), c.close()) });
    await expect(o.fetch(`${s.url}/x`, { method: 'POST', body: stream, duplex: 'half' } as RequestInit)).rejects.toThrow(TypeError);
    expect(s.received).toHaveLength(0);
  });
});
