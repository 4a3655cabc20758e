import type { AddressInfo } from 'node:net';
import { testApp, type TestApp } from './app.ts';
import type { Outbound } from '../../src/net/outbound/index.ts';

export interface HttpApp extends TestApp {
  /** http://127.0.0.1:PORT of the listening app. */
  url: string;
  /**
   * A real HTTP request over loopback (fetch), JSON in and out. The manual clock moves 600 ms
   * first, so long sequences stay under the burst limit of 20 requests per 10 s.
   */
  http(key: string | undefined, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; text: string }>;
}

/** testApp listening on an ephemeral loopback port: clients talk to it over real sockets. */
export async function httpApp(env: Record<string, string> = {}, opts: { outbound?: Outbound } = {}): Promise<HttpApp> {
  const t = await testApp(env, opts);
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  return Object.assign(t, {
    url,
    async http(key: string | undefined, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
      t.clock.advance(600);
      const full = path.startsWith('/api') || path.startsWith('/webhooks') ? path : `/api${path}`;
      const res = await fetch(`${url}${full}`, {
        method,
        headers: {
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(body !== undefined && typeof body !== 'string' ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON (TwiML)
      }
      return { status: res.status, body: parsed, text };
    },
  });
}
