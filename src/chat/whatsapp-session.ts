/** WhatsApp allows freeform messages for 24 hours after the customer's last message. */
export const SESSION_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface SessionStatus {
  is_open: boolean;
  can_send_freeform: boolean;
  requires_template: boolean;
  message: string;
  /** Only while open. */
  minutes_remaining?: number;
  /** While open (when it will close), or with no customer message at all (now: nothing to extend). */
  expires_at?: string;
  /** Only once expired. */
  expired_at?: string;
}

/**
 * The spec's 24-hour session state machine as a pure function of the last customer message and
 * the time: every customer message restarts the window (the caller stores its time), so "reset"
 * and "reopen" need no state of their own. Minutes remaining are rounded down, never promising
 * time that is not there; the window is closed at exactly 24 hours.
 */
export function sessionStatus(lastCustomerMessageAt: number | null, now: number): SessionStatus {
  if (lastCustomerMessageAt === null) {
    return {
      is_open: false,
      can_send_freeform: false,
      requires_template: true,
      message: 'No message from this customer yet: start the conversation with a template message.',
      expires_at: new Date(now).toISOString(),
    };
  }
  const closesAt = lastCustomerMessageAt + SESSION_WINDOW_MS;
  if (now < closesAt) {
    const minutes = Math.floor((closesAt - now) / 60_000);
    return {
      is_open: true,
      can_send_freeform: true,
      requires_template: false,
      message: `Session open: freeform messages can be sent for ${minutes} more minute${minutes === 1 ? '' : 's'}.`,
      minutes_remaining: minutes,
      expires_at: new Date(closesAt).toISOString(),
    };
  }
  return {
    is_open: false,
    can_send_freeform: false,
    requires_template: true,
    message: 'Session expired: more than 24 hours since the customer last wrote. Use a template message.',
    expired_at: new Date(closesAt).toISOString(),
  };
}

/** E.164: a plus, a non-zero digit, 7 to 15 digits in all. */
export function isE164(phone: string): boolean {
  return /^\+[1-9]\d{6,14}$/.test(phone);
}
