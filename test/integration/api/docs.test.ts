import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from './harness.ts';

/** GET /api/docs: Swagger UI from our own assets, under a policy that runs no inline script. */

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h.close());

const get = (url: string) => h.app.inject({ method: 'GET', url });

function policy(headers: Record<string, unknown>): Map<string, string[]> {
  const csp = String(headers['content-security-policy'] ?? '');
  return new Map(csp.split(';').map((d) => d.trim().split(/\s+/)).filter((d) => d[0]).map(([name, ...values]) => [name!, values]));
}

describe('GET /api/docs', () => {
  it('is an HTML page, without a key, that loads only our own scripts and styles and no inline script', async () => {
    const res = await get('/api/docs');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const html = res.body;
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map((m) => /src="([^"]+)"/.exec(m[1]!)?.[1])).toEqual(['docs/assets/swagger-ui-bundle.js', 'docs/init.js']);
    for (const m of scripts) expect(m[2]!.trim(), 'no inline script').toBe('');
    const links = [...html.matchAll(/<link [^>]*href="([^"]+)"/g)].map((m) => m[1]!);
    expect(links).toContain('docs/assets/swagger-ui.css');
    // Nothing from another origin: every URL is relative to /api/.
    for (const url of [...links, ...scripts.map((m) => /src="([^"]+)"/.exec(m[1]!)![1]!)]) expect(url).not.toMatch(/^(https?:)?\/\//);
    expect(html).not.toMatch(/\sstyle=|<style/);
  });

  it('sends a Content-Security-Policy: scripts from this origin only, nothing framed, nothing else loaded', async () => {
    const res = await get('/api/docs');
    const p = policy(res.headers);
    expect(p.get('default-src')).toEqual(["'none'"]);
    expect(p.get('script-src')).toEqual(["'self'"]);
    expect(p.get('style-src')).toEqual(["'self'", "'unsafe-inline'"]);
    expect(p.get('img-src')).toEqual(["'self'", 'data:']);
    expect(p.get('connect-src')).toEqual(["'self'", new URL(h.ctx.config.publicUrl).origin]);
    expect(p.get('frame-ancestors')).toEqual(["'none'"]);
    expect(p.get('base-uri')).toEqual(["'none'"]);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('serves every asset the page names from node_modules with its content type and the same policy', async () => {
    const page = (await get('/api/docs')).body;
    const urls = [...page.matchAll(/(?:src|href)="(docs\/[^"]+)"/g)].map((m) => `/api/${m[1]}`);
    expect(urls.length).toBeGreaterThanOrEqual(5);
    const types: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', png: 'image/png' };
    for (const url of urls) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type'], url).toBe(types[url.split('.').at(-1)!]);
      expect(res.headers['content-security-policy'], url).toBe((await get('/api/docs')).headers['content-security-policy']);
      expect(res.rawPayload.length, url).toBeGreaterThan(0);
    }
    const bundle = await get('/api/docs/assets/swagger-ui-bundle.js');
    expect(bundle.body).toContain('SwaggerUIBundle');
    expect(bundle.rawPayload.length).toBeGreaterThan(500_000);
  });

  it('the initializer renders our document (relative URL), with no validator and no URL bar', async () => {
    const res = await get('/api/docs/init.js');
    expect(res.body).toContain("url: 'openapi.json'");
    expect(res.body).toContain('validatorUrl: null');
    expect(res.body).toContain("layout: 'BaseLayout'");
    // The relative URL resolves from /api/docs to the document, which is served without a key.
    const doc = await get('/api/openapi.json');
    expect(doc.statusCode).toBe(200);
    expect(JSON.parse(doc.body).openapi).toBe('3.1.0');
  });

  it('serves no other file of the package, nor anything outside it', async () => {
    for (const file of ['index.html', 'package.json', '..%2Fpackage.json', '..%2F..%2Fpackage.json', 'swagger-initializer.js', '%2Fetc%2Fpasswd']) {
      const res = await get(`/api/docs/assets/${file}`);
      expect(res.statusCode, file).toBe(404);
      expect(res.headers['content-type'], file).toMatch(/^application\/json/);
    }
  });
});
