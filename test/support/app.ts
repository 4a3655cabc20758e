import type { FastifyInstance, InjectOptions } from 'fastify';
import { loadConfig } from '../../src/config.ts';
import { openMemoryStore, type SqliteStore, type Store } from '../../src/store/db.ts';
import { openTestStore } from './test-store.ts';
import type { StoreBackend } from './postgres.ts';
import { createRepos } from '../../src/store/index.ts';
import { SecretBox } from '../../src/store/secrets.ts';
import { Catalog } from '../../src/catalog/catalog.ts';
import { InMemoryTrunkRegistry } from '../../src/sip/trunk-registry.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { createLogger } from '../../src/util/logger.ts';
import { buildApp } from '../../src/api/app.ts';
import type { AppContext } from '../../src/context.ts';
import { dollarsToMicros } from '../../src/util/money.ts';
import type { Outbound } from '../../src/net/outbound/index.ts';
import type { Cluster } from '../../src/cluster/types.ts';
import { LOOPBACK_ALLOW_CIDRS } from './outbound.ts';
import { assertContract, recordResponses, type RecordedResponse } from './api-contract.ts';

export interface TestApp<S extends Store = SqliteStore> {
  app: FastifyInstance;
  ctx: AppContext & { store: S };
  clock: ManualClock;
  /** Every answer the app sent, checked against /api/openapi.json on close. */
  responses: RecordedResponse[];
  /** Creates an account with a key (and optional balance in dollars). */
  account(balanceDollars?: number): Promise<{ id: number; key: string }>;
  /** fastify.inject with a bearer key and JSON body. */
  call(key: string | undefined, method: InjectOptions['method'], url: string, body?: unknown): Promise<{ status: number; body: any; headers: Record<string, unknown> }>;
  close(): Promise<void>;
}

/**
 * An engine's REST app in-process: memory store, manual clock, quiet logs. The stand-ins customer
 * URLs point at live on loopback, so the operator's allow-list opens loopback here
 * (SWITCHBOARD_OUTBOUND_ALLOW_CIDRS; pass it as '' for the engine's default, public addresses
 * only). `outbound` replaces the guard (a scripted DNS).
 */
export async function testApp(env: Record<string, string> = {}, opts: { outbound?: Outbound; cluster?: Cluster } = {}): Promise<TestApp> {
  const store = openMemoryStore();
  return buildTestApp(store, () => store.close(), env, opts);
}

/** The same app over a fresh store of `backend` (a new PostgreSQL database for 'postgres'). */
export async function testAppOn(backend: StoreBackend, env: Record<string, string> = {}, opts: { outbound?: Outbound; cluster?: Cluster } = {}): Promise<TestApp<Store>> {
  const opened = await openTestStore(backend);
  return buildTestApp(opened.store, () => opened.close(), env, opts);
}

async function buildTestApp<S extends Store>(
  store: S,
  closeStore: () => Promise<void>,
  env: Record<string, string>,
  opts: { outbound?: Outbound; cluster?: Cluster },
): Promise<TestApp<S>> {
  const clock = new ManualClock();
  const secrets = new SecretBox(Buffer.alloc(32, 7));
  const config = loadConfig({
    SWITCHBOARD_DATA_DIR: '/tmp/switchboard-test-unused',
    SIP_PUBLIC_HOST: '127.0.0.1',
    SWITCHBOARD_OUTBOUND_ALLOW_CIDRS: LOOPBACK_ALLOW_CIDRS,
    ...env,
  });
  const ctx: AppContext & { store: S } = {
    config,
    store,
    repos: createRepos(store, clock, secrets),
    clock,
    logger: createLogger('silent'),
    secrets,
    catalog: Catalog.load(config),
    trunks: new InMemoryTrunkRegistry(),
    ...(opts.outbound && { outbound: opts.outbound }),
    ...(opts.cluster && { cluster: opts.cluster }),
  };
  const { app } = await buildApp(ctx);
  // Every answer of every test keeps the API document's contract; checked on close.
  const recorded = recordResponses(app);
  await app.ready();
  return {
    app,
    ctx,
    clock,
    responses: recorded,
    async account(balanceDollars = 0) {
      const account = await ctx.repos.accounts.create('test account');
      if (balanceDollars) await ctx.repos.ledger.adjust(account.id, dollarsToMicros(balanceDollars), 'test top-up');
      return { id: account.id, key: await ctx.repos.accounts.createKey(account.id) };
    },
    async call(key, method, url, body) {
      const res = await app.inject({
        method,
        url: url.startsWith('/api') || url.startsWith('/healthz') || url.startsWith('/metrics') || url.startsWith('/webhooks') ? url : `/api${url}`,
        headers: key ? { authorization: `Bearer ${key}` } : {},
        ...(body === undefined ? {} : { payload: body as InjectOptions['payload'] }),
      });
      let parsed: unknown = res.body;
      try {
        parsed = JSON.parse(res.body);
      } catch {
        // not JSON (metrics text)
      }
      return { status: res.statusCode, body: parsed, headers: res.headers };
    },
    async close() {
      try {
        await assertContract(app, recorded);
      } finally {
        await app.close();
        await closeStore();
      }
    },
  };
}
