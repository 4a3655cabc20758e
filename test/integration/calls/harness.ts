/**
 * An engine for call tests: the REST app on a memory store (testApp) plus a real SipServer on an
 * ephemeral loopback port with its own RTP port pool, fast SIP timers and quiet logs.
 */
import crypto from 'node:crypto';
import { testApp, type TestApp } from '../../support/app.ts';
import { FAST_TIMERS } from '../../support/test-phone.ts';
import { SipServer, type SipServerOptions } from '../../../src/sip/server.ts';
import { PortPool } from '../../../src/media/port-pool.ts';
import { RTP_NATIVE, RTP_THREAD, testRtpIo } from '../../support/rtp-io.ts';
import type { ProvisionedTrunk } from '../../../src/sip/trunk-registry.ts';

export interface Harness extends TestApp {
  server: SipServer;
  pool: PortPool;
  owner: { id: number; key: string };
  /** Creates a trunk through REST; returns its ids and the live registry entry. */
  trunk(over?: Record<string, unknown>): Promise<{ id: number; phoneNumberId: number; live: ProvisionedTrunk }>;
  /** Writes an assistant straight to the table (config fields as the API would store them). */
  assistant(phoneNumberId: number | null, config?: Record<string, unknown>, type?: 'inbound' | 'outbound'): Promise<number>;
  /** A SIP URI of ours (at `host`, default the public host). */
  target(user: string, host?: string): string;
  req(method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown): ReturnType<TestApp['call']>;
}

let rtpBase = 30_000 + (process.pid % 50) * 200;

/**
 * Where the engine listens: SIP on `sipHost` (also the address advertised in Via, Contact and
 * SDP), RTP bound to `rtpHost`. Both 127.0.0.1 by default.
 */
export interface HarnessNet {
  sipHost?: string;
  rtpHost?: string;
  /** What Via, Contact and SDP name (default `sipHost`), and what IPv6 peers are told (SIP_PUBLIC_HOST6). */
  publicHost?: string;
  publicHost6?: string;
  /** What SDP names to IPv4 peers (RTP_PUBLIC_HOST; default the public host). */
  rtpPublicHost?: string;
  /** SIP_TRUSTED_PROXIES. */
  trustedProxies?: string;
}

export async function harness(opts: Partial<Omit<SipServerOptions, 'config' | 'repos' | 'trunks' | 'logger'>> = {}, balanceDollars = 10, net: HarnessNet = {}): Promise<Harness> {
  const t = await testApp();
  const account = await t.account(balanceDollars);
  const sipHost = net.sipHost ?? '127.0.0.1';
  // Separate ranges per harness, so parallel test files rarely probe the same ports.
  const pool = opts.portPool ?? new PortPool({ host: net.rtpHost ?? '127.0.0.1', minPort: rtpBase, maxPort: rtpBase + 199, io: testRtpIo });
  rtpBase = rtpBase >= 39_600 ? 30_000 : rtpBase + 200;
  const server = await SipServer.start({
    config: {
      sip: { host: sipHost, port: 0, publicHost: net.publicHost ?? sipHost, ...(net.publicHost6 !== undefined ? { publicHost6: net.publicHost6 } : {}), ...(net.trustedProxies !== undefined ? { trustedProxies: net.trustedProxies } : {}) },
      rtp: { portMin: 20000, portMax: 20100, thread: RTP_THREAD, native: RTP_NATIVE, ...(net.rtpPublicHost !== undefined ? { publicHost: net.rtpPublicHost } : {}) },
    },
    repos: t.ctx.repos,
    trunks: t.ctx.trunks,
    logger: t.ctx.logger,
    recordClock: t.ctx.clock,
    timers: FAST_TIMERS,
    portPool: pool,
    registration: { syncIntervalMs: 100, retryMinMs: 100, retryMaxMs: 400 },
    ...opts,
  });
  t.ctx.dialer = server.dialer;
  const req: Harness['req'] = (method, url, body) => {
    t.clock.advance(1000); // stay under the per-key REST rate limit
    return t.call(account.key, method, url, body);
  };
  const close = t.close;
  return Object.assign(t, {
    server,
    pool,
    owner: account,
    req,
    target: (user: string, host = net.publicHost ?? sipHost) => `sip:${user}@${host.includes(':') ? `[${host}]` : host}:${server.port}`,
    async trunk(over: Record<string, unknown> = {}) {
      const res = await req('POST', '/user/sip-trunks', {
        sip_trunk_type: 'number',
        phone_number: '+14155550100',
        sip_username: 'trunkuser',
        sip_password: 'trunk-secret',
        sip_address: '127.0.0.1',
        sip_calling_format: '+e164',
        inbound_authorization_type: 'ip',
        allowed_inbound_ips: ['127.0.0.1'],
        country_code: 'US',
        ...over,
      });
      if (res.status !== 201) throw new Error(`trunk: ${res.status} ${JSON.stringify(res.body)}`);
      const data = res.body.data as { id: number; phone_number_id: number; inbound_trunk_id: string };
      const live = t.ctx.trunks.list().find((x) => x.inboundTrunkId === data.inbound_trunk_id)!;
      return { id: data.id, phoneNumberId: data.phone_number_id, live };
    },
    async assistant(phoneNumberId: number | null, config: Record<string, unknown> = {}, type: 'inbound' | 'outbound' = 'inbound') {
      const now = t.clock.now();
      const row = await t.ctx.store.db
        .insertInto('assistants')
        .values({
          uuid: crypto.randomUUID(),
          account_id: account.id,
          name: `${type} assistant`,
          type,
          mode: 'pipeline',
          status: 'inactive',
          phone_number_id: phoneNumberId,
          folder_id: null,
          inbound_webhook_enabled: 1,
          config: JSON.stringify(config),
          created_at: now,
          updated_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    },
    async close() {
      await server.close();
      await close();
    },
  });
}

/** Polls until `cond` holds (real time). */
export async function until(cond: () => boolean | Promise<boolean>, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const start = Date.now();
  while (!(await cond())) {
    if (Date.now() - start > timeoutMs) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
