// PostgreSQL twin of ../007-webhook-secret-rotation.ts.
/**
 * Webhook signing-secret rotation: the secret replaced by the last rotation keeps signing, beside
 * the new one, until `webhook_secret_previous_until` (epoch ms). Both columns hold the secret
 * sealed (src/store/secrets.ts), like `webhook_secret` once the engine has sealed the plain
 * secrets older builds stored.
 */
export const sql = `
ALTER TABLE accounts ADD COLUMN webhook_secret_previous TEXT;
ALTER TABLE accounts ADD COLUMN webhook_secret_previous_until BIGINT;
`;
