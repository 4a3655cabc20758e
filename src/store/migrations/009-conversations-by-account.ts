/**
 * GET /user/conversations lists an account's conversations, most recently active first: an index
 * in that order keeps a page of it from scanning every account's conversations.
 */
export const sql = `
CREATE INDEX conversations_account ON conversations(account_id, last_message_at);
`;
