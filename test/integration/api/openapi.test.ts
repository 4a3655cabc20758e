import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from './harness.ts';

/** The OpenAPI document lists exactly the routes the app serves, with their schemas. */

let h: Harness;
let doc: any;
beforeAll(async () => {
  h = await harness();
  doc = (await h.call(undefined, 'GET', '/api/openapi.json')).body;
});
afterAll(() => h.close());

const toOpenApi = (url: string) => url.replace(/^\/api/, '').replace(/:([A-Za-z_]+)/g, '{$1}');

describe('GET /api/openapi.json', () => {
  it('is OpenAPI 3.1 with the server base URL and bearer security', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.servers).toEqual([{ url: `${h.ctx.config.publicUrl}/api` }]);
    expect(doc.components.securitySchemes.bearer).toEqual({ type: 'http', scheme: 'bearer' });
  });

  it('documents every route fastify serves under /api, and nothing else', () => {
    const served = h.built.served
      .filter((r) => r.url.startsWith('/api/') && r.url !== '/api/openapi.json' && !r.url.startsWith('/api/docs'))
      .map((r) => `${r.method} ${toOpenApi(r.url)}`)
      .sort();
    const documented = Object.entries<Record<string, unknown>>(doc.paths)
      .flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`))
      .sort();
    expect(documented).toEqual(served);
    expect(served.length).toBeGreaterThan(60);
  });

  it('every operation has a summary, a success response, its path parameters and, with a body, a request schema with properties', () => {
    for (const r of h.built.api.routes) {
      const op = doc.paths[toOpenApi(r.url)][r.method.toLowerCase()];
      const where = `${r.method} ${r.url}`;
      expect(op.summary, where).toEqual(expect.any(String));
      expect(op.responses[String(r.status)], where).toBeDefined();
      const pathParams = [...r.url.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]);
      expect(op.parameters.filter((p: any) => p.in === 'path').map((p: any) => p.name).sort(), where).toEqual(pathParams.sort());
      if (r.body && !r.consumes) {
        const schema = op.requestBody.content['application/json'].schema;
        expect(Object.keys(schema.properties ?? {}).length, where).toBeGreaterThan(0);
      }
      if (r.auth === 'required') {
        expect(op.security, where).toEqual([{ bearer: [] }]);
        expect(op.responses['401'], where).toBeDefined();
        expect(op.responses['429'], where).toBeDefined();
      }
      if (r.body || r.params || r.query) expect(op.responses['422'], where).toBeDefined();
    }
  });

  it('the assistant body documents every accepted field with its bounds', () => {
    const schema = doc.paths['/user/assistant'].post.requestBody.content['application/json'].schema;
    expect(schema.required.sort()).toEqual(['initial_message', 'language_id', 'mode', 'name', 'system_prompt', 'timezone', 'type', 'voice_id'].sort());
    expect(schema.properties.max_duration).toMatchObject({ minimum: 20, maximum: 1200 });
    expect(schema.properties.name.maxLength).toBe(255);
    expect(schema.properties.mode.enum).toEqual(['pipeline', 'multimodal', 'dualplex']);
    expect(schema.properties.tools.items.oneOf).toHaveLength(7);
  });
});
