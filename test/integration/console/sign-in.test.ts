import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { httpApp, type HttpApp } from '../../support/http-app.ts';
import { chromiumAvailable, collectPageErrors, launchChromium, screenshot } from '../../support/browser.ts';
import { CONSOLE_POLICY } from '../../../src/console/serve.ts';

/**
 * The console shell in a real browser: served at /console under a policy with no inline script,
 * signed in with an API key kept in session storage (never in the URL), signed out again.
 */

let t: HttpApp;
let browser: Browser;
beforeAll(async () => {
  t = await httpApp();
  if (chromiumAvailable) browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t.close();
});

describe('GET /console', () => {
  it('serves the page and its assets under a strict policy, every /console/* path the same page', async () => {
    const page = await fetch(`${t.url}/console`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(CONSOLE_POLICY);
    expect(CONSOLE_POLICY).not.toMatch(/unsafe-inline|unsafe-eval/);
    const html = await page.text();
    expect(html).toContain('<div id="app">');
    expect(html).not.toMatch(/<script>(?!<)/); // no inline script
    const deep = await fetch(`${t.url}/console/calls/42`);
    expect(await deep.text()).toBe(html);
    const js = await fetch(`${t.url}/console/assets/app.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    expect((await js.text()).length).toBeGreaterThan(1000);
    const css = await fetch(`${t.url}/console/assets/app.css`);
    expect(css.headers.get('content-type')).toMatch(/css/);
    expect((await fetch(`${t.url}/console/assets/../../api/openapi.json`)).status).not.toBe(500);
    expect((await fetch(`${t.url}/console/assets/other.js`)).status).toBe(404);
  });
});

describe.skipIf(!chromiumAvailable)('console sign-in in Chromium', () => {
  it('refuses a wrong key, signs in with a right one kept in session storage only, and signs out', async () => {
    const { key } = await t.account(10);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const errors = collectPageErrors(page);
    const urls: string[] = [];
    page.on('request', (r) => urls.push(r.url()));
    const notFound: string[] = [];
    page.on('response', (r) => {
      if (r.status() === 404) notFound.push(new URL(r.url()).pathname);
    });
    await page.goto(`${t.url}/console`);
    await page.getByLabel('API key').fill('sk-wrong-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), { timeout: 10_000 }).toMatch(/\S/);
    await screenshot(page, 'console-sign-in-refused');

    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor({ timeout: 10_000 });
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.getItem('switchboard.apiKey'))).toBe(key);
    expect(await page.evaluate(() => (globalThis as any).localStorage.length)).toBe(0);
    expect((await context.cookies()).length).toBe(0);
    await screenshot(page, 'console-signed-in');

    // A reload keeps the session (same tab); a new tab does not have it.
    await page.reload();
    await page.getByRole('button', { name: 'Sign out' }).waitFor({ timeout: 10_000 });
    const other = await context.newPage();
    await other.goto(`${t.url}/console`);
    await other.getByLabel('API key').waitFor({ timeout: 10_000 });

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor({ timeout: 10_000 });
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.getItem('switchboard.apiKey'))).toBeNull();
    expect(urls.some((u) => u.includes(key))).toBe(false);
    // The first page (calls) follows the live call feed; an engine without its server answers 404 there, and only there.
    expect(notFound.every((p) => p === '/api/user/calls/events')).toBe(true);
    expect(errors.filter((e) => !/401/.test(e) && !(notFound.length > 0 && /404/.test(e)))).toEqual([]);
    await context.close();
  });
});
