import crypto from 'node:crypto';
import { testApp, type TestApp } from '../../support/app.ts';

/**
 * testApp plus what the platform-resource tests share: a call that moves the manual clock one
 * second first (so long test sequences stay under the per-key rate limit of 20 per 10 s), two
 * accounts for cross-tenant checks, and assistants written straight to the table (the assistant
 * API is another group's and not what these tests are about).
 */
export interface Platform extends TestApp {
  a: { id: number; key: string };
  b: { id: number; key: string };
  req(key: string | undefined, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown): ReturnType<TestApp['call']>;
  assistant(accountId: number, type?: 'inbound' | 'outbound', phoneNumberId?: number | null): Promise<number>;
}

export async function platform(balanceDollars = 10, env: Record<string, string> = {}): Promise<Platform> {
  const t = await testApp(env);
  const a = await t.account(balanceDollars);
  const b = await t.account(balanceDollars);
  return Object.assign(t, {
    a,
    b,
    req(key: string | undefined, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown) {
      t.clock.advance(1000);
      return t.call(key, method, url, body);
    },
    async assistant(accountId: number, type: 'inbound' | 'outbound' = 'outbound', phoneNumberId: number | null = null) {
      const now = t.clock.now();
      const row = await t.ctx.store.db
        .insertInto('assistants')
        .values({
          uuid: crypto.randomUUID(),
          account_id: accountId,
          name: `${type} assistant`,
          type,
          mode: 'pipeline',
          status: 'inactive',
          phone_number_id: phoneNumberId,
          folder_id: null,
          inbound_webhook_enabled: 1,
          config: '{}',
          created_at: now,
          updated_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    },
  });
}

/** A valid SIP trunk body; override fields per test. */
export function trunkBody(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    sip_trunk_type: 'number',
    phone_number: '+14155550100',
    nickname: 'Main line',
    sip_username: 'alice',
    sip_password: 's3cret-pass',
    sip_address: 'sip.example.com',
    sip_calling_format: '+e164',
    inbound_authorization_type: 'auth',
    ...over,
  };
}
