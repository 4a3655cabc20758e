/**
 * The browser-call signalling socket's guards, over real WebSockets on loopback against the real
 * engine (the e2e world): the origin, the key (first message or Authorization header, never the
 * URL), message size and rate, one call per socket, the account's balance and live-call cap, an
 * offer without audio, and the time limits (authentication, ICE/DTLS connection). A werift peer
 * stands in for the browser where an offer is needed. Each refusal is a clear close code or an
 * `error` message, and a call that never connects leaves a `web` record that failed.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MediaStreamTrack, RTCPeerConnection, RtpHeader, RtpPacket } from 'werift';
import { opusCodec } from '../../../src/media/codecs/opus.ts';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dollarsToMicros } from '../../../src/util/money.ts';
import { SignallingServer } from '../../../src/webrtc/signalling-socket.ts';
import { WebCalls } from '../../../src/webrtc/web-calls.ts';
import type { IceServerConfig } from '../../../src/config.ts';
import { startTurnServer, turnAvailable } from '../../support/turn-server.ts';
import { freePort, startWorld, type World } from '../e2e/world.ts';

let w: World;
let assistantId: number;
/** A second signalling server on the same engine, with short time limits and a zero live-call cap where asked. */
let quick: { url: string; close(): Promise<void> };
let capped: { url: string; close(): Promise<void> };

async function serve(opts: { maxPerAccount?: number; connectTimeoutMs?: number; iceServers?: IceServerConfig[] }): Promise<{ url: string; close(): Promise<void> }> {
  const env = w.engine.sip.env;
  const limited = opts.maxPerAccount === undefined ? env : { ...env, limits: { ...env.limits, maxPerAccount: opts.maxPerAccount } };
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  const signalling = new SignallingServer({
    calls: new WebCalls({ env: limited, iceServers: opts.iceServers ?? [], host: '127.0.0.1', connectTimeoutMs: opts.connectTimeoutMs ?? 20_000 }),
    accountForKey: (key) => w.engine.ctx.repos.accounts.accountForKey(key),
    clock: env.clock,
    logger: env.logger,
    allowedOrigins: [],
    authTimeoutMs: 400,
    idleTimeoutMs: 400,
  });
  signalling.attach(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/api/user/webrtc`;
  return {
    url,
    async close() {
      await signalling.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

beforeAll(async () => {
  w = await startWorld();
  assistantId = await w.assistant();
  quick = await serve({ connectTimeoutMs: 1_500 });
  capped = await serve({ maxPerAccount: 0 });
}, 60_000);

afterAll(async () => {
  await quick?.close();
  await capped?.close();
  await w?.close();
});

const engineUrl = (): string => `${w.engine.httpUrl.replace(/^http/, 'ws')}/api/user/webrtc`;

interface Session {
  ws: WebSocket;
  messages: Record<string, any>[];
  closed: Promise<{ code: number; reason: string }>;
  next(type: string, timeoutMs?: number): Promise<Record<string, any>>;
  send(msg: unknown): void;
}

function open(url: string, headers: Record<string, string> = {}): Promise<Session> {
  const ws = new WebSocket(url, { headers });
  const messages: Record<string, any>[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  ws.on('message', (data) => messages.push(JSON.parse(data.toString()) as Record<string, any>));
  return new Promise((resolve, reject) => {
    ws.once('open', () =>
      resolve({
        ws,
        messages,
        closed,
        send: (msg) => ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg)),
        async next(type, timeoutMs = 5_000) {
          const deadline = Date.now() + timeoutMs;
          for (;;) {
            const found = messages.find((m) => m.type === type);
            if (found) return found;
            if (Date.now() > deadline) throw new Error(`no ${type} message; got ${JSON.stringify(messages)}`);
            await new Promise((r) => setTimeout(r, 20));
          }
        },
      }),
    );
    ws.once('error', reject);
  });
}

async function authed(url = engineUrl(), key = w.account.key): Promise<Session> {
  const s = await open(url);
  s.send({ type: 'auth', key });
  await s.next('ready');
  return s;
}

async function browserOffer(): Promise<{ pc: RTCPeerConnection; sdp: string }> {
  const pc = new RTCPeerConnection({ iceAdditionalHostAddresses: ['127.0.0.1'], iceInterfaceAddresses: { udp4: '127.0.0.1' }, iceUseIpv6: false });
  pc.addTransceiver('audio', { direction: 'sendrecv' });
  const offer = await pc.createOffer();
  await pc.setLocalDescription(offer);
  return { pc, sdp: offer.sdp };
}

describe('the signalling socket refuses', () => {
  it('an upgrade from a foreign origin, with 403 before any WebSocket exists', async () => {
    const ws = new WebSocket(engineUrl(), { headers: { origin: 'https://evil.example' } });
    const status = await new Promise<number>((resolve) => {
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => resolve(101));
      ws.on('error', () => undefined);
    });
    expect(status).toBe(403);
  });

  it('a wrong key, and a first message that is not auth, closing with 4401', async () => {
    const wrong = await open(engineUrl());
    wrong.send({ type: 'auth', key: 'sk-not-a-key' });
    expect(await wrong.closed).toEqual({ code: 4401, reason: 'unauthorized' });
    const early = await open(engineUrl());
    early.send({ type: 'call', assistant_id: assistantId, sdp: 'v=0' });
    expect((await early.closed).code).toBe(4401);
    expect(early.messages).toEqual([]);
  });

  it('a socket that never authenticates, closing with 4408 at the time limit', async () => {
    const s = await open(quick.url);
    const started = Date.now();
    expect((await s.closed).code).toBe(4408);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('more than 10 unauthenticated sockets from one address (503), while authenticated ones do not count', async () => {
    const ok: Session[] = [];
    for (let i = 0; i < 3; i++) ok.push(await authed(engineUrl()));
    const idle: Session[] = [];
    for (let i = 0; i < 10; i++) idle.push(await open(engineUrl()));
    const status = await new Promise<number>((resolve) => {
      const ws = new WebSocket(engineUrl());
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => resolve(101));
      ws.on('error', () => undefined);
    });
    expect(status).toBe(503);
    for (const s of [...ok, ...idle]) s.ws.close();
    await Promise.all([...ok, ...idle].map((s) => s.closed));
    // Closed sockets give their places back.
    const again = await open(engineUrl());
    again.ws.close();
  });

  it('a message over 64 KiB (1009) and a flood of messages (4429)', async () => {
    const big = await authed();
    big.send({ type: 'candidate', candidate: 'x'.repeat(70 * 1024) });
    expect((await big.closed).code).toBe(1009);
    const flood = await authed();
    for (let i = 0; i < 100; i++) flood.send({ type: 'candidate', candidate: 'candidate:1 1 udp 1 127.0.0.1 9 typ host' });
    expect(await flood.closed).toEqual({ code: 4429, reason: 'too many messages' });
  });

  it('an unknown message with 4400 once authenticated', async () => {
    const s = await authed();
    s.send({ type: 'dial', number: '+15550100' });
    expect((await s.closed).code).toBe(4400);
  });

  it('a call to another account’s or a missing assistant, an empty balance and the live-call cap, each with its error', async () => {
    const missing = await authed();
    missing.send({ type: 'call', assistant_id: 999_999, sdp: 'v=0' });
    expect(await missing.next('error')).toMatchObject({ code: 'NOT_FOUND' });
    expect((await missing.closed).code).toBe(1000);

    const repos = w.engine.ctx.repos;
    const other = await repos.accounts.create('other');
    const otherKey = await repos.accounts.createKey(other.id);
    const broke = await authed(engineUrl(), otherKey);
    broke.send({ type: 'call', assistant_id: assistantId, sdp: 'v=0' });
    expect(await broke.next('error')).toMatchObject({ code: 'NOT_FOUND' }); // another account's assistant

    const full = await authed(capped.url);
    full.send({ type: 'call', assistant_id: assistantId, sdp: 'v=0' });
    expect(await full.next('error')).toMatchObject({ code: 'CALL_LIMIT' });

    await repos.ledger.adjust(w.account.id, -(await repos.ledger.balance(w.account.id)), 'empty');
    try {
      const empty = await authed();
      empty.send({ type: 'call', assistant_id: assistantId, sdp: 'v=0' });
      expect(await empty.next('error')).toMatchObject({ code: 'INSUFFICIENT_BALANCE' });
    } finally {
      await repos.ledger.adjust(w.account.id, dollarsToMicros(10), 'top-up');
    }
  });

  it('an offer without audio (BAD_OFFER), and a second call on one socket', async () => {
    const bad = await authed();
    bad.send({ type: 'call', assistant_id: assistantId, sdp: 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n' });
    expect(await bad.next('error')).toMatchObject({ code: 'BAD_OFFER' });

    const { pc, sdp } = await browserOffer();
    try {
      const s = await authed(quick.url);
      s.send({ type: 'call', assistant_id: assistantId, sdp });
      const answer = await s.next('answer');
      expect(answer.sdp).toMatch(/a=rtpmap:\d+ opus\/48000\/2/i);
      expect(answer.sdp).toMatch(/a=fingerprint:sha-256/);
      s.send({ type: 'call', assistant_id: assistantId, sdp });
      expect(await s.next('error')).toMatchObject({ code: 'ONE_CALL_PER_SOCKET' });
      // We never apply the answer: ICE cannot connect, the call fails at the connect time limit.
      const ended = await s.next('ended', 5_000);
      expect(ended).toMatchObject({ end_cause: 'failed', status: 'failed' });
      const rec = await w.waitCall(ended.call_id, (c) => c.status === 'failed');
      expect(rec).toMatchObject({ direction: 'web', status: 'failed', cost: 0 });
      expect((await s.closed).code).toBe(1000);
    } finally {
      await pc.close();
    }
  });
});

/** A werift peer as the browser: sends `seconds` of quiet Opus and counts what it gets back. */
async function placeCall(
  s: Session,
  pcConfig: ConstructorParameters<typeof RTCPeerConnection>[0],
): Promise<{ pc: RTCPeerConnection; answered: Record<string, any>; received: () => number; candidatesSent: string[] }> {
  const candidatesSent: string[] = [];
  const pc = new RTCPeerConnection(pcConfig);
  const mic = new MediaStreamTrack({ kind: 'audio' });
  const tr = pc.addTransceiver(mic, { direction: 'sendrecv' });
  let received = 0;
  tr.onTrack.subscribe((track) => track.onReceiveRtp.subscribe(() => received++));
  pc.onIceCandidate.subscribe((c) => {
    if (!c) return;
    candidatesSent.push(c.toJSON().candidate ?? '');
    s.send({ type: 'candidate', ...c.toJSON() });
  });
  const offer = await pc.createOffer();
  await pc.setLocalDescription(offer);
  s.send({ type: 'call', assistant_id: assistantId, sdp: offer.sdp });
  const answer = await s.next('answer');
  await pc.setRemoteDescription({ type: 'answer', sdp: answer.sdp });
  let added = 0;
  const t1 = Date.now();
  while (!s.messages.some((m) => m.type === 'answered') && Date.now() - t1 < 15_000) {
    const candidates = s.messages.filter((x) => x.type === 'candidate');
    for (const m of candidates.slice(added)) await pc.addIceCandidate(m as never);
    added = candidates.length;
    await new Promise((r) => setTimeout(r, 20));
  }
  const answered = await s.next('answered', 0);
  const enc = opusCodec.encoder();
  const pcm = new Int16Array(960).map((_, i) => Math.round(500 * Math.sin((2 * Math.PI * 300 * i) / 48_000)));
  for (let n = 0; n < 50; n++) {
    mic.writeRtp(new RtpPacket(new RtpHeader({ payloadType: 111, sequenceNumber: n, timestamp: n * 960, marker: n === 0 }), enc.encode(pcm)));
    await new Promise((r) => setTimeout(r, 20));
  }
  return { pc, answered, received: () => received, candidatesSent };
}

describe.skipIf(!turnAvailable)('a call relayed through TURN (coturn)', () => {
  it('connects with the browser side on relay candidates only, using the ICE servers the engine hands out', async () => {
    const turn = await startTurnServer(await freePort(), [49_160, 49_200]);
    const relayed = await serve({ iceServers: [{ urls: turn.url, username: turn.username, credential: turn.credential }] });
    try {
      const s = await authed(relayed.url);
      const ready = await s.next('ready');
      expect(ready.ice_servers).toEqual([{ urls: turn.url, username: turn.username, credential: turn.credential }]);
      const call = await placeCall(s, { iceServers: ready.ice_servers, iceTransportPolicy: 'relay', iceUseIpv6: false });
      try {
        // Only relay candidates went to the engine (and none in the offer itself).
        expect(call.candidatesSent.length).toBeGreaterThan(0);
        expect(call.candidatesSent.every((c) => / typ relay /.test(c)), call.candidatesSent.join('\n')).toBe(true);
        const t0 = Date.now();
        while (call.received() < 25 && Date.now() - t0 < 5_000) await new Promise((r) => setTimeout(r, 50));
        expect(call.received()).toBeGreaterThanOrEqual(25);
        s.send({ type: 'hangup' });
        expect(await s.next('ended', 5_000)).toMatchObject({ status: 'completed' });
        const rec = await w.waitCall(call.answered.call_id, (c) => c.status === 'completed');
        expect(rec.quality.packets_received).toBeGreaterThanOrEqual(40);
        // coturn allocated a relay and carried the media.
        expect(turn.log()).toMatch(/incoming packet ALLOCATE processed, success/);
      } finally {
        await call.pc.close();
      }
    } finally {
      await relayed.close();
      await turn.close();
    }
  }, 40_000);
});

describe('shutting the signalling server down', () => {
  it('closes its sockets with 1001 and stops taking upgrades', async () => {
    const server = await serve({});
    const s = await authed(server.url);
    const started = Date.now();
    await server.close();
    expect((await s.closed).code).toBe(1001);
    expect(Date.now() - started).toBeLessThan(3_000);
    await expect(open(server.url)).rejects.toThrow();
  });
});

describe('the signalling socket accepts', () => {
  it('the key in an Authorization header (no auth message needed), and a call that connects, carries Opus both ways and hangs up', async () => {
    const s = await open(engineUrl(), { authorization: `Bearer ${w.account.key}` });
    await s.next('ready');
    const pc = new RTCPeerConnection({ iceAdditionalHostAddresses: ['127.0.0.1'], iceInterfaceAddresses: { udp4: '127.0.0.1' }, iceUseIpv6: false });
    try {
      const mic = new MediaStreamTrack({ kind: 'audio' });
      const tr = pc.addTransceiver(mic, { direction: 'sendrecv' });
      let received = 0;
      tr.onTrack.subscribe((track) => track.onReceiveRtp.subscribe(() => received++));
      pc.onIceCandidate.subscribe((c) => {
        if (c) s.send({ type: 'candidate', ...c.toJSON() });
      });
      const offer = await pc.createOffer();
      await pc.setLocalDescription(offer);
      s.send({ type: 'call', assistant_id: assistantId, sdp: offer.sdp });
      const answer = await s.next('answer');
      await pc.setRemoteDescription({ type: 'answer', sdp: answer.sdp });
      // Trickle: the engine's candidates as they come, until media is up.
      let added = 0;
      const t1 = Date.now();
      while (!s.messages.some((m) => m.type === 'answered') && Date.now() - t1 < 15_000) {
        const candidates = s.messages.filter((x) => x.type === 'candidate');
        for (const m of candidates.slice(added)) await pc.addIceCandidate(m as never);
        added = candidates.length;
        await new Promise((r) => setTimeout(r, 20));
      }
      const answered = await s.next('answered', 0);
      expect(answered).toMatchObject({ call_id: expect.any(Number), uuid: expect.any(String) });
      // We send a second of Opus (a quiet tone); the engine sends paced Opus from the answer on.
      const enc = opusCodec.encoder();
      const pcm = new Int16Array(960).map((_, i) => Math.round(500 * Math.sin((2 * Math.PI * 300 * i) / 48_000)));
      for (let n = 0; n < 50; n++) {
        mic.writeRtp(new RtpPacket(new RtpHeader({ payloadType: 111, sequenceNumber: n, timestamp: n * 960, marker: n === 0 }), enc.encode(pcm)));
        await new Promise((r) => setTimeout(r, 20));
      }
      const t0 = Date.now();
      while (received < 25 && Date.now() - t0 < 5_000) await new Promise((r) => setTimeout(r, 50));
      expect(received).toBeGreaterThanOrEqual(25);
      s.send({ type: 'hangup' });
      expect(await s.next('ended', 5_000)).toMatchObject({ call_id: answered.call_id, end_cause: 'remote-hangup', status: 'completed' });
      expect((await s.closed).code).toBe(1000);
      const rec = await w.waitCall(answered.call_id, (c) => c.status === 'completed');
      expect(rec).toMatchObject({ direction: 'web', end_cause: 'remote-hangup', quality: { codec: 'opus', srtp: 'DTLS-SRTP' } });
      // What the peer sent reached the call (the remote track is taken as werift announces it).
      expect(rec.quality.packets_received).toBeGreaterThanOrEqual(40);
      expect(rec.quality.packets_sent).toBeGreaterThanOrEqual(25);
    } finally {
      await pc.close();
    }
  }, 30_000);
});
