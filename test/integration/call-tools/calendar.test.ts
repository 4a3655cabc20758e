import { afterEach, describe, expect, it } from 'vitest';
import { CalcomStandIn } from '../../support/calcom-stand-in.ts';
import { until, world, type World } from './world.ts';
import { createOutbound } from '../../../src/net/outbound/index.ts';

let w: World | undefined;
let cal: CalcomStandIn | undefined;
afterEach(async () => {
  await w?.close();
  await cal?.close();
  w = cal = undefined;
});

describe('calendar booking in a call', () => {
  it('the model checks availability and books a slot against the Cal.com stand-in', async () => {
    cal = await CalcomStandIn.start();
    const day = Math.floor(Date.now() / 86_400_000) * 86_400_000 + 3 * 86_400_000;
    cal.freeSlots = [day + 9 * 3_600_000, day + 10 * 3_600_000];
    const date = new Date(day).toISOString().slice(0, 10);
    w = await world({
      tools: [
        {
          type: 'calendar_booking',
          data: { calendar_api_key: 'cal_test_key', calendar_event_slug: 'intro', calendar_endpoint: 'custom', calendar_custom_endpoint: cal.baseUrl, description: 'demos' },
        },
      ],
    });
    w.llm.queue.push(
      { toolCalls: [{ name: 'check_availability', arguments: { start_date: date, end_date: date } }] },
      { toolCalls: [{ name: 'book_meeting', arguments: { start: `${date}T10:00:00Z`, name: 'Ada Lovelace', email: 'ada@example.com' } }] },
      { content: 'You are booked for ten.' },
    );
    const call = await w.call();
    await until(() => w!.tts.spoken.includes('You are booked for ten.'), 6000, 'confirmation spoken');
    const avail = JSON.parse(String(w.llm.requests[1]!.find((m) => m.role === 'tool')?.content));
    expect(avail.slots).toHaveLength(2);
    const booked = JSON.parse(String(w.llm.requests[2]!.filter((m) => m.role === 'tool').at(-1)?.content));
    expect(booked).toMatchObject({ booked: true, start: new Date(day + 10 * 3_600_000).toISOString() });
    expect(cal.bookings).toHaveLength(1);
    expect(cal.bookings[0]).toMatchObject({ eventTypeSlug: 'intro', attendees: [{ name: 'Ada Lovelace', email: 'ada@example.com' }] });
    await call.hangup();
  });

  it("with the engine's default guard, a custom endpoint on loopback is refused: the model hears why, Cal.com's stand-in receives nothing", async () => {
    cal = await CalcomStandIn.start();
    const date = new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 10);
    w = await world({
      tools: [
        {
          type: 'calendar_booking',
          data: { calendar_api_key: 'cal_test_key', calendar_event_slug: 'intro', calendar_endpoint: 'custom', calendar_custom_endpoint: cal.baseUrl, description: 'demos' },
        },
      ],
      // No allow-list: what SWITCHBOARD_OUTBOUND_ALLOW_CIDRS unset gives.
      deps: { calendar: { fetch: createOutbound().fetch } },
    });
    w.llm.queue.push({ toolCalls: [{ name: 'check_availability', arguments: { start_date: date } }] }, { content: 'The calendar is unavailable.' });
    const call = await w.call();
    await until(() => w!.tts.spoken.includes('The calendar is unavailable.'), 6000, 'apology spoken');
    const result = JSON.parse(String(w.llm.requests[1]!.find((m) => m.role === 'tool')?.content));
    expect(result).toEqual({
      error: 'The calendar could not be reached or refused: Cal.com could not be reached: refused to connect: 127.0.0.1 is a loopback address (customer URLs may only reach public addresses)',
    });
    expect(cal.requests).toHaveLength(0);
    await call.hangup();
  });
});
