// PostgreSQL twin of ../005-trunk-media-nat.ts (a 0/1 flag, as on SQLite).
/**
 * Per-trunk media NAT learning (`media_nat`): whether a call's RTP source may be learned even
 * where the SDP names a public address (src/media/source-filter.ts). Off for every existing
 * trunk: media is then taken only from the SDP address, unless that address is private.
 */
export const sql = `
ALTER TABLE sip_trunks ADD COLUMN media_nat INTEGER NOT NULL DEFAULT 0;
`;
