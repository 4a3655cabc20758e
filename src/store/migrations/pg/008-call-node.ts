/** PostgreSQL twin of ../008-call-node.ts: which engine node handled a call. */
export const sql = `
ALTER TABLE calls ADD COLUMN node_id TEXT;
`;
