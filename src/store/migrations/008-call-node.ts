/**
 * Which engine node handled a call (SWITCHBOARD_NODE_ID), so a record read from a store shared by
 * several nodes says where to look for its logs. Older rows keep NULL: they came from one node.
 */
export const sql = `
ALTER TABLE calls ADD COLUMN node_id TEXT;
`;
