import { describe, expect, it } from 'vitest';
import { isE164, sessionStatus, SESSION_WINDOW_MS } from '../../../src/chat/whatsapp-session.ts';
import { twilioSignature, validTwilioSignature } from '../../../src/chat/twilio.ts';

const T = 1_700_000_000_000;

describe('24-hour session status (pure)', () => {
  it('no customer message: closed, template required, expires_at only', () => {
    expect(sessionStatus(null, T)).toEqual({
      is_open: false,
      can_send_freeform: false,
      requires_template: true,
      message: expect.any(String),
      expires_at: new Date(T).toISOString(),
    });
  });

  it('open: minutes rounded down, expires_at 24 h after the last customer message', () => {
    const s = sessionStatus(T, T + 90_500);
    expect(s).toEqual({
      is_open: true,
      can_send_freeform: true,
      requires_template: false,
      message: expect.any(String),
      minutes_remaining: 1438,
      expires_at: new Date(T + SESSION_WINDOW_MS).toISOString(),
    });
    expect(sessionStatus(T, T + SESSION_WINDOW_MS - 1)).toMatchObject({ is_open: true, minutes_remaining: 0 });
  });

  it('expired at exactly 24 h: expired_at only; a newer customer message reopens', () => {
    expect(sessionStatus(T, T + SESSION_WINDOW_MS)).toEqual({
      is_open: false,
      can_send_freeform: false,
      requires_template: true,
      message: expect.any(String),
      expired_at: new Date(T + SESSION_WINDOW_MS).toISOString(),
    });
    expect(sessionStatus(T + SESSION_WINDOW_MS + 5, T + SESSION_WINDOW_MS + 5).is_open).toBe(true);
  });

  it('E.164 check', () => {
    expect(['+14155550100', '+491701234567'].every(isE164)).toBe(true);
    expect(['14155550100', '+0123456789', '+1 415 555', '+1234', '+1234567890123456'].some(isE164)).toBe(false);
  });
});

describe('Twilio request signature', () => {
  const params = { CallSid: 'CA1234567890ABCDE', Caller: '+12349013030', Digits: '1234', From: '+12349013030', To: '+18005551212' };
  const url = 'https://mycompany.com/myapp.php?foo=1&bar=2';

  it('matches Twilio’s documented example', () => {
    expect(twilioSignature('12345', url, params)).toBe('0/KCTR6DLpKmkAf8muzZqo1nDgQ=');
  });

  it('validates both ways', () => {
    const sig = twilioSignature('12345', url, params);
    expect(validTwilioSignature('12345', url, params, sig)).toBe(true);
    expect(validTwilioSignature('12345', url, { ...params, Digits: '9' }, sig)).toBe(false);
    expect(validTwilioSignature('54321', url, params, sig)).toBe(false);
    expect(validTwilioSignature('12345', `${url}&x=1`, params, sig)).toBe(false);
    expect(validTwilioSignature('12345', url, params, undefined)).toBe(false);
    expect(validTwilioSignature('12345', url, params, 'short')).toBe(false);
  });
});
