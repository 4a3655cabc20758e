/**
 * The calendar-booking tool (`calendar_booking`) as two functions for the model:
 * `check_availability` (free slots between two dates) and `book_meeting` (one slot, with the
 * attendee's details validated against `calendar_booking_fields`), both through Cal.com.
 *
 * Field mapping (Cal.com's own convention): `name` and `email` go into `attendee`; the system
 * phone field `attendeePhoneNumber` goes into `attendee.phoneNumber`; every other field goes
 * into `bookingFieldsResponses` under its slug. A required phone field the caller did not give
 * defaults to the number they are calling from, which is what a phone assistant would use anyway.
 */
import type { BuiltinToolInput } from '../../assistants/tools.ts';
import type { AgentTool } from '../../agent/types.ts';
import { CalcomClient, CalcomError, type CalcomAttendee } from '../../integrations/calcom.ts';
import type { Clock } from '../../util/clock.ts';

type CalendarTool = Extract<BuiltinToolInput, { type: 'calendar_booking' }>;
type BookingField = CalendarTool['calendar_booking_fields'][number];

export const CHECK_AVAILABILITY_TOOL = 'check_availability';
export const BOOK_MEETING_TOOL = 'book_meeting';
const MAX_RANGE_DAYS = 14;
const MAX_SLOTS = 20;
const ATTENDEE_FIELDS = new Set(['name', 'email']);
const PHONE_SLUG = 'attendeePhoneNumber';

export interface CalendarToolDeps {
  clock: Clock;
  /** The assistant's time zone: dates the model names are read in it unless it says otherwise. */
  timeZone: string;
  callerNumber?: string | null;
  /** calendar_api_key is sealed at rest (ctx.secrets.open). */
  openSecret?: (sealed: string) => string;
  fetch?: typeof fetch;
  timeoutMs?: number;
  /** Injected client (tests); otherwise built from the tool on first use. */
  client?: CalcomClient;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Offset of `timeZone` from UTC at instant `ms`, in ms. */
export function zoneOffsetMs(ms: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' }).formatToParts(ms);
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value);
  return Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second')) - Math.floor(ms / 1000) * 1000;
}

/** An ISO time with an offset as is; a wall time without one (`2050-09-05T09:00`) read in `timeZone`. */
export function parseStart(value: string, timeZone: string): number | undefined {
  const s = value.trim();
  if (/([zZ]|[+-]\d{2}:?\d{2})$/.test(s)) {
    const ms = Date.parse(s);
    return Number.isNaN(ms) ? undefined : ms;
  }
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?$/.exec(s);
  if (!m) return undefined;
  const wall = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +(m[6] ?? 0));
  // Two passes: the offset at the guessed instant can differ from the offset at the answer
  // around a DST change.
  let utc = wall - zoneOffsetMs(wall, timeZone);
  utc = wall - zoneOffsetMs(utc, timeZone);
  return utc;
}

function fieldSchema(f: BookingField): Record<string, unknown> {
  const description = f.label;
  switch (f.type) {
    case 'email':
      return { type: 'string', format: 'email', description };
    case 'phone':
      return { type: 'string', description: `${description} (international format, e.g. +14155550123)` };
    case 'select':
    case 'radio':
      return { type: 'string', enum: f.options ?? [], description };
    case 'multiselect':
    case 'checkbox':
      return { type: 'array', items: { type: 'string', enum: f.options ?? [] }, description };
    case 'number':
      return { type: 'number', description };
    case 'boolean':
      return { type: 'boolean', description };
    default:
      return { type: 'string', description };
  }
}

/** Checks one value against its field; returns the value to send, or an error message. */
function checkField(f: BookingField, v: unknown): { value: unknown } | { error: string } {
  const options = f.options ?? [];
  const pick = (x: unknown) => (typeof x === 'string' ? options.find((o) => o.toLowerCase() === x.trim().toLowerCase()) : undefined);
  switch (f.type) {
    case 'email':
      return typeof v === 'string' && EMAIL.test(v.trim()) ? { value: v.trim() } : { error: `${f.label} must be an email address.` };
    case 'phone': {
      const compact = typeof v === 'string' ? v.replace(/[\s().-]/g, '') : '';
      return /^\+?\d{7,15}$/.test(compact) ? { value: compact } : { error: `${f.label} must be a phone number (7 to 15 digits, optionally with +).` };
    }
    case 'select':
    case 'radio': {
      const o = pick(v);
      return o !== undefined ? { value: o } : { error: `${f.label} must be one of: ${options.join(', ')}.` };
    }
    case 'multiselect':
    case 'checkbox': {
      const list = Array.isArray(v) ? v : [v];
      const picked = list.map(pick);
      return picked.every((o) => o !== undefined) ? { value: picked } : { error: `${f.label} must be chosen from: ${options.join(', ')}.` };
    }
    case 'number':
      return typeof v === 'number' || (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v))) ? { value: Number(v) } : { error: `${f.label} must be a number.` };
    case 'boolean':
      return typeof v === 'boolean' ? { value: v } : { error: `${f.label} must be true or false.` };
    default:
      return typeof v === 'string' || typeof v === 'number' ? { value: String(v).trim().slice(0, 2000) } : { error: `${f.label} must be text.` };
  }
}

export function calendarTools(tool: CalendarTool, deps: CalendarToolDeps): AgentTool[] {
  let client = deps.client;
  const calcom = () =>
    (client ??= new CalcomClient({
      apiKey: deps.openSecret ? deps.openSecret(tool.calendar_api_key) : tool.calendar_api_key,
      endpoint: tool.calendar_endpoint,
      customEndpoint: tool.calendar_custom_endpoint,
      eventTypeSlug: tool.calendar_event_slug,
      teamSlug: tool.calendar_team_slug,
      ...(deps.timeoutMs !== undefined && { timeoutMs: deps.timeoutMs }),
      ...(deps.fetch && { fetch: deps.fetch }),
    }));
  const zoneOf = (v: unknown): string | undefined => (v === undefined || v === null || v === '' ? deps.timeZone : typeof v === 'string' && isTimeZone(v) ? v : undefined);
  const failure = (err: unknown) => {
    if (err instanceof CalcomError) return { error: `The calendar could not be reached or refused: ${err.message}` };
    throw err;
  };
  const extra = tool.calendar_booking_fields.filter((f) => !ATTENDEE_FIELDS.has(f.slug));
  const tzProp = { time_zone: { type: 'string', description: `IANA time zone of the caller, e.g. Europe/Berlin (default ${deps.timeZone}).` } };

  const check: AgentTool = {
    spec: {
      name: CHECK_AVAILABILITY_TOOL,
      description: `Look up free meeting times in the calendar. ${tool.description ?? ''}`.trim(),
      parameters: {
        type: 'object',
        properties: {
          start_date: { type: 'string', description: 'First day to search, YYYY-MM-DD.' },
          end_date: { type: 'string', description: `Last day to search, YYYY-MM-DD (at most ${MAX_RANGE_DAYS} days after start_date; default start_date).` },
          ...tzProp,
        },
        required: ['start_date'],
      },
    },
    async run(args, signal) {
      const timeZone = zoneOf(args.time_zone);
      if (!timeZone) return { error: 'Invalid arguments: time_zone must be an IANA time zone such as Europe/Berlin.' };
      const start = typeof args.start_date === 'string' ? args.start_date.trim() : '';
      const end = typeof args.end_date === 'string' && args.end_date.trim() ? args.end_date.trim() : start;
      if (!DATE.test(start) || !DATE.test(end) || Number.isNaN(Date.parse(start)) || Number.isNaN(Date.parse(end))) {
        return { error: 'Invalid arguments: start_date and end_date must be dates as YYYY-MM-DD.' };
      }
      const days = (Date.parse(end) - Date.parse(start)) / 86_400_000;
      if (days < 0 || days > MAX_RANGE_DAYS) return { error: `Invalid arguments: end_date must be from start_date to ${MAX_RANGE_DAYS} days after it.` };
      const now = deps.clock.now();
      const today = new Date(now + zoneOffsetMs(now, timeZone)).toISOString().slice(0, 10);
      if (end < today) return { error: `Invalid arguments: those dates are in the past; today is ${today}.` };
      try {
        const slots = (await calcom().availableSlots({ start: start < today ? today : start, end, timeZone }, signal)).filter((s) => Date.parse(s.start) > now);
        return { time_zone: timeZone, slots: slots.slice(0, MAX_SLOTS).map((s) => s.start), more: slots.length > MAX_SLOTS };
      } catch (err) {
        return failure(err);
      }
    },
  };

  const fieldProps: Record<string, unknown> = {};
  for (const f of extra) fieldProps[f.slug] = fieldSchema(f);
  const required = ['start', 'name', 'email', ...extra.filter((f) => f.required && !(f.type === 'phone' && deps.callerNumber)).map((f) => f.slug)];
  const book: AgentTool = {
    spec: {
      name: BOOK_MEETING_TOOL,
      description: 'Book a meeting at one of the free times from check_availability, once the caller has confirmed the time and their details.',
      parameters: {
        type: 'object',
        properties: {
          start: { type: 'string', description: 'Start time exactly as returned by check_availability (ISO 8601).' },
          name: { type: 'string', description: "The caller's full name." },
          email: { type: 'string', format: 'email', description: "The caller's email address (spell it back to confirm)." },
          ...tzProp,
          ...fieldProps,
        },
        required,
      },
    },
    async run(args, signal) {
      const errors: Record<string, string> = {};
      const timeZone = zoneOf(args.time_zone);
      if (!timeZone) errors.time_zone = 'time_zone must be an IANA time zone such as Europe/Berlin.';
      const startMs = typeof args.start === 'string' ? parseStart(args.start, timeZone ?? deps.timeZone) : undefined;
      if (startMs === undefined) errors.start = 'start must be an ISO 8601 time such as 2050-09-05T09:00:00+02:00.';
      else if (startMs <= deps.clock.now()) errors.start = 'start is in the past.';
      const name = typeof args.name === 'string' ? args.name.trim() : '';
      if (!name) errors.name = 'name is required.';
      const email = typeof args.email === 'string' ? args.email.trim() : '';
      if (!EMAIL.test(email)) errors.email = 'email must be an email address.';
      const responses: Record<string, unknown> = {};
      for (const f of extra) {
        let v = args[f.slug];
        if ((v === undefined || v === null || v === '') && f.type === 'phone' && deps.callerNumber) v = deps.callerNumber;
        if (v === undefined || v === null || v === '') {
          if (f.required) errors[f.slug] = `${f.label} is required.`;
          continue;
        }
        const r = checkField(f, v);
        if ('error' in r) errors[f.slug] = r.error;
        else responses[f.slug] = r.value;
      }
      if (Object.keys(errors).length > 0) return { error: `Invalid arguments: ${Object.values(errors).join(' ')}`, fields: errors };
      const attendee: CalcomAttendee = { name, email, timeZone: timeZone! };
      const phone = responses[PHONE_SLUG];
      if (typeof phone === 'string') {
        attendee.phoneNumber = phone;
        delete responses[PHONE_SLUG];
      }
      try {
        const b = await calcom().createBooking({ start: new Date(startMs!).toISOString(), attendee, bookingFieldsResponses: responses }, signal);
        return { booked: true, booking_uid: b.uid, start: b.start, end: b.end, status: b.status };
      } catch (err) {
        return failure(err);
      }
    },
  };
  return [check, book];
}
