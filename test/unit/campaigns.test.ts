import { describe, expect, it } from 'vitest';
import { isCampaignAction, transition, type CampaignAction, type CampaignStatus } from '../../src/campaigns/state.ts';
import { withinCallingHours } from '../../src/campaigns/calling-hours.ts';

describe('campaign state table', () => {
  const allowed: Array<[CampaignStatus, CampaignAction, CampaignStatus]> = [
    ['draft', 'start', 'in-progress'],
    ['stopped', 'start', 'in-progress'],
    ['in-progress', 'stop', 'stopped'],
    ['draft', 'stop', 'stopped'],
  ];
  it.each(allowed)('%s --%s--> %s', (from, action, to) => {
    expect(transition(from, action)).toEqual({ ok: true, next: to });
  });

  it.each([
    ['in-progress', 'start', 'already_in_progress'],
    ['stopped', 'stop', 'already_stopped'],
    ['completed', 'start', 'completed'],
    ['completed', 'stop', 'completed'],
  ] as Array<[CampaignStatus, CampaignAction, string]>)('%s --%s--> refused (%s)', (from, action, reason) => {
    const t = transition(from, action);
    expect(t.ok).toBe(false);
    if (!t.ok) {
      expect(t.reason).toBe(reason);
      expect(t.message).toMatch(/campaign/i);
    }
  });

  it('knows its actions', () => {
    expect(isCampaignAction('start')).toBe(true);
    expect(isCampaignAction('stop')).toBe(true);
    expect(isCampaignAction('pause')).toBe(false);
    expect(isCampaignAction(undefined)).toBe(false);
  });
});

describe('calling hours', () => {
  // 2024-01-01 is a Monday.
  const at = (iso: string) => Date.parse(iso);
  it('no calling hours means any time', () => {
    expect(withinCallingHours(null, at('2024-01-01T03:00:00Z'))).toBe(true);
  });
  it('is a local-time window, start inclusive, end exclusive', () => {
    const h = { start: '09:00', end: '17:00', timezone: 'America/New_York' };
    expect(withinCallingHours(h, at('2024-01-01T14:00:00Z'))).toBe(true); // 09:00 local
    expect(withinCallingHours(h, at('2024-01-01T13:59:00Z'))).toBe(false);
    expect(withinCallingHours(h, at('2024-01-01T22:00:00Z'))).toBe(false); // 17:00 local
  });
  it('honours ISO weekdays and the default time zone', () => {
    const h = { start: '09:00', end: '17:00', days: [1, 2, 3, 4, 5] };
    expect(withinCallingHours(h, at('2024-01-05T10:00:00Z'), 'UTC')).toBe(true); // Friday
    expect(withinCallingHours(h, at('2024-01-06T10:00:00Z'), 'UTC')).toBe(false); // Saturday
    expect(withinCallingHours(h, at('2024-01-06T10:00:00Z'), 'Pacific/Kiritimati')).toBe(false); // Sunday there
  });
  it('supports windows past midnight, counting them to the day they start', () => {
    const h = { start: '22:00', end: '02:00', days: [5] };
    expect(withinCallingHours(h, at('2024-01-05T23:00:00Z'))).toBe(true); // Friday 23:00
    expect(withinCallingHours(h, at('2024-01-06T01:00:00Z'))).toBe(true); // Saturday 01:00, Friday's window
    expect(withinCallingHours(h, at('2024-01-06T23:00:00Z'))).toBe(false); // Saturday's window: not a listed day
    expect(withinCallingHours(h, at('2024-01-05T12:00:00Z'))).toBe(false);
  });
});
