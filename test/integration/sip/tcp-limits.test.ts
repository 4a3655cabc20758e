/**
 * The bounds on SIP over TCP at the socket: a real SipTransport on loopback, real client sockets
 * bound to distinct 127/8 addresses (Linux routes all of 127/8 to lo).
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { SipRequest } from '../../../src/sip/message.ts';
import { TcpAdmission } from '../../../src/sip/tcp-admission.ts';
import { SipTransport, type SipTransportOptions } from '../../../src/sip/transport.ts';

let transport: SipTransport | undefined;
const clients: net.Socket[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.destroy();
  await transport?.close();
  transport = undefined;
});

const requests: SipRequest[] = [];
async function listen(opts: Partial<SipTransportOptions>): Promise<SipTransport> {
  requests.length = 0;
  transport = await SipTransport.listen(
    { host: '127.0.0.1', port: 0, transports: ['tcp'], ...opts },
    { onRequest: (req) => requests.push(req), onResponse: () => undefined },
  );
  return transport;
}

interface Client {
  socket: net.Socket;
  /** Resolves when the server closed or reset it, with the time. */
  closed: Promise<number>;
}

async function connect(port: number, from: string): Promise<Client> {
  const socket = net.connect({ host: '127.0.0.1', port, localAddress: from });
  clients.push(socket);
  socket.on('error', () => undefined);
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now())));
  // A refused connection may be reset before 'connect' is even reported.
  await new Promise<void>((resolve) => {
    socket.once('connect', resolve);
    socket.once('close', () => resolve());
  });
  return { socket, closed };
}

/** Whether the server reset or closed the connection within `ms`. */
async function closedWithin(c: Client, ms: number): Promise<boolean> {
  return Promise.race([c.closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);
}

function options(port: number, callId: string): string {
  return (
    `OPTIONS sip:engine@127.0.0.1:${port} SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.9:5060;branch=z9hG4bK-${callId}\r\n` +
    `Max-Forwards: 70\r\nFrom: <sip:probe@127.0.0.9>;tag=p1\r\nTo: <sip:engine@127.0.0.1>\r\nCall-ID: ${callId}\r\n` +
    `CSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n`
  );
}

describe('SIP over TCP limits', () => {
  it('closes a connection trickling one byte a second at the message deadline', async () => {
    const t = await listen({ messageTimeoutMs: 2500, idleTimeoutMs: 60_000 });
    const c = await connect(t.localPort, '127.0.3.1');
    const text = options(t.localPort, 'trickle');
    const start = performance.now();
    let sent = 0;
    // One byte a second, never the whole message: at most 8 s of trickling.
    const trickle = setInterval(() => {
      if (!c.socket.destroyed && sent < 8) c.socket.write(text[sent++]!);
    }, 1000);
    c.socket.write(text[sent++]!);
    try {
      expect(await closedWithin(c, 8000)).toBe(true);
    } finally {
      clearInterval(trickle);
    }
    const after = (await c.closed) - start;
    expect(after).toBeGreaterThanOrEqual(2400);
    expect(after).toBeLessThan(4500);
    expect(t.expired).toEqual({ message: 1, idle: 0 });
    expect(requests).toHaveLength(0);
  });

  it('a message that arrives whole in time is handled, and the connection then stays open', async () => {
    const t = await listen({ messageTimeoutMs: 1000, idleTimeoutMs: 60_000 });
    const c = await connect(t.localPort, '127.0.3.2');
    const text = options(t.localPort, 'split');
    c.socket.write(text.slice(0, 50));
    await new Promise((r) => setTimeout(r, 300));
    c.socket.write(text.slice(50));
    expect(await closedWithin(c, 1500)).toBe(false);
    expect(requests.map((r) => r.headers.find((h) => h.name === 'call-id')?.value)).toEqual(['split']);
  });

  it('closes an idle connection, and stray CRLFs do not keep it alive', async () => {
    const t = await listen({ messageTimeoutMs: 10_000, idleTimeoutMs: 1200 });
    const c = await connect(t.localPort, '127.0.3.3');
    c.socket.write('\r\n\r\n'); // a keep-alive ping: the connection is in use, the idle timeout applies
    const start = performance.now();
    const stray = setInterval(() => c.socket.destroyed || c.socket.write('\n'), 200);
    try {
      expect(await closedWithin(c, 4000)).toBe(true);
    } finally {
      clearInterval(stray);
    }
    expect((await c.closed) - start).toBeLessThan(2500);
    expect(t.expired.idle).toBe(1);
  });

  it('closes an inbound connection that sends nothing at the message deadline', async () => {
    const t = await listen({ messageTimeoutMs: 1000, idleTimeoutMs: 60_000 });
    const silent = await connect(t.localPort, '127.0.3.4');
    const pinged = await connect(t.localPort, '127.0.3.5');
    pinged.socket.write('\r\n\r\n');
    expect(await closedWithin(silent, 3000)).toBe(true);
    expect(await closedWithin(pinged, 100)).toBe(false);
    expect(t.expired).toEqual({ message: 1, idle: 0 });
  });

  it('resets connections past the per-source cap at once; other sources still get in', async () => {
    const admission = new TcpAdmission({ maxConnections: 100, maxPerSource: 3, acceptRatePerSecond: 1000 });
    const t = await listen({ admission });
    const from5 = [];
    for (let i = 0; i < 5; i++) from5.push(await connect(t.localPort, '127.0.4.1'));
    const closed = await Promise.all(from5.map((c) => closedWithin(c, 1000)));
    expect(closed.filter(Boolean)).toHaveLength(2);
    expect(t.refused.per_source).toBe(2);
    const other = await connect(t.localPort, '127.0.4.2');
    other.socket.write(options(t.localPort, 'other-source'));
    expect(await closedWithin(other, 500)).toBe(false);
    expect(requests).toHaveLength(1);
    expect(t.connectionCount).toBe(4);
    expect(admission.open).toBe(4);
    // Closing releases the slot.
    from5.find((_, i) => !closed[i])!.socket.destroy();
    await new Promise((r) => setTimeout(r, 200));
    expect(admission.open).toBe(3);
    expect(await closedWithin(await connect(t.localPort, '127.0.4.1'), 500)).toBe(false);
  });

  it('resets connections past the per-source accept rate and past the total cap', async () => {
    const admission = new TcpAdmission({ maxConnections: 10, maxPerSource: 100, acceptRatePerSecond: 2, trustedReserve: 0 });
    const t = await listen({ admission });
    const burst = [];
    for (let i = 0; i < 7; i++) burst.push(await connect(t.localPort, '127.0.5.1'));
    expect((await Promise.all(burst.map((c) => closedWithin(c, 1000)))).filter(Boolean)).toHaveLength(3);
    expect(t.refused.rate).toBe(3);
    const spread = [];
    for (let i = 0; i < 10; i++) spread.push(await connect(t.localPort, `127.0.5.${10 + i}`));
    expect((await Promise.all(spread.map((c) => closedWithin(c, 1000)))).filter(Boolean)).toHaveLength(4);
    expect(t.refused.total).toBe(4);
    expect(t.connectionCount).toBe(10);
  });
});
