import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { platform, type Platform } from './platform-helpers.ts';
import { testApp } from '../../support/app.ts';
import { eventBody } from '../../../src/webhooks/events.ts';

let t: Platform;
beforeEach(async () => { t = await platform(); });
afterEach(async () => { await t.close(); });

describe('CallsRepo', () => {
  it('creates and updates records for the SIP layer', async () => {
    const call = await t.ctx.repos.calls.create({ accountId: t.a.id, direction: 'inbound', fromNumber: '+14155550100', toNumber: '+14155550101', status: 'ringing' });
    expect(call).toMatchObject({ uuid: expect.any(String), status: 'ringing', inviteAt: t.clock.now(), costMicros: 0, transcript: null });
    const updated = await t.ctx.repos.calls.update(call.id, {
      status: 'completed',
      answerAt: call.inviteAt + 2000,
      endAt: call.inviteAt + 65_000,
      codec: 'PCMU',
      endCause: 'caller_hangup',
      quality: { mos: 4.3, packet_loss: 0.001 },
      transcript: [{ role: 'assistant', content: 'Hello!' }],
      costMicros: 110_000,
    });
    expect(updated).toMatchObject({ status: 'completed', codec: 'PCMU', quality: { mos: 4.3 }, transcript: [{ role: 'assistant', content: 'Hello!' }] });
    expect((await t.ctx.repos.calls.getByUuid(call.uuid))?.id).toBe(call.id);
  });
});

describe('GET /user/calls filters', () => {
  it('filters by status (one or several), direction and start date, pages with offset, and refuses bad values with 422', async () => {
    const day = Date.parse('2026-03-10T00:00:00Z');
    const make = (over: Record<string, unknown>) =>
      t.ctx.repos.calls.create({ accountId: t.a.id, direction: 'inbound', fromNumber: '+1', toNumber: '+2', ...over } as never);
    const a = await make({ status: 'completed', inviteAt: day - 1 }); // 9 March, last ms
    const b = await make({ status: 'in-progress', direction: 'outbound', inviteAt: day }); // 10 March, first ms
    const c = await make({ status: 'ringing', inviteAt: day + 12 * 3600_000 });
    const d = await make({ status: 'failed', direction: 'outbound', inviteAt: day + 86_400_000 }); // 11 March
    await make({ accountId: t.b.id, status: 'completed', inviteAt: day });
    const ids = async (q: string) => {
      const res = await t.req(t.a.key, 'GET', `/user/calls${q}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.map((x: { id: number }) => x.id);
    };
    expect(await ids('?status=completed')).toEqual([a.id]);
    expect(await ids('?status=in-progress,ringing')).toEqual([c.id, b.id]);
    expect(await ids('?direction=outbound')).toEqual([d.id, b.id]);
    expect(await ids('?direction=outbound&status=failed')).toEqual([d.id]);
    // A bare date is a whole UTC day: from its midnight, to its end.
    expect(await ids('?from=2026-03-10&to=2026-03-10')).toEqual([c.id, b.id]);
    expect(await ids('?from=2026-03-10')).toEqual([d.id, c.id, b.id]);
    expect(await ids('?to=2026-03-09')).toEqual([a.id]);
    // A date-time is exact (to is exclusive).
    expect(await ids('?from=2026-03-10T06:00:00Z&to=2026-03-11T00:00:00.000Z')).toEqual([c.id]);
    expect(await ids('?from=2026-03-10T01:00:00%2B02:00&to=2026-03-10T00:00:00.001Z')).toEqual([b.id, a.id]); // 23:00 UTC on the 9th
    expect(await ids('?limit=2&offset=1')).toEqual([c.id, b.id]);

    for (const bad of ['status=done', 'status=', 'status=completed,,', 'direction=sideways', 'from=yesterday', 'to=2026-13-01', 'from=2026-03-10T10:00:00', 'offset=-1']) {
      const res = await t.req(t.a.key, 'GET', `/user/calls?${bad}`);
      expect(res.status, bad).toBe(422);
      expect(res.body).toMatchObject({ message: expect.any(String), errors: expect.any(Object) });
    }
  });

  it('documents the filters in the OpenAPI document', async () => {
    const doc = (await t.req(undefined, 'GET', '/openapi.json')).body;
    const names = doc.paths['/user/calls'].get.parameters.map((p: { name: string }) => p.name);
    expect(names).toEqual(expect.arrayContaining(['status', 'direction', 'from', 'to', 'limit', 'offset', 'assistant_id']));
    expect(doc.paths['/user/calls/{id}/webhooks'].get).toMatchObject({ security: [{ bearer: [] }] });
  });
});

describe('GET /user/calls/:id/webhooks', () => {
  it("lists the call's deliveries with their outcome, without payloads or URL secrets, and only to its owner", async () => {
    const call = await t.ctx.repos.calls.create({ accountId: t.a.id, direction: 'inbound', fromNumber: '+1', toNumber: '+2' });
    const other = await t.ctx.repos.calls.create({ accountId: t.a.id, direction: 'inbound', fromNumber: '+1', toNumber: '+3' });
    const body = (uuid: string) => eventBody('call.completed', t.clock.now(), { call: { id: 1, uuid }, transcript: [{ text: 'my card is 4111' }] });
    const url = 'https://user:pw@hooks.example.com/in/calls?token=s3cret';
    const delivered = await t.ctx.repos.outbox.enqueue(t.a.id, 'call.completed', url, body(call.uuid));
    const failing = await t.ctx.repos.outbox.enqueue(t.a.id, 'call.completed', url, body(call.uuid));
    await t.ctx.repos.outbox.enqueue(t.a.id, 'call.completed', url, body(other.uuid));
    await t.ctx.repos.outbox.markDelivered(delivered, 1);
    await t.ctx.repos.outbox.markRetry(failing, 2, t.clock.now() + 60_000, 'HTTP 503');

    const res = await t.req(t.a.key, 'GET', `/user/calls/${call.id}/webhooks`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      expect.objectContaining({ id: delivered, event: 'call.completed', status: 'delivered', attempts: 1, last_response_code: null, last_error: null, destination: 'https://hooks.example.com/in/calls', delivered_at: expect.any(String), next_attempt_at: null }),
      expect.objectContaining({ id: failing, status: 'pending', attempts: 2, last_response_code: 503, last_error: 'HTTP 503', next_attempt_at: expect.any(String), delivered_at: null }),
    ]);
    const text = JSON.stringify(res.body);
    expect(text).not.toMatch(/s3cret|pw@|4111|payload/);
    expect((await t.req(t.b.key, 'GET', `/user/calls/${call.id}/webhooks`)).status).toBe(404);
    expect((await t.req(undefined, 'GET', `/user/calls/${call.id}/webhooks`)).status).toBe(401);
    expect((await t.req(t.a.key, 'GET', `/user/calls/${other.id}/webhooks`)).body).toHaveLength(1);
  });
});

describe('GET /user/calls', () => {
  it('lists newest first with filters and a limit; reads one call', async () => {
    const assistant = await t.assistant(t.a.id);
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) {
      t.clock.advance(1000);
      ids.push((await t.ctx.repos.calls.create({ accountId: t.a.id, direction: 'outbound', fromNumber: '+1', toNumber: `+2${i}`, assistantId: i === 1 ? assistant : null })).id);
    }
    const list = await t.req(t.a.key, 'GET', '/user/calls');
    expect(list.body.map((c: { id: number }) => c.id)).toEqual([...ids].reverse());
    expect((await t.req(t.a.key, 'GET', '/user/calls?limit=1')).body.map((c: { id: number }) => c.id)).toEqual([ids[2]]);
    expect((await t.req(t.a.key, 'GET', `/user/calls?assistant_id=${assistant}`)).body.map((c: { id: number }) => c.id)).toEqual([ids[1]]);
    expect((await t.req(t.a.key, 'GET', '/user/calls?limit=0')).status).toBe(422);
    expect((await t.req(t.a.key, 'GET', '/user/calls?limit=101')).status).toBe(422);

    await t.ctx.repos.calls.update(ids[0]!, { status: 'completed', answerAt: 1_700_000_001_000, endAt: 1_700_000_031_400, costMicros: 50_000, codec: 'PCMA', endCause: 'assistant_hangup', transcript: [{ role: 'user', content: 'hi' }] });
    const one = await t.req(t.a.key, 'GET', `/user/calls/${ids[0]}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      id: ids[0],
      direction: 'outbound',
      status: 'completed',
      from_number: '+1',
      answered_at: '2023-11-14T22:13:21.000Z',
      ended_at: '2023-11-14T22:13:51.400Z',
      duration_seconds: 30,
      codec: 'PCMA',
      end_cause: 'assistant_hangup',
      transcript: [{ role: 'user', content: 'hi' }],
      recording_url: null,
      tape_url: null,
      cost: 0.05,
    });
  });

  it("answers 404 for another account's call", async () => {
    const call = await t.ctx.repos.calls.create({ accountId: t.a.id, direction: 'inbound', fromNumber: '+1', toNumber: '+2' });
    expect((await t.req(t.b.key, 'GET', `/user/calls/${call.id}`)).status).toBe(404);
    expect((await t.req(t.b.key, 'GET', `/user/calls/${call.id}/recording`)).status).toBe(404);
    expect((await t.req(t.b.key, 'GET', `/user/calls/${call.id}/tape`)).status).toBe(404);
    expect((await t.req(t.b.key, 'GET', '/user/calls')).body).toEqual([]);
    expect((await t.req(t.a.key, 'GET', '/user/calls/999')).status).toBe(404);
  });

  it('serves a recording from inside the data directory only', async () => {
    // Its own app: recordings live in the data directory, which the shared one does not have.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-rec-'));
    const app = await testApp({ SWITCHBOARD_DATA_DIR: dir });
    try {
      const acct = await app.account();
      fs.mkdirSync(path.join(dir, 'recordings'));
      fs.writeFileSync(path.join(dir, 'recordings', 'a.wav'), 'RIFFfake');
      const call = await app.ctx.repos.calls.create({ accountId: acct.id, direction: 'inbound', fromNumber: '+1', toNumber: '+2', recordingPath: 'recordings/a.wav' });
      const escape = await app.ctx.repos.calls.create({ accountId: acct.id, direction: 'inbound', fromNumber: '+1', toNumber: '+2', recordingPath: '../../etc/passwd' });
      const meta = await app.call(acct.key, 'GET', `/user/calls/${call.id}`);
      expect(meta.body.recording_url).toMatch(new RegExp(`/api/user/calls/${call.id}/recording$`));
      const rec = await app.call(acct.key, 'GET', `/user/calls/${call.id}/recording`);
      expect(rec.status).toBe(200);
      expect(rec.headers['content-type']).toBe('audio/wav');
      expect(rec.body).toBe('RIFFfake');
      expect((await app.call(acct.key, 'GET', `/user/calls/${escape.id}/recording`)).status).toBe(404);
    } finally {
      await app.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('serves one byte range of a recording (206), refuses a range past its end (416), and ignores a malformed one', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-rec-range-'));
    const app = await testApp({ SWITCHBOARD_DATA_DIR: dir });
    try {
      const acct = await app.account();
      fs.mkdirSync(path.join(dir, 'recordings'));
      fs.writeFileSync(path.join(dir, 'recordings', 'r.wav'), 'RIFF0123456789');
      const call = await app.ctx.repos.calls.create({ accountId: acct.id, direction: 'inbound', fromNumber: '+1', toNumber: '+2', recordingPath: 'recordings/r.wav' });
      const get = (range: string) => app.app.inject({ method: 'GET', url: `/api/user/calls/${call.id}/recording`, headers: { authorization: `Bearer ${acct.key}`, range } });
      const part = await get('bytes=4-7');
      expect(part.statusCode).toBe(206);
      expect(part.headers['content-range']).toBe('bytes 4-7/14');
      expect(part.headers['content-length']).toBe('4');
      expect(part.body).toBe('0123');
      const suffix = await get('bytes=-3');
      expect([suffix.statusCode, suffix.body]).toEqual([206, '789']);
      const past = await get('bytes=14-');
      expect(past.statusCode).toBe(416);
      expect(past.headers['content-range']).toBe('bytes */14');
      expect(JSON.parse(past.body)).toHaveProperty('message');
      const malformed = await get('bytes=9-2');
      expect([malformed.statusCode, malformed.body, malformed.headers['accept-ranges']]).toEqual([200, 'RIFF0123456789', 'bytes']);
    } finally {
      await app.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('deleting an assistant deletes its calls’ recordings and tapes from the data directory', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-rec-delete-'));
    const app = await testApp({ SWITCHBOARD_DATA_DIR: dir });
    try {
      const acct = await app.account();
      const assistant = await app.ctx.repos.assistants.create(acct.id, { name: 'a', type: 'inbound', mode: 'pipeline' } as never);
      const other = await app.ctx.repos.assistants.create(acct.id, { name: 'b', type: 'inbound', mode: 'pipeline' } as never);
      fs.mkdirSync(path.join(dir, 'recordings'));
      for (const f of ['a.wav', 'a.tape.json', 'keep.wav']) fs.writeFileSync(path.join(dir, 'recordings', f), 'x');
      const base = { accountId: acct.id, direction: 'inbound', fromNumber: '+1', toNumber: '+2' } as const;
      await app.ctx.repos.calls.create({ ...base, assistantId: assistant.id, recordingPath: 'recordings/a.wav', details: { tape: 'recordings/a.tape.json' } });
      await app.ctx.repos.calls.create({ ...base, assistantId: other.id, recordingPath: 'recordings/keep.wav' });
      expect((await app.call(acct.key, 'DELETE', `/user/assistant/${assistant.id}`)).status).toBe(200);
      await app.ctx.recordings?.whenIdle();
      const deadline = Date.now() + 5000;
      while (fs.readdirSync(path.join(dir, 'recordings')).length > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(fs.readdirSync(path.join(dir, 'recordings'))).toEqual(['keep.wav']);
    } finally {
      await app.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('serves the call tape named in details.tape, from inside the data directory only', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-tape-'));
    const app = await testApp({ SWITCHBOARD_DATA_DIR: dir });
    try {
      const acct = await app.account();
      const other = await app.account();
      fs.mkdirSync(path.join(dir, 'recordings'));
      fs.writeFileSync(path.join(dir, 'recordings', 'a.tape.json'), '{"kind":"switchboard-call-tape","version":1}');
      const base = { accountId: acct.id, direction: 'inbound', fromNumber: '+1', toNumber: '+2' } as const;
      const call = await app.ctx.repos.calls.create({ ...base, details: { tape: 'recordings/a.tape.json' } });
      const none = await app.ctx.repos.calls.create(base);
      const escape = await app.ctx.repos.calls.create({ ...base, details: { tape: '../../etc/passwd' } });
      const meta = await app.call(acct.key, 'GET', `/user/calls/${call.id}`);
      expect(meta.body.tape_url).toMatch(new RegExp(`/api/user/calls/${call.id}/tape$`));
      expect((await app.call(acct.key, 'GET', `/user/calls/${none.id}`)).body.tape_url).toBeNull();
      const tape = await app.call(acct.key, 'GET', `/user/calls/${call.id}/tape`);
      expect(tape.status).toBe(200);
      expect(tape.headers['content-type']).toMatch(/^application\/json/);
      expect(tape.body).toEqual({ kind: 'switchboard-call-tape', version: 1 });
      expect((await app.call(acct.key, 'GET', `/user/calls/${none.id}/tape`)).status).toBe(404);
      expect((await app.call(acct.key, 'GET', `/user/calls/${escape.id}/tape`)).status).toBe(404);
      expect((await app.call(other.key, 'GET', `/user/calls/${call.id}/tape`)).status).toBe(404);
    } finally {
      await app.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
