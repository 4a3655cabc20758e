/**
 * The per-trunk new-call rate (src/call/call-rate-limit.ts, wired in src/sip/server.ts): a
 * trusted carrier address floods its trunk with INVITEs over UDP; past the bucket they get 503 +
 * Retry-After before any store row, live-call slot or RTP port; another trunk's caller is
 * answered meanwhile, and a real caller on the flooded trunk gets through once the flood stops.
 * The default limit (10 calls/s, burst 20) is the one under test.
 */
import dgram from 'node:dgram';
import client from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { header, type SipRequest } from '../../../src/sip/message.ts';
import { parseMessage } from '../../../src/sip/parser.ts';
import { DEFAULT_TIMERS } from '../../../src/sip/transaction-types.ts';
import { PortPool } from '../../../src/media/port-pool.ts';
import { testRtpIo } from '../../support/rtp-io.ts';
import { TestPhone } from '../../support/test-phone.ts';
import { sleep } from '../../support/test-phone-rtp.ts';
import { harness, until, type Harness } from './harness.ts';

let h: Harness | undefined;
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  await h?.close();
  h = undefined;
});

interface Final {
  status: number;
  retryAfter: string | undefined;
}

/**
 * A carrier's edge that only floods: raw INVITEs with an SDP offer from `host`, ACKs for every
 * final response (so nothing is retransmitted at it) and 200 for the BYEs that end the calls it got.
 * Like any UAC over UDP it retransmits an INVITE nothing has answered yet (`retransmitUnanswered`):
 * on a loaded machine the kernel may drop a datagram of the burst.
 */
async function flooder(host: string, serverPort: number) {
  // Room for the answers to a whole burst while this process's event loop is busy with the engine.
  const socket = dgram.createSocket({ type: 'udp4', recvBufferSize: 4 << 20 });
  await new Promise<void>((r) => socket.bind(0, host, r));
  cleanups.push(() => socket.close());
  const port = socket.address().port;
  const finals = new Map<string, Final>();
  const sent = new Map<string, { branch: string; from: string; cseq: number; text: string; heard: boolean }>();
  const send = (text: string) => socket.send(text, serverPort, '127.0.0.1');
  socket.on('message', (buf) => {
    const parsed = parseMessage(buf);
    if (!parsed.ok) return;
    const msg = parsed.message;
    if (msg.kind === 'request') {
      if (msg.method !== 'ACK') send(answer(msg));
      return;
    }
    const callId = header(msg, 'call-id') ?? '';
    const ours = sent.get(callId);
    if (ours) ours.heard = true;
    if (!ours || msg.status < 200) return;
    if (!finals.has(callId)) finals.set(callId, { status: msg.status, retryAfter: header(msg, 'retry-after') });
    // Every final (a retransmitted one too) is ACKed. Non-2xx: the ACK belongs to the INVITE's transaction; 2xx: a new one (RFC 3261 §17.1.1.3, §13.2.2.4).
    const branch = msg.status >= 300 ? ours.branch : `${ours.branch}-ack`;
    send(
      [
        `ACK sip:+14155550100@127.0.0.1:${serverPort} SIP/2.0`,
        `Via: SIP/2.0/UDP ${host}:${port};branch=${branch}`,
        'Max-Forwards: 70',
        `From: ${ours.from}`,
        `To: ${header(msg, 'to')}`,
        `Call-ID: ${callId}`,
        `CSeq: ${ours.cseq} ACK`,
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n'),
    );
  });
  let n = 0;
  const invite = (user: string) => {
    n++;
    const callId = `flood-${n}-${process.pid}@${host}`;
    const branch = `z9hG4bK-flood-${n}-${process.pid}`;
    const from = `<sip:+15550000000@${host}>;tag=f${n}`;
    const sdp = ['v=0', `o=flood ${n} 1 IN IP4 ${host}`, 's=flood', `c=IN IP4 ${host}`, 't=0 0', 'm=audio 9 RTP/AVP 0', 'a=rtpmap:0 PCMU/8000', ''].join('\r\n');
    const text = [
      `INVITE sip:${user}@127.0.0.1:${serverPort} SIP/2.0`,
      `Via: SIP/2.0/UDP ${host}:${port};branch=${branch}`,
      'Max-Forwards: 70',
      `From: ${from}`,
      `To: <sip:${user}@127.0.0.1>`,
      `Call-ID: ${callId}`,
      'CSeq: 1 INVITE',
      `Contact: <sip:flood@${host}:${port}>`,
      'Content-Type: application/sdp',
      `Content-Length: ${Buffer.byteLength(sdp)}`,
      '',
      sdp,
    ].join('\r\n');
    sent.set(callId, { branch, from, cseq: 1, text, heard: false });
    send(text);
  };
  /** RFC 3261 §17.1.1.2: an INVITE without any response yet is sent again (same transaction). */
  const retransmitUnanswered = () => {
    for (const s of sent.values()) if (!s.heard) send(s.text);
  };
  return { invite, finals, retransmitUnanswered };
}

/** 200 OK to an in-dialog request (the engine's BYE at shutdown). */
function answer(req: SipRequest): string {
  const copy = ['via', 'from', 'to', 'call-id', 'cseq'].flatMap((name) => req.headers.filter((x) => x.name === name).map((x) => `${x.name}: ${x.value}`));
  return ['SIP/2.0 200 OK', ...copy, 'Content-Length: 0', '', ''].join('\r\n');
}

async function metricValue(registry: client.Registry, name: string, labels: Record<string, string>): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return 0;
  const { values } = await metric.get();
  return values.find((v) => Object.entries(labels).every(([k, want]) => String((v.labels as Record<string, unknown>)[k]) === want))?.value ?? 0;
}

describe('per-trunk new-call rate', () => {
  it('a trusted trunk flooding INVITEs gets 503 + Retry-After past its rate, never nears its call cap, and leaves another trunk answering', async () => {
    const registry = new client.Registry();
    // Ports for every call the flood could get admitted even on a slow machine (a flood measured
    // at 10 s admits 120): running out would answer 503 for want of ports, not for the rate.
    const base = 42_000 + (process.pid % 18) * 1000;
    const portPool = new PortPool({ host: '127.0.0.1', minPort: base, maxPort: base + 999, io: testRtpIo });
    // RFC 3261's own timers (T1 500 ms), not the harness's fast ones: engine and flooder share one
    // event loop here, and on a loaded machine a stall can outlast 64 × 50 ms of retransmissions.
    h = await harness({ overload: { maxLoopDelayMs: 0 }, metricsRegistry: registry, portPool, timers: DEFAULT_TIMERS });
    const flooded = await h.trunk(); // +14155550100, trusts 127.0.0.1
    await h.assistant(flooded.phoneNumberId);
    const other = await h.trunk({ phone_number: '+14155550101', sip_address: '127.0.0.2', allowed_inbound_ips: ['127.0.0.2'] });
    await h.assistant(other.phoneNumberId);
    const flood = await flooder('127.0.0.1', h.server.port);
    const otherPhone = await TestPhone.create({ host: '127.0.0.2' });
    cleanups.unshift(() => otherPhone.close());

    // 300 INVITEs over 2 s (15 every 100 ms); the other trunk's caller dials half-way through.
    let maxLive = 0;
    let otherCall: Awaited<ReturnType<TestPhone['dial']>> | undefined;
    const start = Date.now();
    for (let tick = 0; tick < 20; tick++) {
      for (let i = 0; i < 15; i++) flood.invite('+14155550100');
      if (tick === 10) otherCall = await otherPhone.dial(h.target('+14155550101'));
      maxLive = Math.max(maxLive, h.server.registry.activeForTrunk(flooded.live.inboundTrunkId));
      await sleep(Math.max(0, start + (tick + 1) * 100 - Date.now()));
    }
    expect((await otherCall!.outcome).status).toBe(200);
    // Every flood INVITE answered (bounded: 40 rounds of retransmitting the unanswered ones).
    for (let round = 0; round < 40 && flood.finals.size < 300; round++) {
      maxLive = Math.max(maxLive, h.server.registry.activeForTrunk(flooded.live.inboundTrunkId));
      await sleep(500);
      flood.retransmitUnanswered();
    }
    expect(flood.finals.size).toBe(300);
    const floodMs = Date.now() - start;
    maxLive = Math.max(maxLive, h.server.registry.activeForTrunk(flooded.live.inboundTrunkId));

    const finals = [...flood.finals.values()];
    const answered = finals.filter((f) => f.status === 200).length;
    const limited = finals.filter((f) => f.status === 503);
    // The bucket: 20 at once, then 10 a second while the flood lasted (2 s on an idle machine).
    const allowance = 20 + Math.ceil((10 * floodMs) / 1000);
    expect(answered).toBeGreaterThanOrEqual(20);
    expect(answered).toBeLessThanOrEqual(allowance);
    expect(limited.length).toBe(300 - answered);
    expect(new Set(limited.map((f) => f.retryAfter))).toEqual(new Set(['1']));
    expect(maxLive).toBeLessThanOrEqual(allowance);
    expect(maxLive).toBeLessThan(200);
    expect(h.server.rateLimited).toEqual({ trunk: limited.length, process: 0 });
    expect(await metricValue(registry, 'switchboard_sip_calls_rate_limited_total', { limit: 'trunk', trunk: String(flooded.id) })).toBe(limited.length);
    // Refused before the store: a call record only for the calls that were answered.
    expect(await h.ctx.repos.calls.list(h.owner.id, { limit: 1000 })).toHaveLength(answered + 1);
    // Nor did the carrier's flood get it banned.
    expect(h.server.abuse.isBanned('127.0.0.1')).toBe(false);

    // The flood is over: a real caller on the same trunk gets through once a token is back.
    await sleep(150);
    const realPhone = await TestPhone.create({ host: '127.0.0.1' });
    cleanups.unshift(() => realPhone.close());
    const real = await realPhone.call(h.target('+14155550100'));
    expect(real.dialog).toBeDefined();
    await real.hangup();
    await otherCall!.hangup();
  }, 60_000);
});
