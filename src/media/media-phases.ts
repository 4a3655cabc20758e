/**
 * How the media clock spreads calls over a 20 ms frame. Three places must agree on it: the clock
 * that runs the passes (media-clock.ts), the outbound path that hands each packet over one phase
 * before it is due (rtp-session-outbound.ts, SEND_LEAD_MS), and the RTP I/O thread that plans its
 * wake-ups on the same grid (rtp-io/protocol.ts). A module of its own, so the thread need not load
 * the clock to know it.
 */

/** Sub-slots of the interval that sessions are spread over (media-clock.ts explains why two). */
export const PHASES = 2;

/** Time between two passes at 20 ms ptime (10 ms). */
export const PHASE_MS = 20 / PHASES;
