import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CalcomClient, CalcomError, calcomBaseUrl } from '../../../src/integrations/calcom.ts';
import { calendarBookingSchema } from '../../../src/assistants/tools.ts';
import { calendarTools } from '../../../src/call/tools/calendar.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { CalcomStandIn } from '../../support/calcom-stand-in.ts';
import { loopbackOutbound } from '../../support/outbound.ts';

const NOW = Date.parse('2030-03-05T15:00:00Z');
const SLOT_A = Date.parse('2030-03-06T08:00:00Z'); // 09:00 Berlin
const SLOT_B = Date.parse('2030-03-06T09:00:00Z');
const SLOT_C = Date.parse('2030-03-09T13:30:00Z');

let cal: CalcomStandIn;
beforeAll(async () => {
  cal = await CalcomStandIn.start();
});
afterAll(async () => {
  await cal.close();
});
beforeEach(() => {
  cal.requests.length = 0;
  cal.bookings.length = 0;
  cal.freeSlots = [SLOT_A, SLOT_B, SLOT_C];
  cal.delayMs = 0;
});

const client = (over: Partial<ConstructorParameters<typeof CalcomClient>[0]> = {}) =>
  new CalcomClient({ apiKey: cal.apiKey, endpoint: 'custom', customEndpoint: cal.baseUrl, eventTypeSlug: 'intro', fetch: loopbackOutbound().fetch, ...over });

describe('CalcomClient against the stand-in', () => {
  it('without a fetch of its own, the client goes through the outbound guard: a loopback endpoint is refused, not retryable, and receives nothing', async () => {
    const c = new CalcomClient({ apiKey: cal.apiKey, endpoint: 'custom', customEndpoint: cal.baseUrl, eventTypeSlug: 'intro', teamSlug: 'sales' });
    const err = await c.availableSlots({ start: '2030-03-06', end: '2030-03-06', timeZone: 'UTC' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CalcomError);
    expect(err).toMatchObject({ httpStatus: 0, retryable: false, message: 'Cal.com could not be reached: refused to connect: 127.0.0.1 is a loopback address (customer URLs may only reach public addresses)' });
    expect(cal.requests).toHaveLength(0);
  });

  it('maps the regions to their base URLs; a custom endpoint may end in /v2', () => {
    expect(calcomBaseUrl('us')).toBe('https://api.cal.com');
    expect(calcomBaseUrl('eu')).toBe('https://api.cal.eu');
    expect(calcomBaseUrl('custom', 'https://cal.example.com/v2/')).toBe('https://cal.example.com');
    expect(() => calcomBaseUrl('custom', null)).toThrow(CalcomError);
  });

  it('slots: resolves the key owner once, sends the slots API version, answers in the time zone', async () => {
    const c = client();
    const slots = await c.availableSlots({ start: '2030-03-06', end: '2030-03-06', timeZone: 'Europe/Berlin' });
    expect(slots).toEqual([{ start: '2030-03-06T09:00:00.000+01:00' }, { start: '2030-03-06T10:00:00.000+01:00' }]);
    await c.availableSlots({ start: '2030-03-06', end: '2030-03-10', timeZone: 'UTC' });
    expect(cal.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v2/me', 'GET /v2/slots', 'GET /v2/slots']);
    const r = cal.requests[1]!;
    expect(r.headers.authorization).toBe(`Bearer ${cal.apiKey}`);
    expect(r.headers['cal-api-version']).toBe('2024-09-04');
    expect(r.query).toEqual({ eventTypeSlug: 'intro', username: 'sam', start: '2030-03-06', end: '2030-03-06', timeZone: 'Europe/Berlin' });
  });

  it('team event types are addressed by teamSlug, without /v2/me', async () => {
    const c = client({ eventTypeSlug: 'demo', teamSlug: 'sales' });
    expect(await c.availableSlots({ start: '2030-03-09', end: '2030-03-09', timeZone: 'UTC' })).toEqual([{ start: '2030-03-09T13:30:00.000+00:00' }]);
    expect(cal.requests.map((r) => r.path)).toEqual(['/v2/slots']);
    expect(cal.requests[0]!.query.teamSlug).toBe('sales');
  });

  it('books: UTC start, attendee, booking fields, bookings API version; the slot is then taken', async () => {
    const c = client();
    const b = await c.createBooking({ start: '2030-03-06T09:00:00+01:00', attendee: { name: 'Jane', email: 'jane@example.com', timeZone: 'Europe/Berlin', phoneNumber: '+14155550123' }, bookingFieldsResponses: { notes: 'hi' } });
    expect(b).toMatchObject({ uid: expect.stringMatching(/^bk_/), start: '2030-03-06T08:00:00.000Z', end: '2030-03-06T08:30:00.000Z', status: 'accepted' });
    const post = cal.requests.find((r) => r.method === 'POST')!;
    expect(post.headers['cal-api-version']).toBe('2024-08-13');
    expect(post.body).toEqual({
      start: '2030-03-06T08:00:00.000Z',
      eventTypeSlug: 'intro',
      username: 'sam',
      attendee: { name: 'Jane', email: 'jane@example.com', timeZone: 'Europe/Berlin', phoneNumber: '+14155550123' },
      bookingFieldsResponses: { notes: 'hi' },
    });
    await expect(c.createBooking({ start: new Date(SLOT_A).toISOString(), attendee: { name: 'Bo', email: 'bo@example.com', timeZone: 'UTC' } })).rejects.toMatchObject({
      httpStatus: 400,
      retryable: false,
      message: expect.stringMatching(/already has booking/),
    });
    expect((await c.availableSlots({ start: '2030-03-06', end: '2030-03-06', timeZone: 'UTC' })).map((s) => s.start)).toEqual(['2030-03-06T09:00:00.000+00:00']);
  });

  it('clear errors: bad key, unknown slug, missing required field, timeout', async () => {
    await expect(client({ apiKey: 'wrong' }).availableSlots({ start: '2030-03-06', end: '2030-03-06', timeZone: 'UTC' })).rejects.toMatchObject({
      httpStatus: 401,
      message: expect.stringMatching(/rejected the calendar API key/),
    });
    await expect(client({ eventTypeSlug: 'nope' }).availableSlots({ start: '2030-03-06', end: '2030-03-06', timeZone: 'UTC' })).rejects.toMatchObject({
      httpStatus: 404,
      message: expect.stringMatching(/does not know this event type/),
    });
    await expect(
      client({ eventTypeSlug: 'demo', teamSlug: 'sales' }).createBooking({ start: new Date(SLOT_C).toISOString(), attendee: { name: 'Jane', email: 'jane@example.com', timeZone: 'UTC' } }),
    ).rejects.toMatchObject({ httpStatus: 400, calCode: 'BadRequestException', message: expect.stringMatching(/company is required/) });
    cal.delayMs = 300;
    await expect(client({ timeoutMs: 50, username: 'sam' }).availableSlots({ start: '2030-03-06', end: '2030-03-06', timeZone: 'UTC' })).rejects.toMatchObject({
      httpStatus: 0,
      retryable: true,
      message: expect.stringMatching(/did not answer within 50 ms/),
    });
  });

  it('an aborted request rejects with the abort, not as a Cal.com failure', async () => {
    cal.delayMs = 300;
    const ac = new AbortController();
    const p = client({ username: 'sam' }).availableSlots({ start: '2030-03-06', end: '2030-03-06', timeZone: 'UTC' }, ac.signal);
    setTimeout(() => ac.abort(), 20);
    await expect(p).rejects.not.toBeInstanceOf(CalcomError);
  });
});

describe('calendar_booking tool end to end against the stand-in', () => {
  const tool = calendarBookingSchema.parse({
    type: 'calendar_booking',
    calendar_api_key: 'sealed:cal_test_key',
    calendar_event_slug: 'demo',
    calendar_team_slug: 'sales',
    calendar_endpoint: 'custom',
    calendar_custom_endpoint: 'http://placeholder.invalid',
    calendar_booking_fields: [{ slug: 'company', type: 'text', label: 'Company', required: true }],
  });

  it('looks up availability, then books the chosen slot with the validated fields', async () => {
    const [check, book] = calendarTools(
      { ...tool, calendar_custom_endpoint: cal.baseUrl },
      { clock: new ManualClock(NOW), timeZone: 'America/New_York', callerNumber: '+14155550123', openSecret: (s) => s.replace(/^sealed:/, ''), fetch: loopbackOutbound().fetch },
    );
    const avail = (await check!.run({ start_date: '2030-03-06', end_date: '2030-03-09' }, undefined)) as { slots: string[] };
    // New York is still on EST (UTC-5) on 9 March 2030.
    expect(avail.slots).toEqual(['2030-03-06T03:00:00.000-05:00', '2030-03-06T04:00:00.000-05:00', '2030-03-09T08:30:00.000-05:00']);
    const res = await book!.run({ start: avail.slots[2], name: 'Jane Roe', email: 'jane@example.com', company: 'Acme' }, undefined);
    expect(res).toMatchObject({ booked: true, start: '2030-03-09T13:30:00.000Z', status: 'accepted' });
    expect(cal.bookings[0]).toMatchObject({ eventTypeSlug: 'demo', bookingFieldsResponses: { company: 'Acme' }, attendees: [{ timeZone: 'America/New_York' }] });
    // The same slot again: Cal.com refuses and the model gets a readable error.
    expect(await book!.run({ start: avail.slots[2], name: 'Bo', email: 'bo@example.com', company: 'B' }, undefined)).toMatchObject({
      error: expect.stringMatching(/already has booking/),
    });
  });
});
