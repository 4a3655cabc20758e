/** PostgreSQL twin of ../009-conversations-by-account.ts: an account's conversations, newest activity first. */
export const sql = `
CREATE INDEX conversations_account ON conversations(account_id, last_message_at);
`;
