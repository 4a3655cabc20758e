/**
 * Cal.com API v2 client for the calendar-booking tool: free slots of one event type and
 * bookings of it. Only what the tool needs:
 *
 * - GET  /v2/slots     (cal-api-version 2024-09-04) eventTypeSlug + username | teamSlug, start,
 *   end, timeZone → `{status, data: {"YYYY-MM-DD": [{start}]}}`.
 * - POST /v2/bookings  (cal-api-version 2024-08-13) {start (UTC), eventTypeSlug, username |
 *   teamSlug, attendee {name, email, timeZone, phoneNumber?}, bookingFieldsResponses}.
 * - GET  /v2/me: the stored tool has an event slug and an API key but no username; a personal
 *   event type is addressed by its owner's username, which is the key's user. Asked once, cached.
 *
 * Auth is `Authorization: Bearer <key>`. Regions: us → https://api.cal.com, eu →
 * https://api.cal.eu, custom → calendar_custom_endpoint (a self-hosted Cal.com; a trailing /v2
 * is tolerated). Every request has a timeout; failures are CalcomError with the HTTP status,
 * Cal.com's message, and whether retrying could help.
 */
import { ProviderError } from '../util/errors.ts';
import { defaultOutbound, outboundRefusal } from '../net/outbound/index.ts';

export type CalcomEndpoint = 'us' | 'eu' | 'custom';

export const CALCOM_BASE_URLS: Readonly<Record<'us' | 'eu', string>> = Object.freeze({
  us: 'https://api.cal.com',
  eu: 'https://api.cal.eu',
});
export const SLOTS_API_VERSION = '2024-09-04';
export const BOOKINGS_API_VERSION = '2024-08-13';
const DEFAULT_TIMEOUT_MS = 10_000;

export class CalcomError extends ProviderError {
  constructor(
    message: string,
    /** HTTP status from Cal.com; 0 when there was no answer (timeout, network). */
    readonly httpStatus: number,
    retryable: boolean,
    readonly calCode?: string,
  ) {
    super(message, 'calcom', retryable);
  }
}

export interface CalcomOptions {
  apiKey: string;
  endpoint: CalcomEndpoint;
  customEndpoint?: string | null;
  eventTypeSlug: string;
  teamSlug?: string | null;
  /** Owner of a personal event type; looked up through /v2/me when absent. */
  username?: string | null;
  organizationSlug?: string | null;
  timeoutMs?: number;
  /** The guarded fetch for customer URLs (a custom endpoint is one); default: the guard without an allow-list. */
  fetch?: typeof fetch;
}

export interface CalcomSlot {
  /** ISO 8601 with the offset of the requested time zone. */
  start: string;
  end?: string;
}

export interface CalcomAttendee {
  name: string;
  email: string;
  timeZone: string;
  phoneNumber?: string;
  language?: string;
}

export interface CalcomBooking {
  id: number;
  uid: string;
  start: string;
  end: string;
  status: string;
  title?: string;
}

export function calcomBaseUrl(endpoint: CalcomEndpoint, customEndpoint?: string | null): string {
  if (endpoint !== 'custom') return CALCOM_BASE_URLS[endpoint];
  if (!customEndpoint) throw new CalcomError('The calendar custom endpoint is not set.', 0, false);
  return customEndpoint.replace(/\/+$/, '').replace(/\/v2$/, '');
}

export class CalcomClient {
  readonly baseUrl: string;
  private username: string | undefined;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly opts: CalcomOptions) {
    this.baseUrl = calcomBaseUrl(opts.endpoint, opts.customEndpoint);
    this.username = opts.username ?? undefined;
    this.fetchImpl = opts.fetch ?? defaultOutbound().fetch;
  }

  /**
   * Free start times between two dates (`YYYY-MM-DD`, or full ISO times), presented in
   * `timeZone`, earliest first.
   */
  async availableSlots(range: { start: string; end: string; timeZone: string }, signal?: AbortSignal): Promise<CalcomSlot[]> {
    const query: Record<string, string> = { ...(await this.owner(signal)), start: range.start, end: range.end, timeZone: range.timeZone };
    const body = await this.request('GET', '/v2/slots', { query, version: SLOTS_API_VERSION }, signal);
    const data = (body as { data?: unknown }).data;
    if (!data || typeof data !== 'object' || Array.isArray(data)) throw new CalcomError('Cal.com answered slots without a data object.', 200, true);
    const out: CalcomSlot[] = [];
    for (const day of Object.values(data as Record<string, unknown>)) {
      if (!Array.isArray(day)) continue;
      for (const s of day as { start?: unknown; end?: unknown }[]) {
        if (typeof s?.start === 'string') out.push({ start: s.start, ...(typeof s.end === 'string' && { end: s.end }) });
      }
    }
    return out.sort((a, b) => Date.parse(a.start) - Date.parse(b.start));
  }

  /** Books `start` (any ISO time with an offset; sent as UTC as Cal.com requires). */
  async createBooking(
    input: { start: string; attendee: CalcomAttendee; bookingFieldsResponses?: Record<string, unknown>; metadata?: Record<string, string> },
    signal?: AbortSignal,
  ): Promise<CalcomBooking> {
    const ms = Date.parse(input.start);
    if (Number.isNaN(ms)) throw new CalcomError(`Not a valid start time: ${input.start}`, 0, false);
    const payload = {
      start: new Date(ms).toISOString(),
      ...(await this.owner(signal)),
      attendee: input.attendee,
      ...(input.bookingFieldsResponses && Object.keys(input.bookingFieldsResponses).length > 0 && { bookingFieldsResponses: input.bookingFieldsResponses }),
      ...(input.metadata && { metadata: input.metadata }),
    };
    const body = await this.request('POST', '/v2/bookings', { body: payload, version: BOOKINGS_API_VERSION }, signal);
    const d = (body as { data?: Record<string, unknown> }).data;
    if (!d || typeof d.uid !== 'string') throw new CalcomError('Cal.com answered the booking without a booking.', 200, false);
    return {
      id: Number(d.id),
      uid: d.uid,
      start: String(d.start ?? payload.start),
      end: String(d.end ?? ''),
      status: String(d.status ?? 'accepted'),
      ...(typeof d.title === 'string' && { title: d.title }),
    };
  }

  /** Which event type: the team's, else the API key owner's (one /v2/me, then cached). */
  private async owner(signal?: AbortSignal): Promise<Record<string, string>> {
    const o = this.opts;
    const base: Record<string, string> = { eventTypeSlug: o.eventTypeSlug, ...(o.organizationSlug && { organizationSlug: o.organizationSlug }) };
    if (o.teamSlug) return { ...base, teamSlug: o.teamSlug };
    if (!this.username) {
      const me = (await this.request('GET', '/v2/me', {}, signal)) as { data?: { username?: unknown } };
      if (typeof me.data?.username !== 'string' || !me.data.username) throw new CalcomError('Cal.com did not tell the username of the API key.', 200, false);
      this.username = me.data.username;
    }
    return { ...base, username: this.username };
  }

  private async request(
    method: 'GET' | 'POST',
    path: string,
    req: { query?: Record<string, string>; body?: unknown; version?: string },
    signal?: AbortSignal,
  ): Promise<unknown> {
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(req.query ?? {})) url.searchParams.set(k, v);
    const timeoutMs = this.opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const timeout = AbortSignal.timeout(timeoutMs);
    const headers: Record<string, string> = { authorization: `Bearer ${this.opts.apiKey}`, accept: 'application/json' };
    if (req.version) headers['cal-api-version'] = req.version;
    if (req.body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await this.fetchImpl(url, {
        method,
        headers,
        ...(req.body !== undefined && { body: JSON.stringify(req.body) }),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      if (timeout.aborted) throw new CalcomError(`Cal.com did not answer within ${timeoutMs} ms (${method} ${path}).`, 0, true);
      // A custom endpoint that leads to an internal address: asking again will not change that.
      if (outboundRefusal(err)) throw new CalcomError(`Cal.com could not be reached: ${(err as Error).message}`, 0, false);
      throw new CalcomError(`Cal.com could not be reached: ${(err as Error).message}`, 0, true);
    }
    const text = await res.text();
    let body: unknown = undefined;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON (a proxy's HTML error page): the status tells enough.
    }
    if (res.ok) return body ?? {};
    const err = (body as { error?: { code?: unknown; message?: unknown }; message?: unknown } | undefined) ?? {};
    const detail = typeof err.error?.message === 'string' ? err.error.message : typeof err.message === 'string' ? err.message : text.slice(0, 200);
    const code = typeof err.error?.code === 'string' ? err.error.code : undefined;
    const what =
      res.status === 401 || res.status === 403
        ? 'Cal.com rejected the calendar API key'
        : res.status === 404
          ? 'Cal.com does not know this event type or owner'
          : `Cal.com answered ${res.status}`;
    throw new CalcomError(`${what}${detail ? `: ${detail}` : ''}`, res.status, res.status >= 500 || res.status === 429, code);
  }
}
