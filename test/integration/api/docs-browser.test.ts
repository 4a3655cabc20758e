import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpApp, type HttpApp } from '../../support/http-app.ts';

/**
 * GET /api/docs in a real browser (Debian's chromium, headless): the page's own scripts run under
 * its Content-Security-Policy, fetch /api/openapi.json and render every operation. A script the
 * policy blocked, or a document Swagger UI could not read, leaves the operations unrendered.
 */

const CHROMIUM = '/usr/bin/chromium';

let t: HttpApp;
let profile: string;
beforeAll(async () => {
  t = await httpApp();
  profile = mkdtempSync(join(tmpdir(), 'sb-chromium-'));
});
afterAll(async () => {
  await t.close();
  rmSync(profile, { recursive: true, force: true });
});

/** The page's DOM after its scripts ran (bounded: virtual time 15 s, wall clock 60 s). */
function renderedDom(url: string): Promise<{ dom: string; log: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(CHROMIUM, [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', `--user-data-dir=${profile}`, '--enable-logging=stderr', '--v=0',
      '--virtual-time-budget=15000', '--dump-dom', url,
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    let dom = '';
    let log = '';
    child.stdout.on('data', (b: Buffer) => (dom += b.toString()));
    child.stderr.on('data', (b: Buffer) => (log += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(timer);
      resolve({ dom, log });
    });
  });
}

describe('GET /api/docs in Chromium', () => {
  it('renders every operation of /api/openapi.json with the page’s own scripts, none refused by its policy', async () => {
    const document = (await (await fetch(`${t.url}/api/openapi.json`)).json()) as { paths: Record<string, unknown> };
    const { dom, log } = await renderedDom(`${t.url}/api/docs`);
    expect(dom).toContain('class="swagger-ui"');
    expect(dom).toMatch(/class="title">Switchboard API/);
    // One rendered block per documented path (Swagger UI writes each as data-path="…").
    const rendered = new Set([...dom.matchAll(/data-path="([^"]+)"/g)].map((m) => m[1]!));
    expect(rendered.size).toBeGreaterThan(20);
    for (const path of Object.keys(document.paths)) {
      if (path.startsWith('/docs')) continue;
      expect(rendered.has(path.replace(/\{(\w+)\}/g, '{$1}')), path).toBe(true);
    }
    expect(log).not.toMatch(/Refused to (execute|load|apply|connect)/);
  }, 90_000);
});
