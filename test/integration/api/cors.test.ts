import { afterEach, describe, expect, it } from 'vitest';
import { httpApp, type HttpApp } from '../../support/http-app.ts';

/** CORS is closed unless the operator lists origins (SWITCHBOARD_CORS_ORIGINS). */

let t: HttpApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const preflight = (url: string, origin: string) =>
  fetch(`${url}/api/user/assistants`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' } });

describe('CORS', () => {
  it('is closed by default: no header tells a browser another origin may read an answer', async () => {
    t = await httpApp();
    const { key } = await t.account();
    const res = await fetch(`${t.url}/api/user/assistants`, { headers: { origin: 'https://evil.example', authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const pre = await preflight(t.url, 'https://evil.example');
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    expect(pre.headers.get('access-control-allow-headers')).toBeNull();
  });

  it('opens to the listed origins only, preflight included, never with credentials', async () => {
    t = await httpApp({ SWITCHBOARD_CORS_ORIGINS: 'https://dash.example.com, https://ops.example.com/' });
    const { key } = await t.account();
    const pre = await preflight(t.url, 'https://dash.example.com');
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('https://dash.example.com');
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    expect(pre.headers.get('access-control-allow-credentials')).toBeNull();
    const res = await fetch(`${t.url}/api/user/assistants`, { headers: { origin: 'https://ops.example.com', authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://ops.example.com');
    expect(res.headers.get('vary')).toMatch(/Origin/);
    // Another origin: nothing.
    const other = await fetch(`${t.url}/api/user/assistants`, { headers: { origin: 'https://evil.example', authorization: `Bearer ${key}` } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    expect((await preflight(t.url, 'https://evil.example')).headers.get('access-control-allow-origin')).toBeNull();
  });
});
