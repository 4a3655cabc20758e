import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { assistantBody, harness, seed, trunkBody, type Harness } from './harness.ts';

/**
 * Bad input for every field of every JSON body, generated from the same zod schemas that
 * validate them (their JSON Schema): wrong types, null where null is not allowed, each bound
 * overstepped, unknown enum values, too-long strings, non-finite numbers; one level into nested
 * objects and array items. Each goes out alone inside an otherwise valid body and must come back
 * 422 with the field named, never a 2xx, never a 500. Then path ids, query strings and the body
 * itself (malformed JSON, wrong content type, huge, not an object) for every route.
 */

type Json = Record<string, any>;
type Ids = Awaited<ReturnType<typeof seed>>;

let h: Harness;
let key: string;
let ids: Ids;
let conv: string;
beforeAll(async () => {
  h = await harness();
  const a = await h.account(100);
  key = a.key;
  ids = await seed(h, key);
  const uuid = (await h.call(key, 'GET', `/user/assistant/${ids.assistant}`)).body.uuid as string;
  conv = (await h.call(key, 'POST', '/conversations', { assistant_id: uuid, type: 'test' })).body.conversation_id;
});
afterAll(() => h.close());

/** A valid body per route (bad fields are put into it one at a time) and the path to call. */
function target(method: string, url: string): { path: string; base: Json } | undefined {
  const path = url.replace(':id', String(urlId(url))).replace(':document_id', String(ids.doc)).replace(':uuid', conv);
  const bases: Record<string, Json> = {
    'POST /user/assistant': assistantBody(),
    'PUT /user/assistant/:id': {},
    'POST /user/assistants/disable-inbound-webhook': { assistant_id: ids.assistant },
    'POST /user/folders': { name: 'x' },
    'POST /user/labels': { name: 'x' },
    'POST /user/tools': { name: 't', description: 'd', parameters: { type: 'object', properties: {} }, endpoint: 'https://e.example.com' },
    'PUT /user/tools/:id': {},
    'POST /user/knowledge-bases': { name: 'x' },
    'POST /user/knowledge-bases/:id/documents': { title: 't', content: 'c' },
    'POST /user/phone-numbers': { phone_number: '+14155550777' },
    'POST /user/sip-trunks': trunkBody({ phone_number: '+14155550888', sip_username: 'fuzz' }),
    'POST /user/campaigns': { name: 'x', assistant_id: ids.assistant, phone_number_id: ids.callerId },
    'POST /user/campaigns/:id/leads': { leads: [{ phone_number: '+14155550666' }] },
    'POST /user/campaigns/update-status': { campaign_id: ids.campaign, action: 'stop' },
    'POST /user/whatsapp/senders': { name: 'x', phone: '+14155550555', account_sid: 'AC1', auth_token: 'tok' },
    'PUT /user/whatsapp/senders/:id': {},
    'POST /user/calls': { assistant_id: ids.assistant, phone_number_id: ids.trunkNumber, to: '+14155550444' },
    'POST /conversations': { assistant_id: '00000000-0000-4000-8000-000000000000' },
    'POST /conversations/:uuid/messages': { message: 'hi' },
    'POST /user/ai/generate-reply': { assistant_id: ids.assistant, customer_identifier: 'c', message: 'hi' },
    'POST /user/webhook-secret/rotate': { overlap_seconds: 0, force: true },
    'POST /user/whatsapp/send-freeform': { sender_id: ids.sender, recipient_phone: '+14155550333', message: 'hi' },
  };
  const base = bases[`${method} ${url}`];
  return base && { path, base };
}

function urlId(url: string): number {
  if (url.startsWith('/user/assistant/')) return ids.assistant;
  if (url.startsWith('/user/tools/')) return ids.tool;
  if (url.startsWith('/user/knowledge-bases/')) return ids.kb;
  if (url.startsWith('/user/campaigns/')) return ids.campaign;
  if (url.startsWith('/user/whatsapp/senders/')) return ids.sender;
  if (url.startsWith('/user/folders/')) return ids.folder;
  if (url.startsWith('/user/labels/')) return ids.label;
  if (url.startsWith('/user/phone-numbers/')) return ids.callerId;
  if (url.startsWith('/user/sip-trunks/')) return ids.trunk;
  if (url.startsWith('/user/calls/')) return ids.call;
  return 1;
}

/** Stands for a number JSON cannot write but a client can send: `1e400` parses to Infinity. */
const INFINITE = '__INFINITE__';

/** Splits `anyOf [X, null]` and `type: [X, "null"]` into X and whether null is allowed. */
function unwrap(s: Json): { s: Json | undefined; nullable: boolean } {
  if (Array.isArray(s.anyOf)) {
    const rest = s.anyOf.filter((b: Json) => b.type !== 'null');
    return { s: rest.length === 1 ? rest[0] : undefined, nullable: rest.length < s.anyOf.length };
  }
  if (Array.isArray(s.type)) {
    const rest = s.type.filter((t: string) => t !== 'null');
    return { s: rest.length === 1 ? { ...s, type: rest[0] } : undefined, nullable: rest.length < s.type.length };
  }
  return { s, nullable: false };
}

/** A value the schema accepts, for padding arrays and parent objects. */
function sample(s: Json | undefined): unknown {
  if (!s) return 'a';
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  switch (s.type) {
    case 'integer':
    case 'number':
      return s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 1);
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object':
      return {};
    default:
      return 'a';
  }
}

/** [label, bad value, path of the error, schema-relative path under the field] for one schema. */
function badValues(schema: Json, depth = 0): Array<[string, unknown, string]> {
  const { s, nullable } = unwrap(schema);
  const out: Array<[string, unknown, string]> = [];
  if (!nullable) out.push(['null', null, '']);
  if (!s) return out;
  if (Array.isArray(s.oneOf) && depth < 2) {
    // A discriminated union (built-in tools): every branch's fields, each inside its own kind.
    for (const branch of s.oneOf as Json[]) {
      const kind = branch.properties?.type?.const;
      out.push([`unknown kind`, { type: 'no-such-kind' }, '']);
      for (const [name, sub] of Object.entries<Json>(branch.properties ?? {})) {
        if (name === 'type') continue;
        for (const [label, v, p] of badValues(sub, depth + 1)) out.push([`${kind}.${name} ${label}`, { type: kind, [name]: v }, `.${name}${p}`]);
      }
    }
    return out;
  }
  const wrong = (...vals: unknown[]) => vals.forEach((v) => out.push([`wrong type ${JSON.stringify(v)}`, v, '']));
  switch (s.type) {
    case 'string':
      wrong(12345, true, [], {});
      if (s.maxLength !== undefined) out.push([`longer than ${s.maxLength}`, 'x'.repeat(s.maxLength + 1), '']);
      if (s.minLength >= 1) out.push(['empty', '', '']);
      if (s.enum) out.push(['unknown enum value', 'no-such-value', '']);
      if (s.const !== undefined) out.push(['wrong constant', 'no-such-value', '']);
      if (s.format === 'uri') out.push(['not a URL', 'not a url', '']);
      break;
    case 'integer':
    case 'number':
      wrong('1', true, [], {});
      out.push(['infinite', INFINITE, '']);
      if (s.type === 'integer') out.push(['fraction', (s.minimum ?? 1) + 0.5, '']);
      if (s.minimum !== undefined) out.push([`below ${s.minimum}`, s.type === 'integer' ? s.minimum - 1 : s.minimum - 0.001, '']);
      if (s.exclusiveMinimum !== undefined) out.push([`at exclusive ${s.exclusiveMinimum}`, s.exclusiveMinimum, '']);
      if (s.maximum !== undefined) out.push([`above ${s.maximum}`, s.type === 'integer' ? s.maximum + 1 : s.maximum + 0.001, '']);
      break;
    case 'boolean':
      wrong('true', 1, 'yes', []);
      break;
    case 'array':
      wrong('x', {}, 5);
      if (s.maxItems !== undefined) out.push([`more than ${s.maxItems} items`, Array.from({ length: s.maxItems + 1 }, () => sample(unwrap(s.items ?? {}).s)), '']);
      if (s.minItems >= 1) out.push(['empty array', [], '']);
      if (s.items && depth < 2) for (const [label, v, p] of badValues(s.items, depth + 1)) out.push([`item ${label}`, [v], `.0${p}`]);
      break;
    case 'object':
      wrong('x', [], 5);
      if (s.properties && depth < 2) {
        for (const [name, sub] of Object.entries<Json>(s.properties)) {
          const parent = Object.fromEntries((s.required ?? []).map((r: string) => [r, sample(unwrap(s.properties[r]).s)]));
          for (const [label, v, p] of badValues(sub, depth + 1)) out.push([`.${name} ${label}`, { ...parent, [name]: v }, `.${name}${p}`]);
        }
      }
      break;
  }
  return out;
}

function payload(body: Json): string {
  return JSON.stringify(body).replaceAll(`"${INFINITE}"`, '1e400');
}

const json = { 'content-type': 'application/json' };

describe('bad input in every field of every JSON body', () => {
  it('every JSON body route is covered by the table', () => {
    const missing = h.built.api.routes.filter((r) => r.body && !r.consumes && !target(r.method, r.url)).map((r) => `${r.method} ${r.url}`);
    expect(missing).toEqual([]);
  });

  it('the valid bases are accepted as they are (so each failure below is the bad field’s)', async () => {
    for (const r of h.built.api.routes.filter((x) => x.body && !x.consumes)) {
      const t = target(r.method, r.url)!;
      // Shape-level validation only: the schema must accept the base.
      if (r.url === '/user/assistant' || r.url === '/user/assistant/:id') continue;
      expect(r.body!.safeParse(t.base).success, `${r.method} ${r.url}`).toBe(true);
    }
  });

  it('wrong type, null, out of bounds, unknown enum, too long → 422 naming the field; never 2xx or 500', async () => {
    const failures: string[] = [];
    let sent = 0;
    for (const r of h.built.api.routes.filter((x) => x.body && !x.consumes)) {
      const t = target(r.method, r.url)!;
      const schema = z.toJSONSchema(r.body!, { io: 'input', unrepresentable: 'any' }) as Json;
      for (const [field, fieldSchema] of Object.entries<Json>(schema.properties ?? {})) {
        for (const [label, value, sub] of badValues(fieldSchema)) {
          const path = `${field}${sub}`;
          const res = await h.call(key, r.method, t.path, payload({ ...t.base, [field]: value }), json);
          sent++;
          const errors: Record<string, unknown> = res.body?.errors ?? {};
          const named = Object.keys(errors).some((k) => k === path || k.startsWith(`${path}.`) || (sub === '' && k.startsWith(`${field}.`)));
          if (res.status !== 422 || !named) failures.push(`${r.method} ${r.url} ${field} ${label}: ${res.status} ${res.raw.slice(0, 200)}`);
        }
      }
    }
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(800);
  });

  it('rules the schemas leave to handlers: unknown update-status action, unknown tool kind, bad custom tool schema', async () => {
    const action = await h.call(key, 'POST', '/user/campaigns/update-status', { campaign_id: ids.campaign, action: 'pause' });
    expect(action.status).toBe(422);
    expect(action.body).toEqual({ message: expect.stringMatching(/start or stop/), success: false });
    const kind = await h.call(key, 'POST', '/user/assistant', assistantBody({ tools: [{ type: 'teleport' }] }));
    expect(kind.status).toBe(422);
    expect(Object.keys(kind.body.errors)).toEqual(['tools.0.type']);
    const params = await h.call(key, 'POST', '/user/tools', { name: 't', description: 'd', parameters: { type: 'string' }, endpoint: 'https://e.example.com' });
    expect(params.status).toBe(422);
    expect(params.body.errors.parameters).toBeDefined();
  });
});

describe('bad path ids and query strings on every route', () => {
  const BAD_IDS = ['abc', '0', '-1', '1.5', '1e3', '9'.repeat(30), '%00', '%20', 'null'];

  it('a bad id is 404 or 422, never 500', async () => {
    const failures: string[] = [];
    for (const r of h.built.api.routes.filter((x) => x.url.includes('/:') && !x.consumes)) {
      for (const bad of BAD_IDS) {
        const url = r.url.replace(/:[a-z_]+/g, bad);
        const body = r.body ? target(r.method, r.url)?.base : undefined;
        const res = await h.call(key, r.method, url, body);
        if (![404, 422].includes(res.status)) failures.push(`${r.method} ${url}: ${res.status} ${res.raw.slice(0, 160)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('bad query values are 422 naming the parameter', async () => {
    const failures: string[] = [];
    for (const r of h.built.api.routes.filter((x) => x.query)) {
      const schema = z.toJSONSchema(r.query!, { io: 'input', unrepresentable: 'any' }) as Json;
      const base: Record<string, string> = r.url === '/user/whatsapp/session-status' ? { sender_id: String(ids.sender), recipient_phone: '+14155550333' } : {};
      const path = r.url.replace(':id', String(urlId(r.url)));
      for (const [name, s] of Object.entries<Json>(schema.properties ?? {})) {
        const { s: inner } = unwrap(s);
        const bads = inner?.type === 'string' && !inner.enum ? [] : ['abc', '-1', '1.5', '1e400', '9'.repeat(30), 'no-such-value'];
        for (const bad of bads) {
          if (inner?.enum?.includes(bad)) continue;
          const qs = new URLSearchParams({ ...base, [name]: bad }).toString();
          const res = await h.call(key, 'GET', `${path}?${qs}`);
          if (res.status !== 422 || !(name in (res.body?.errors ?? {}))) failures.push(`${r.url} ${name}=${bad}: ${res.status} ${res.raw.slice(0, 160)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('unknown query parameters on the voices list are 422', async () => {
    const res = await h.call(key, 'GET', '/user/assistants/voices?mood=happy');
    expect(res.status).toBe(422);
    expect(res.body.errors).toBeDefined();
  });
});

describe('bodies that are not a JSON object, on every JSON body route', () => {
  it('malformed JSON 400; wrong content type, form-encoded, too large, array, string, number or null body 422; never 500', async () => {
    const failures: string[] = [];
    const huge = JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) });
    for (const r of h.built.api.routes.filter((x) => x.body && !x.consumes)) {
      const t = target(r.method, r.url)!;
      const cases: Array<[string, string, Record<string, string>, number]> = [
        ['malformed', '{"name": ', json, 400],
        ['truncated', payload(t.base).slice(0, -1), json, 400],
        ['empty with JSON type', '', json, 400],
        ['text/plain', 'name=x', { 'content-type': 'text/plain' }, 422],
        ['form-encoded', new URLSearchParams(Object.entries(t.base).map(([k, v]): [string, string] => [k, String(v)])).toString(), { 'content-type': 'application/x-www-form-urlencoded' }, 422],
        ['xml', '<a/>', { 'content-type': 'application/xml' }, 422],
        ['too large', huge, json, 422],
        ['array', '[1,2]', json, 422],
        ['string', '"hello"', json, 422],
        ['number', '42', json, 422],
      ];
      for (const [label, body, headers, want] of cases) {
        const res = await h.call(key, r.method, t.path, body, headers);
        const shaped = want === 400 ? typeof (res.body?.message ?? res.body?.error) === 'string' : res.body?.errors !== undefined;
        if (res.status !== want || !shaped) failures.push(`${r.method} ${r.url} ${label}: ${res.status} ${res.raw.slice(0, 160)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('a prototype-polluting body changes nothing and is refused', async () => {
    const res = await h.call(key, 'POST', '/user/folders', '{"name":"x","__proto__":{"admin":true}}', json);
    expect([400, 422]).toContain(res.status);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });
});
