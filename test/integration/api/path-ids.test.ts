import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, seed, type Harness } from './harness.ts';

/**
 * Path ids are canonical decimal integers only. Every route whose path takes a numeric id is
 * taken from the app's own route table (a new route cannot be left out), with the account's
 * resources all at id 1: each other spelling that Number() reads as 1 (`0x1`, `1e0`, `01`, ...)
 * and each that reads as nothing must answer exactly like an id that exists nowhere (same status,
 * same body), never reach resource 1.
 */

const NOPE = '987654';
const NON_CANONICAL = [
  '0x1', '1e0', '01', '001', '+1', '1.0', '1.', '0b1', '0o1', '%201', '1%20', '%091', // Number() reads these as 1
  '0', '-1', '-0', 'abc', '1.5', '1e400', 'Infinity', 'NaN', '9'.repeat(30), '9007199254740993', '%00', '%EF%BC%91', // and these as no id
];

/** Path parameters that are not numeric ids, with why. */
const NOT_NUMERIC: Record<string, string> = {
  uuid: 'conversation UUIDs are opaque strings, looked up as given',
};

/** What a missing id answers on routes whose rule is not 404. */
const MISSING_STATUS: Record<string, number> = {
  // An unknown sender answers like a bad signature (403): the signed webhooks reveal no sender ids.
  'POST /webhooks/whatsapp/:sender_id': 403,
  'POST /webhooks/whatsapp/:sender_id/status': 403,
};

/** Valid bodies, so that only the id decides the answer. */
const BODIES: Record<string, { payload: unknown; headers?: Record<string, string> }> = {
  'PUT /user/assistant/:id': { payload: { name: 'Renamed' } },
  'PUT /user/tools/:id': { payload: { description: 'Changed' } },
  'PUT /user/whatsapp/senders/:id': { payload: { status: 'offline' } },
  'POST /user/knowledge-bases/:id/documents': { payload: { title: 'T', content: 'C' } },
  'POST /user/campaigns/:id/leads': { payload: { leads: [{ phone_number: '+14155550123' }] } },
  'POST /webhooks/whatsapp/:sender_id': { payload: 'Body=hi&From=whatsapp%3A%2B14155550111', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
  'POST /webhooks/whatsapp/:sender_id/status': { payload: 'MessageSid=SM1&MessageStatus=read', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
};

/** GET routes whose id-1 answer is not a found resource here (no file, no store row), so no control. */
const NO_CONTROL = new Set(['GET /user/calls/:id/recording', 'GET /user/calls/:id/tape', 'GET /voices/:id/preview.wav']);

// Built before the tests are collected: the route table below is the app's own.
const h: Harness = await harness();
const key = (await h.account(10)).key;
beforeAll(async () => {
  const ids = await seed(h, key);
  // The table below relies on every resource being at id 1 (the first of its kind).
  expect(new Set([ids.folder, ids.label, ids.tool, ids.kb, ids.doc, ids.trunk, ids.assistant, ids.campaign, ids.sender, ids.call])).toEqual(new Set([1]));
});
afterAll(() => h.close());

function routesWithIds() {
  return h.built.api.routes
    .filter((r) => r.url.includes('/:'))
    .map((r) => ({ route: r, key: `${r.method} ${r.url}`, names: [...r.url.matchAll(/:([a-z_]+)/g)].map((m) => m[1]!) }));
}

async function send(route: string, method: string, url: string) {
  const b = BODIES[route];
  const res = await h.call(key, method as 'GET', url, b?.payload ?? (method === 'GET' || method === 'DELETE' ? undefined : {}), b?.headers);
  return { status: res.status, body: res.raw };
}

describe('path ids: canonical decimal integers only', () => {
  it('every path parameter is a numeric id or named here as something else', () => {
    const names = new Set(routesWithIds().flatMap((r) => r.names));
    expect([...names].filter((n) => n !== 'id' && !n.endsWith('_id') && !(n in NOT_NUMERIC))).toEqual([]);
  });

  it.each(routesWithIds().map((r) => r.key).filter((k) => !k.includes(':uuid')))(
    '%s: 0x1, 1e0, 01, +1 and every other non-canonical spelling answer exactly like a missing id',
    async (route) => {
      const r = routesWithIds().find((x) => x.key === route)!;
      const numeric = r.names.filter((n) => !(n in NOT_NUMERIC));
      for (const name of numeric) {
        const url = (value: string) => r.route.url.replace(/:([a-z_]+)/g, (_m, n: string) => (n === name ? value : '1'));
        const missing = await send(route, r.route.method, url(NOPE));
        expect(missing.status, `${route} with ${name}=${NOPE}: ${missing.body}`).toBe(MISSING_STATUS[route] ?? 404);
        for (const spelling of NON_CANONICAL) {
          const got = await send(route, r.route.method, url(spelling));
          expect(got, `${route} with ${name}=${spelling}`).toEqual(missing);
        }
        // The canonical spelling of the same id finds the resource: the table tests something.
        if (r.route.method === 'GET' && !NO_CONTROL.has(route)) {
          expect((await send(route, 'GET', url('1'))).status, `${route} with ${name}=1`).toBe(200);
        }
      }
    },
  );

  it('the resources at id 1 are all still there', async () => {
    for (const url of ['/user/assistant/1', '/user/tools/1', '/user/folders/1', '/user/labels/1', '/user/knowledge-bases/1/documents/1', '/user/phone-numbers/1', '/user/sip-trunks/1', '/user/campaigns/1', '/user/whatsapp/senders/1']) {
      expect((await h.call(key, 'GET', url)).status, url).toBe(200);
    }
    expect((await h.call(key, 'GET', '/user/assistant/1')).body.name).toBe('Support line');
    expect((await h.call(key, 'GET', '/user/tools/1')).body.description).toBe('Looks up an order');
  });

  it('the OpenAPI document describes path ids as positive integers', async () => {
    const doc = (await h.call(key, 'GET', '/openapi.json')).body;
    const param = doc.paths['/user/tools/{id}'].get.parameters.find((p: { name: string }) => p.name === 'id');
    expect(param.schema).toMatchObject({ type: 'integer', minimum: 1 });
  });
});
