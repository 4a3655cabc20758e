// PostgreSQL twin of ../006-trunk-srtp.ts.
/**
 * A trunk's SRTP policy (SDES, RFC 4568): 'off' (plain RTP, what every trunk did before),
 * 'offered' (best-effort SRTP) or 'required'.
 */
export const sql = `
ALTER TABLE sip_trunks ADD COLUMN srtp TEXT NOT NULL DEFAULT 'off';
`;
