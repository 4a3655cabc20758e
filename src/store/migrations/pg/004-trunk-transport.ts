// PostgreSQL twin of ../004-trunk-transport.ts.
/**
 * A trunk may name its SIP transport (`udp`, `tcp`, `tls`); NULL keeps RFC 3263's choice from
 * DNS, as before the column existed.
 */
export const sql = `
ALTER TABLE sip_trunks ADD COLUMN transport TEXT;
`;
