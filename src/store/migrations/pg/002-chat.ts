// PostgreSQL twin of ../002-chat.ts.
/**
 * Chat conversations end after their assistant's inactivity timeout. The deadline is stored with
 * every message so a sweeper finds due conversations by index after any restart, without reading
 * each assistant's configuration; `ended_reason` says why a conversation ended.
 */
export const sql = `
ALTER TABLE conversations ADD COLUMN inactivity_deadline BIGINT;
ALTER TABLE conversations ADD COLUMN ended_reason TEXT;
CREATE INDEX conversations_inactivity ON conversations(status, inactivity_deadline);
`;
