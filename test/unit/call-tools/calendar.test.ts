import { describe, expect, it } from 'vitest';
import { calendarTools, parseStart } from '../../../src/call/tools/calendar.ts';
import { calendarBookingSchema } from '../../../src/assistants/tools.ts';
import type { CalcomClient } from '../../../src/integrations/calcom.ts';
import { ManualClock } from '../../../src/util/clock.ts';

const NOW = Date.parse('2030-03-05T15:00:00Z');

/** A client that records what reached it; validation failures must never get this far. */
function stubClient() {
  const calls: { op: string; input: unknown }[] = [];
  const client = {
    async availableSlots(input: unknown) {
      calls.push({ op: 'slots', input });
      return [{ start: '2030-03-06T09:00:00.000+01:00' }, { start: '2030-03-05T14:00:00.000Z' }];
    },
    async createBooking(input: unknown) {
      calls.push({ op: 'book', input });
      return { id: 1, uid: 'bk_1', start: '2030-03-06T08:00:00.000Z', end: '2030-03-06T08:30:00.000Z', status: 'accepted' };
    },
  } as unknown as CalcomClient;
  return { client, calls };
}

function setup(fields: unknown[] = [], callerNumber: string | null = '+14155550123') {
  const tool = calendarBookingSchema.parse({ type: 'calendar_booking', calendar_api_key: 'k', calendar_event_slug: 'intro', calendar_booking_fields: fields });
  const { client, calls } = stubClient();
  const [check, book] = calendarTools(tool, { clock: new ManualClock(NOW), timeZone: 'Europe/Berlin', callerNumber, client });
  return { check: check!, book: book!, calls };
}

describe('check_availability', () => {
  it('asks the calendar for the range in the caller or assistant time zone; past slots are dropped', async () => {
    const { check, calls } = setup();
    expect(await check.run({ start_date: '2030-03-06', end_date: '2030-03-08', time_zone: 'Europe/London' }, undefined)).toEqual({
      time_zone: 'Europe/London',
      slots: ['2030-03-06T09:00:00.000+01:00'],
      more: false,
    });
    expect(calls[0]).toEqual({ op: 'slots', input: { start: '2030-03-06', end: '2030-03-08', timeZone: 'Europe/London' } });
    await check.run({ start_date: '2030-03-06' }, undefined);
    expect(calls[1]!.input).toEqual({ start: '2030-03-06', end: '2030-03-06', timeZone: 'Europe/Berlin' });
  });

  it('refuses bad dates, reversed or too long ranges, past ranges and unknown time zones', async () => {
    const { check, calls } = setup();
    for (const args of [
      { start_date: 'tomorrow' },
      { start_date: '2030-03-08', end_date: '2030-03-06' },
      { start_date: '2030-03-06', end_date: '2030-04-06' },
      { start_date: '2030-03-01', end_date: '2030-03-04' },
      { start_date: '2030-03-06', time_zone: 'Mars/Olympus' },
    ]) {
      expect(await check.run(args, undefined), JSON.stringify(args)).toMatchObject({ error: expect.stringMatching(/Invalid arguments/) });
    }
    expect(calls).toEqual([]);
  });
});

describe('book_meeting', () => {
  const fields = [
    { slug: 'attendeePhoneNumber', type: 'phone', label: 'Phone', required: true },
    { slug: 'company', type: 'text', label: 'Company', required: true },
    { slug: 'plan', type: 'select', label: 'Plan', options: ['Starter', 'Pro'] },
    { slug: 'cc', type: 'email', label: 'Copy to' },
  ];

  it('exposes each booking field with its JSON Schema type; required ones listed', () => {
    const { book } = setup(fields);
    expect(book.spec.parameters).toMatchObject({
      properties: { plan: { type: 'string', enum: ['Starter', 'Pro'] }, cc: { type: 'string', format: 'email' }, company: { type: 'string' } },
      // The caller's number stands in for a required phone field, so it is not demanded.
      required: ['start', 'name', 'email', 'company'],
    });
  });

  it('books with attendee fields mapped the Cal.com way; select options matched case-insensitively', async () => {
    const { book, calls } = setup(fields);
    const res = await book.run({ start: '2030-03-06T09:00', name: 'Jane Roe', email: 'jane@example.com', company: 'Acme', plan: 'pro' }, undefined);
    expect(res).toMatchObject({ booked: true, booking_uid: 'bk_1' });
    expect(calls[0]!.input).toEqual({
      start: '2030-03-06T08:00:00.000Z', // 09:00 in Berlin (CET, UTC+1)
      attendee: { name: 'Jane Roe', email: 'jane@example.com', timeZone: 'Europe/Berlin', phoneNumber: '+14155550123' },
      bookingFieldsResponses: { company: 'Acme', plan: 'Pro' },
    });
  });

  it('reports every invalid field at once and books nothing', async () => {
    const { book, calls } = setup(fields, null);
    const res = (await book.run({ start: '2030-03-01T09:00:00Z', name: '', email: 'jane at example', plan: 'Gold', cc: 'nope', attendeePhoneNumber: '12' }, undefined)) as {
      error: string;
      fields: Record<string, string>;
    };
    expect(Object.keys(res.fields).sort()).toEqual(['attendeePhoneNumber', 'cc', 'company', 'email', 'name', 'plan', 'start']);
    expect(res.fields.plan).toMatch(/Starter, Pro/);
    expect(res.fields.start).toMatch(/past/);
    expect(calls).toEqual([]);
  });
});

describe('parseStart', () => {
  it('keeps explicit offsets and reads wall times in the zone, across DST', () => {
    expect(new Date(parseStart('2030-03-06T09:00:00+01:00', 'UTC')!).toISOString()).toBe('2030-03-06T08:00:00.000Z');
    expect(new Date(parseStart('2030-07-01T09:00', 'Europe/Berlin')!).toISOString()).toBe('2030-07-01T07:00:00.000Z');
    expect(new Date(parseStart('2030-01-01 09:00', 'America/New_York')!).toISOString()).toBe('2030-01-01T14:00:00.000Z');
    expect(parseStart('next tuesday', 'UTC')).toBeUndefined();
  });
});
