import { Writable } from 'node:stream';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { loadConfig } from '../../../src/config.ts';
import { openMemoryStore, type SqliteStore } from '../../../src/store/db.ts';
import { createRepos } from '../../../src/store/index.ts';
import { SecretBox } from '../../../src/store/secrets.ts';
import { Catalog } from '../../../src/catalog/catalog.ts';
import { InMemoryTrunkRegistry } from '../../../src/sip/trunk-registry.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { createLogger } from '../../../src/util/logger.ts';
import { buildApp, type BuiltApp } from '../../../src/api/app.ts';
import type { RateDecision, RateLimiter } from '../../../src/api/rate-limit.ts';
import type { AppContext } from '../../../src/context.ts';
import { dollarsToMicros } from '../../../src/util/money.ts';
import { LOOPBACK_ALLOW_CIDRS } from '../../support/outbound.ts';
import { assertContract, recordResponses, type RecordedResponse } from '../../support/api-contract.ts';

/** Admits everything: table-driven tests send hundreds of requests and are not about limits. */
export const noLimits: RateLimiter = {
  hit: (_key: string, nowMs: number): RateDecision => ({ allowed: true, limit: 20, remaining: 19, resetAtMs: nowMs + 10_000, retryAfterSec: 0 }),
};

export interface Harness {
  app: FastifyInstance;
  built: BuiltApp;
  ctx: AppContext & { store: SqliteStore };
  clock: ManualClock;
  /** Every line the engine logged (pino JSON), at trace level. */
  logs: string[];
  /** Every answer the app sent, checked against /api/openapi.json on close. */
  responses: RecordedResponse[];
  account(balanceDollars?: number): Promise<{ id: number; key: string }>;
  call(key: string | undefined, method: string, url: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; raw: string; headers: Record<string, unknown> }>;
  close(): Promise<void>;
}

/**
 * Like test/support/app.ts, but exposes the route table (`built.api.routes`, `built.served`),
 * captures the log at trace level and takes a limiter (default: none).
 */
export async function harness(opts: { limiter?: RateLimiter; dataDir?: string; env?: Record<string, string> } = {}): Promise<Harness> {
  const clock = new ManualClock(Date.UTC(2025, 0, 6, 12));
  const store = openMemoryStore();
  const secrets = new SecretBox(Buffer.alloc(32, 9));
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(chunk.toString('utf8'));
      done();
    },
  });
  // Loopback opened as in test/support/app.ts: stand-ins live there.
  const config = loadConfig({
    SWITCHBOARD_DATA_DIR: opts.dataDir ?? '/tmp/switchboard-test-unused',
    SIP_PUBLIC_HOST: '127.0.0.1',
    SWITCHBOARD_OUTBOUND_ALLOW_CIDRS: LOOPBACK_ALLOW_CIDRS,
    ...opts.env,
  });
  const ctx: AppContext & { store: SqliteStore } = {
    config,
    store,
    repos: createRepos(store, clock, secrets),
    clock,
    logger: createLogger('trace', sink),
    secrets,
    catalog: Catalog.load(config),
    trunks: new InMemoryTrunkRegistry(),
  };
  const built = await buildApp(ctx, { limiter: opts.limiter ?? noLimits });
  const { app } = built;
  // Every answer of every test keeps the API document's contract; checked on close.
  const recorded = recordResponses(app);
  await app.ready();
  return {
    app,
    built,
    ctx,
    clock,
    logs,
    responses: recorded,
    async account(balanceDollars = 0) {
      const account = await ctx.repos.accounts.create('test account');
      if (balanceDollars) await ctx.repos.ledger.adjust(account.id, dollarsToMicros(balanceDollars), 'test top-up');
      return { id: account.id, key: await ctx.repos.accounts.createKey(account.id) };
    },
    async call(key, method, url, body, headers = {}) {
      const res = await app.inject({
        // Route tables give methods as plain strings; fastify checks them at run time.
        method: method as InjectOptions['method'],
        url: url.startsWith('/api') ? url : `/api${url}`,
        headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
        ...(body === undefined ? {} : { payload: body as InjectOptions['payload'] }),
      });
      let parsed: unknown = res.body;
      try {
        parsed = JSON.parse(res.body);
      } catch {
        // not JSON
      }
      return { status: res.statusCode, body: parsed, raw: res.body, headers: res.headers };
    },
    async close() {
      try {
        await assertContract(app, recorded);
      } finally {
        await app.close();
        await store.close();
      }
    },
  };
}

export const assistantBody = (over: Record<string, unknown> = {}) => ({
  name: 'Support line',
  voice_id: 121,
  language_id: 1,
  type: 'outbound',
  mode: 'pipeline',
  timezone: 'Europe/Paris',
  initial_message: 'Hello, how can I help?',
  system_prompt: 'You are a helpful agent.',
  llm_model_id: 1,
  ...over,
});

export const trunkBody = (over: Record<string, unknown> = {}) => ({
  sip_trunk_type: 'number',
  phone_number: '+14155550100',
  nickname: 'Main line',
  sip_username: 'alice',
  sip_password: 's3cret-pass',
  sip_address: 'sip.example.com',
  sip_calling_format: '+e164',
  inbound_authorization_type: 'auth',
  ...over,
});

/** One of every resource for an account, made through the API; ids by resource. */
export async function seed(h: Harness, key: string, n = 0) {
  const ok = async (method: 'POST', url: string, body: unknown) => {
    const res = await h.call(key, method, url, body);
    if (res.status !== 201) throw new Error(`${url}: ${res.status} ${res.raw}`);
    return res.body.data as Record<string, any>;
  };
  const folder = await ok('POST', '/user/folders', { name: 'F' });
  const label = await ok('POST', '/user/labels', { name: 'L' });
  const tool = await ok('POST', '/user/tools', {
    name: 'lookup',
    description: 'Looks up an order',
    parameters: { type: 'object', properties: { order: { type: 'string' } } },
    endpoint: 'https://tools.example.com/lookup',
  });
  const kb = await ok('POST', '/user/knowledge-bases', { name: 'KB' });
  const doc = await ok('POST', `/user/knowledge-bases/${kb.id}/documents`, { title: 'Hours', content: 'Open 9 to 5.' });
  const trunk = await ok('POST', '/user/sip-trunks', trunkBody({ phone_number: `+1415555${String(200 + n).padStart(4, '0')}`, sip_username: `user${n}` }));
  const callerId = await ok('POST', '/user/phone-numbers', { phone_number: `+1415555${String(300 + n).padStart(4, '0')}` });
  const assistant = await ok('POST', '/user/assistant', assistantBody({ folder_id: folder.id, label_ids: [label.id], tool_ids: [tool.id] }));
  const campaign = await ok('POST', '/user/campaigns', { name: 'C', assistant_id: assistant.id, phone_number_id: callerId.id });
  await ok('POST', `/user/campaigns/${campaign.id}/leads`, { leads: [{ phone_number: '+14155550199' }] });
  const sender = await ok('POST', '/user/whatsapp/senders', {
    name: 'WA',
    phone: `+1415555${String(400 + n).padStart(4, '0')}`,
    account_sid: 'AC123',
    auth_token: 'wa-token-secret-xyz',
  });
  const call = await h.ctx.repos.calls.create({
    accountId: (await h.ctx.repos.accounts.accountForKey(key))!,
    assistantId: assistant.id,
    direction: 'outbound',
    fromNumber: '+14155550100',
    toNumber: '+14155550199',
    status: 'completed',
  });
  return {
    folder: folder.id as number,
    label: label.id as number,
    tool: tool.id as number,
    kb: kb.id as number,
    doc: doc.id as number,
    trunk: trunk.id as number,
    trunkNumber: trunk.phone_number_id as number,
    callerId: callerId.id as number,
    assistant: assistant.id as number,
    campaign: campaign.id as number,
    sender: sender.id as number,
    call: call.id,
  };
}
