/**
 * Calling hours of a campaign: a daily local-time window and optional weekdays. `start`/`end`
 * are `HH:MM` (24 h); the window includes start and excludes end; `end` before `start` means
 * the window runs past midnight (22:00–02:00). `days` are ISO weekdays, 1 = Monday … 7 = Sunday;
 * for an overnight window the day is the one the window started on. `timezone` (IANA) defaults
 * to the assistant's time zone.
 */
export interface CallingHours {
  start: string;
  end: string;
  days?: number[];
  timezone?: string;
}

export const HHMM = /^([01]\d|2[0-3]):[0-5]\d$/;

export function minutesOf(hhmm: string): number {
  const [h = '0', m = '0'] = hhmm.split(':');
  return Number(h) * 60 + Number(m);
}

export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const WEEKDAYS: Record<string, number> = { Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6, Sun: 7 };

/** Local ISO weekday and minute of the day of `ms` in `timeZone`. */
function localTime(ms: number, timeZone: string): { day: number; minute: number } {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(ms);
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? '';
  return { day: WEEKDAYS[get('weekday')] ?? 1, minute: Number(get('hour')) * 60 + Number(get('minute')) };
}

/** Whether a call may be placed at `ms`; no calling hours means any time. */
export function withinCallingHours(hours: CallingHours | null | undefined, ms: number, defaultTimeZone = 'UTC'): boolean {
  if (!hours) return true;
  const { day, minute } = localTime(ms, hours.timezone ?? defaultTimeZone);
  const start = minutesOf(hours.start);
  const end = minutesOf(hours.end);
  const dayOk = (d: number) => !hours.days || hours.days.length === 0 || hours.days.includes(d);
  if (start < end) return minute >= start && minute < end && dayOk(day);
  // Overnight: the early-morning part belongs to the previous day's window.
  if (minute >= start) return dayOk(day);
  if (minute < end) return dayOk(day === 1 ? 7 : day - 1);
  return false;
}
