// PostgreSQL twin of ../003-call-heartbeat.ts.
/**
 * A live call's record is stamped alive every heartbeat period (src/call/call-heartbeat.ts), so
 * a call cut by a crash is closed on the next start at its last sign of life and billed by that
 * length, instead of at its answer time.
 */
export const sql = `
ALTER TABLE calls ADD COLUMN last_alive_at BIGINT;
`;
