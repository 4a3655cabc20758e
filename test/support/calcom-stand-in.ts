import type http from 'node:http';
import { listen, readBody } from './http-util.ts';

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

export interface StandInEventType {
  slug: string;
  lengthInMinutes: number;
  /** Owner: a username, or a team slug. */
  username?: string;
  teamSlug?: string;
  /** Booking fields Cal.com would require in bookingFieldsResponses. */
  requiredFields?: string[];
}

export interface StandInBooking {
  id: number;
  uid: string;
  start: string;
  end: string;
  status: 'accepted';
  title: string;
  attendees: { name: string; email: string; timeZone: string; phoneNumber?: string }[];
  bookingFieldsResponses: Record<string, unknown>;
  eventTypeSlug: string;
}

const SLOTS_VERSION = '2024-09-04';
const BOOKINGS_VERSION = '2024-08-13';

/**
 * A stand-in for the Cal.com API v2 endpoints the calendar tool uses: GET /v2/me, GET
 * /v2/slots, POST /v2/bookings. Faithful where a client can get it wrong: Bearer auth (401),
 * the cal-api-version each endpoint needs (400 otherwise), event type addressed by slug plus
 * username or teamSlug (404), start in UTC and on a free slot, attendee fields and required
 * booking fields (400), error bodies `{status: 'error', error: {code, message}}`. Slots are
 * answered as `{status: 'success', data: {"YYYY-MM-DD": [{start}]}}` with the offset of the
 * requested timeZone; a booked slot disappears from later answers.
 */
export class CalcomStandIn {
  readonly requests: RecordedRequest[] = [];
  readonly bookings: StandInBooking[] = [];
  apiKey = 'cal_test_key';
  me = { id: 7, username: 'sam', email: 'sam@example.com', timeZone: 'Europe/Berlin' };
  eventTypes: StandInEventType[] = [
    { slug: 'intro', lengthInMinutes: 30, username: 'sam' },
    { slug: 'demo', lengthInMinutes: 45, teamSlug: 'sales', requiredFields: ['company'] },
  ];
  /** Free slot starts (UTC ms) offered for every event type. */
  freeSlots: number[] = [];
  /** Delay before answering, for timeout tests. */
  delayMs = 0;
  private server!: { url: string; close(): Promise<void> };
  private nextId = 100;

  static async start(): Promise<CalcomStandIn> {
    const s = new CalcomStandIn();
    s.server = await listen((req, res) => void s.handle(req, res));
    return s;
  }

  get baseUrl(): string {
    return this.server.url;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const text = await readBody(req);
    let body: unknown = undefined;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    this.requests.push({ method: req.method ?? '', path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers, body });
    if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
    const send = (status: number, payload: unknown) => {
      if (!res.destroyed) res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
    };
    const fail = (status: number, code: string, message: string) => send(status, { status: 'error', timestamp: new Date().toISOString(), path: url.pathname, error: { code, message } });

    if (req.headers.authorization !== `Bearer ${this.apiKey}`) return fail(401, 'UnauthorizedException', 'Invalid Access Token.');
    const route = `${req.method} ${url.pathname}`;
    if (route === 'GET /v2/me') return send(200, { status: 'success', data: this.me });
    if (route === 'GET /v2/slots') {
      if (req.headers['cal-api-version'] !== SLOTS_VERSION) return fail(400, 'BadRequestException', `cal-api-version must be ${SLOTS_VERSION} for slots`);
      const q = Object.fromEntries(url.searchParams);
      const et = this.find(q);
      if (!et) return fail(404, 'NotFoundException', 'Event type not found');
      if (!q.start || !q.end) return fail(400, 'BadRequestException', 'start and end are required');
      const from = Date.parse(q.start);
      // A bare end date includes that whole day.
      const to = /^\d{4}-\d{2}-\d{2}$/.test(q.end) ? Date.parse(q.end) + 86_400_000 : Date.parse(q.end);
      if (Number.isNaN(from) || Number.isNaN(to)) return fail(400, 'BadRequestException', 'start and end must be dates');
      const tz = q.timeZone ?? 'UTC';
      const data: Record<string, { start: string }[]> = {};
      for (const ms of this.free(et.slug)) {
        if (ms < from || ms >= to) continue;
        const iso = isoInZone(ms, tz);
        (data[iso.slice(0, 10)] ??= []).push({ start: iso });
      }
      return send(200, { status: 'success', data });
    }
    if (route === 'POST /v2/bookings') {
      if (req.headers['cal-api-version'] !== BOOKINGS_VERSION) return fail(400, 'BadRequestException', `cal-api-version must be ${BOOKINGS_VERSION} for bookings`);
      const b = (body ?? {}) as Record<string, unknown>;
      const et = this.find(b);
      if (!et) return fail(404, 'NotFoundException', 'Event type not found');
      const start = typeof b.start === 'string' ? b.start : '';
      if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/.test(start)) return fail(400, 'BadRequestException', 'start must be an ISO 8601 date in UTC');
      const a = (b.attendee ?? {}) as Record<string, unknown>;
      if (typeof a.name !== 'string' || !a.name) return fail(400, 'BadRequestException', 'attendee.name is required');
      if (typeof a.email !== 'string' || !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(a.email)) return fail(400, 'BadRequestException', 'attendee.email must be an email');
      if (typeof a.timeZone !== 'string' || !a.timeZone) return fail(400, 'BadRequestException', 'attendee.timeZone is required');
      const responses = (b.bookingFieldsResponses ?? {}) as Record<string, unknown>;
      for (const f of et.requiredFields ?? []) {
        if (responses[f] === undefined || responses[f] === '') return fail(400, 'BadRequestException', `bookingFieldsResponses.${f} is required`);
      }
      const ms = Date.parse(start);
      if (!this.free(et.slug).includes(ms)) return fail(400, 'BadRequestException', 'User either already has booking at this time or is not available');
      const booking: StandInBooking = {
        id: this.nextId++,
        uid: `bk_${this.nextId}`,
        start: new Date(ms).toISOString(),
        end: new Date(ms + et.lengthInMinutes * 60_000).toISOString(),
        status: 'accepted',
        title: `${et.slug} between ${this.me.username} and ${a.name}`,
        attendees: [{ name: a.name, email: a.email, timeZone: a.timeZone, ...(typeof a.phoneNumber === 'string' && { phoneNumber: a.phoneNumber }) }],
        bookingFieldsResponses: responses,
        eventTypeSlug: et.slug,
      };
      this.bookings.push(booking);
      return send(201, { status: 'success', data: booking });
    }
    return fail(404, 'NotFoundException', `Cannot ${route}`);
  }

  private find(q: Record<string, unknown>): StandInEventType | undefined {
    return this.eventTypes.find(
      (e) => e.slug === q.eventTypeSlug && ((e.teamSlug !== undefined && e.teamSlug === q.teamSlug) || (e.username !== undefined && e.username === q.username)),
    );
  }

  private free(slug: string): number[] {
    const taken = new Set(this.bookings.filter((b) => b.eventTypeSlug === slug).map((b) => Date.parse(b.start)));
    return this.freeSlots.filter((ms) => !taken.has(ms));
  }
}

/** `2050-09-05T09:00:00.000+02:00`: the wall time of `ms` in `timeZone` with its offset. */
export function isoInZone(ms: number, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' }).formatToParts(ms);
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value);
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  const offMin = Math.round((wall - Math.floor(ms / 1000) * 1000) / 60_000);
  const sign = offMin < 0 ? '-' : '+';
  const hh = String(Math.floor(Math.abs(offMin) / 60)).padStart(2, '0');
  const mm = String(Math.abs(offMin) % 60).padStart(2, '0');
  return `${new Date(wall).toISOString().slice(0, 19)}.000${sign}${hh}:${mm}`;
}
