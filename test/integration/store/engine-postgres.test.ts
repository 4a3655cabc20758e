/**
 * Two engine nodes on one PostgreSQL database (SWITCHBOARD_DATABASE_URL) with one sealing key
 * (SWITCHBOARD_SECRET_KEY): both start (migrating once), and what one writes over its REST API,
 * secrets included, the other serves.
 */
import crypto from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { startEngine, type Engine } from '../../../src/main.ts';
import { dollarsToMicros } from '../../../src/util/money.ts';
import { createTestDatabase, dropTestDatabase, postgresAvailable } from '../../support/postgres.ts';
import { testTempDir } from '../../support/temp-dir.ts';
import { freePort } from '../e2e/world.ts';

let engines: Engine[] = [];
let url: string | undefined;
afterEach(async () => {
  for (const e of engines) await e.close(0);
  engines = [];
  if (url) await dropTestDatabase(url);
  url = undefined;
});

async function node(databaseUrl: string, key: string, rtpMin: number): Promise<Engine> {
  const engine = await startEngine(
    loadConfig({
      SWITCHBOARD_DATA_DIR: testTempDir('sb-node-'),
      SWITCHBOARD_DATABASE_URL: databaseUrl,
      SWITCHBOARD_SECRET_KEY: key,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(await freePort()),
      SIP_HOST: '127.0.0.1',
      SIP_PORT: String(await freePort()),
      SIP_PUBLIC_HOST: '127.0.0.1',
      RTP_PORT_MIN: String(rtpMin),
      RTP_PORT_MAX: String(rtpMin + 8),
      LOG_LEVEL: 'warn',
    }),
  );
  engines.push(engine);
  return engine;
}

async function call(e: Engine, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${e.httpUrl}/api${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

describe.skipIf(!postgresAvailable)('engine nodes sharing PostgreSQL', () => {
  it('start together, and one serves what the other stored (sealed with the shared key)', async () => {
    url = await createTestDatabase();
    const key = crypto.randomBytes(32).toString('base64');
    const rtpBase = 47_000 + (process.pid % 40) * 40;
    const [a, b] = await Promise.all([node(url, key, rtpBase), node(url, key, rtpBase + 20)]);
    const account = await a!.ctx.repos.accounts.create('Acme');
    await a!.ctx.repos.ledger.adjust(account.id, dollarsToMicros(5), 'top-up');
    const apiKey = await a!.ctx.repos.accounts.createKey(account.id);

    const created = await call(b!, apiKey, 'POST', '/user/assistant', {
      name: 'Shared',
      voice_id: 121,
      language_id: 1,
      type: 'outbound',
      mode: 'pipeline',
      timezone: 'Europe/Paris',
      initial_message: 'Hi',
      system_prompt: 'Be brief.',
      llm_model_id: 1,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const list = await call(a!, apiKey, 'GET', '/user/assistants');
    expect(list.body.assistants).toEqual([expect.objectContaining({ id: created.body.data.id, name: 'Shared' })]);

    // A secret node B sealed, node A opens.
    const sender = await call(b!, apiKey, 'POST', '/user/whatsapp/senders', { name: 'Shop', phone: '+14155550100', account_sid: 'AC1', auth_token: 'tok-shared-secret-1' });
    expect(sender.status, JSON.stringify(sender.body)).toBe(201);
    const stored = await a!.ctx.repos.whatsappSenders.getById(sender.body.data.id);
    expect(stored?.authToken).toBe('tok-shared-secret-1');
    expect(await b!.ctx.repos.ledger.balance(account.id)).toBe(dollarsToMicros(5));
  }, 120_000); // a first PostgreSQL start plus two engines (VAD models, SIP, RTP) on a loaded machine
});
